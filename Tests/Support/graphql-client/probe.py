"""Sends a WebSocket client's messages as given, for the server's tests, and says what came back.

    python3 probe.py HOST PORT PATH SECONDS [MESSAGE...]

Upgrades PATH to graphql-transport-ws on a plain socket (rawws.py), sends each MESSAGE (a text
frame of it as given), then prints what the server sends, one JSON line each: {"text": message}
or {"close": [code, reason]}, until it closes or SECONDS pass, then {"seconds": elapsed}.
"""
import json
import socket
import sys
import time

from rawws import RawWebSocket

host, port, path, seconds, messages = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5:]
started = time.monotonic()
ws = RawWebSocket(host, port, path, timeout=seconds)
for m in messages:
    ws.send(m)
try:
    while time.monotonic() - started < seconds:
        kind, value = ws.receive()
        if kind == "text":
            print(json.dumps({"text": value}), flush=True)
        elif kind == "close":
            print(json.dumps({"close": list(value)}), flush=True)
            break
except (socket.timeout, EOFError, OSError) as e:
    print(json.dumps({"ended": str(e)}), flush=True)
print(json.dumps({"seconds": round(time.monotonic() - started, 2)}), flush=True)
