"""Subscribes through gql's WebSocket transport, for the server's tests.

    python3 subscribe.py URL TOKEN QUERY COUNT [CLIENTS] [legacy]

Opens CLIENTS connections (default 1), each subscribing to QUERY, and prints each result as a
JSON line {"client": i, "result": ...}, flushed, then {"ready": true} once every client has its
first result. Ends when every client has COUNT results (exit 0), or when the server closes or
refuses one (a line {"closed": code, "reason": ...}, exit 3). The protocol is
graphql-transport-ws, the token in connection_init's payload as {"Authorization": ...}; with
`legacy`, the old graphql-ws (subscriptions-transport-ws) with {"token": ...}.
"""
import asyncio
import json
import sys

from gql import Client, gql
from gql.transport.websockets import WebsocketsTransport

url, token, query, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
clients = int(sys.argv[5]) if len(sys.argv) > 5 else 1
legacy = len(sys.argv) > 6 and sys.argv[6] == "legacy"


async def client(i, started):
    if legacy:
        transport = WebsocketsTransport(
            url=url, init_payload={"token": token}, subprotocols=[WebsocketsTransport.APOLLO_SUBPROTOCOL])
    else:
        transport = WebsocketsTransport(
            url=url, init_payload={"Authorization": token}, subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL])
    seen = 0
    async with Client(transport=transport, fetch_schema_from_transport=False) as session:
        async for result in session.subscribe(gql(query)):
            print(json.dumps({"client": i, "result": result}, sort_keys=True), flush=True)
            seen += 1
            if seen == 1:
                started.append(i)
                if len(started) == clients:
                    print(json.dumps({"ready": True}), flush=True)
            if seen >= count:
                return


async def main():
    started = []
    try:
        await asyncio.gather(*(client(i, started) for i in range(clients)))
    except Exception as e:  # the server closed or refused: say how
        code = getattr(e, "code", None) or getattr(getattr(e, "rcvd", None), "code", None)
        reason = getattr(getattr(e, "rcvd", None), "reason", None) or str(e)
        print(json.dumps({"closed": code, "reason": reason}), flush=True)
        return 3
    return 0


sys.exit(asyncio.run(main()))
