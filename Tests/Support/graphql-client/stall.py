"""A subscriber that stops reading, for the server's tests (a client on a slow network, or stuck).

    python3 stall.py HOST PORT PATH TOKEN QUERY LAST GO_FILE

Subscribes to QUERY at PATH over graphql-transport-ws, on a plain socket with a small receive
buffer, and prints {"ready": true} after its first answer. Then it reads nothing until GO_FILE
exists. Then it reads what the server sent meanwhile, until an answer contains LAST, and prints
{"answers": [...]}: for each answer, in the order received, the text of its first string value up
to the first "-". Exits 1 if LAST does not come within 60 s, or the server closes.

A plain socket, not a WebSocket library: libraries read on in the background into queues of
their own, and this client must leave the server's bytes unread.
"""
import base64
import json
import os
import socket
import struct
import sys
import time

host, port, path, token, query, last, go = sys.argv[1], int(sys.argv[2]), *sys.argv[3:8]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((host, port))
s.settimeout(60)
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(
    f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
    "Sec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n".encode())
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
head, buf = buf.split(b"\r\n\r\n", 1)
if b" 101 " not in head.split(b"\r\n")[0]:
    sys.exit(f"no upgrade: {head!r}")


def send(message):
    data, mask = json.dumps(message).encode(), os.urandom(4)
    n = len(data)
    length = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
    s.sendall(bytes([0x81]) + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def exactly(n):
    global buf
    while len(buf) < n:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError("the server closed the connection")
        buf += chunk
    out, buf = buf[:n], buf[n:]
    return out


def receive():
    b0, b1 = exactly(2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack(">H", exactly(2))[0]
    elif n == 127:
        n = struct.unpack(">Q", exactly(8))[0]
    payload = exactly(n)
    if b0 & 0x0F == 8:
        raise EOFError(f"the server closed: {payload!r}")
    return json.loads(payload)


def first_string(value):
    if isinstance(value, str):
        return value
    for v in value.values() if isinstance(value, dict) else value if isinstance(value, list) else []:
        found = first_string(v)
        if found is not None:
            return found
    return None


send({"type": "connection_init", "payload": {"Authorization": token}})
assert receive()["type"] == "connection_ack"
send({"type": "subscribe", "id": "1", "payload": {"query": query}})
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
