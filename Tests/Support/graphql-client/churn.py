"""Subscribes and completes, again and again, with a different request each time, for the server's
tests (a client that costs the server nothing it keeps, if the server keeps nothing for it).

    python3 churn.py HOST PORT PATH TOKEN QUERY CYCLES

On one connection (graphql-transport-ws, rawws.py), CYCLES times: subscribes to QUERY with
an alias of its own (`q<i>: QUERY`), reads the first answer, completes. Prints {"cycles": n}.
"""
import json
import sys

from rawws import RawWebSocket

host, port, path, token, query, cycles = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], int(
    sys.argv[6])
ws = RawWebSocket(host, port, path)
ws.send({"type": "connection_init", "payload": {"Authorization": token}})
assert ws.receive() == ("text", {"type": "connection_ack"})
for i in range(cycles):
    ws.send({"type": "subscribe", "id": "x", "payload": {"query": f"subscription {{ q{i}: {query} }}"}})
    kind, message = ws.receive()
    assert kind == "text" and message["type"] == "next", (kind, message)
    ws.send({"type": "complete", "id": "x"})
print(json.dumps({"cycles": cycles}), flush=True)
