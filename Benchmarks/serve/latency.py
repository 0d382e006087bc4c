"""Commit-to-WebSocket latency for realm-adapter-bench serve.

    python3 latency.py URL TOKEN SUBSCRIBERS COMMITS

Opens SUBSCRIBERS graphql-transport-ws connections, each subscribing to the Realm's newest
Tick (`ticks(sortBy: "id", descending: true, take: 1) { id at }`), prints "ready" once every
one has its first result, then records, for each message it receives, now minus the tick's `at`
(the commit's wall-clock time in microseconds, written by the benchmark). When every
subscriber has seen tick COMMITS, prints the latencies' count, p50 and p99 in ms as JSON.
"""
import asyncio
import json
import sys
import time

import websockets

url, token, subscribers, commits = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
QUERY = 'subscription { ticks(sortBy: "id", descending: true, take: 1) { id at } }'
latencies = []


async def subscriber(started, go):
    async with websockets.connect(url, subprotocols=["graphql-transport-ws"], max_queue=None) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {"Authorization": token}}))
        assert json.loads(await ws.recv())["type"] == "connection_ack"
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": QUERY}}))
        first = True
        while True:
            message = json.loads(await ws.recv())
            now = time.time() * 1e6
            ticks = message["payload"]["data"]["ticks"]
            if first:
                first = False
                started.append(1)
                if len(started) == subscribers:
                    print("ready", flush=True)
                    go.set()
                continue
            if ticks:
                latencies.append((now - ticks[0]["at"]) / 1000)
                if ticks[0]["id"] >= commits:
                    return


async def main():
    started, go = [], asyncio.Event()
    # Connect in waves, so the server's accept queue is not the thing measured.
    tasks = []
    for i in range(subscribers):
        tasks.append(asyncio.create_task(subscriber(started, go)))
        if i % 50 == 49:
            await asyncio.sleep(0.05)
    await asyncio.gather(*tasks)
    latencies.sort()
    n = len(latencies)
    print(json.dumps({"messages": n, "p50": latencies[n // 2], "p99": latencies[min(n - 1, n * 99 // 100)]}), flush=True)


asyncio.run(main())
