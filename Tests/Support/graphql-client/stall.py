"""A subscriber that stops reading, for the server's tests (a client on a slow network, or stuck).

    python3 stall.py HOST PORT PATH TOKEN QUERY LAST GO_FILE

Subscribes to QUERY at PATH over graphql-transport-ws, on a plain socket with a small receive
buffer, and prints {"ready": true} after its first answer. Then it reads nothing until GO_FILE
exists. Then it reads what the server sent meanwhile, until an answer contains LAST, and prints
{"answers": [...]}: for each answer, in the order received, the text of its first string value up
to the first "-". Exits 1 if LAST does not come within 60 s, or the server closes.

A plain socket (rawws.py), not a WebSocket library: libraries read on in the background into
queues of their own, and this client must leave the server's bytes unread.
"""
import json
import os
import sys
import time

from rawws import RawWebSocket

host, port, path, token, query, last, go = sys.argv[1], int(sys.argv[2]), *sys.argv[3:8]
ws = RawWebSocket(host, port, path, receive_buffer=4096)


def receive():
    while True:
        kind, value = ws.receive()
        if kind == "close":
            raise EOFError(f"the server closed: {value}")
        if kind == "text":
            return value


def first_string(value):
    if isinstance(value, str):
        return value
    for v in value.values() if isinstance(value, dict) else value if isinstance(value, list) else []:
        found = first_string(v)
        if found is not None:
            return found
    return None


ws.send({"type": "connection_init", "payload": {"Authorization": token}})
assert receive()["type"] == "connection_ack"
ws.send({"type": "subscribe", "id": "1", "payload": {"query": query}})
first = receive()
assert first["type"] == "next", first
print(json.dumps({"ready": True}), flush=True)
while not os.path.exists(go):
    time.sleep(0.05)
answers = []
try:
    while not answers or answers[-1] != last:
        m = receive()
        if m["type"] == "next":
            answers.append(first_string(m["payload"]).split("-")[0])
except (EOFError, OSError) as e:
    print(json.dumps({"answers": answers, "error": str(e)}), flush=True)
    sys.exit(1)
print(json.dumps({"answers": answers}), flush=True)
