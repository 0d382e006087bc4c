"""An HTTP client on a plain socket, for the server's tests: it sends what no library would.

    python3 rawhttp.py MODE PORT [SECONDS]

Every mode talks to 127.0.0.1:PORT, waits at most SECONDS (default 5) in all, and prints one
JSON line: what came back (`status`, `head`), whether and when the server closed the
connection (`closed_after`, null if it did not within SECONDS), and for `big` whether the
body's sender was let go (`sender_done`: the server read the body or closed the connection).

Modes:
  big        POST /auth with Content-Length 20 MB and `Connection: close`, the body sent by a thread
  silent     connect and send nothing
  half       send half a request line, then nothing
  longline   a request line of 100 KB
  longhead   a request line of 100 bytes and 100 KB of header fields
"""
import json
import socket
import sys
import threading
import time

mode, port = sys.argv[1], int(sys.argv[2])
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
started = time.monotonic()
s = socket.create_connection(("127.0.0.1", port), timeout=seconds)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
sender = None
sender_done = threading.Event()


def send_body(size):
    chunk = b"x" * 65536
    try:
        sent = 0
        while sent < size:
            sent += s.send(chunk[: min(len(chunk), size - sent)])
    except OSError:
        pass  # the server closed the connection: what a client sees when its body is refused
    sender_done.set()


if mode == "big":
    size = 20 * 1024 * 1024
    s.sendall(
        f"POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\nConnection: close\r\n\r\n".encode())
    sender = threading.Thread(target=send_body, args=(size,), daemon=True)
    sender.start()
elif mode == "half":
    s.sendall(b"GET /graphql/sh")
elif mode == "longline":
    s.sendall(b"GET /graphql/shop?query=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
elif mode == "longhead":
    fields = b"".join(b"X-Filler-%d: %s\r\n" % (i, b"b" * 1000) for i in range(100))
    s.sendall(b"GET /graphql/shop HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields + b"\r\n")

received = b""
closed_after = None
while time.monotonic() - started < seconds:
    s.settimeout(max(0.01, seconds - (time.monotonic() - started)))
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        break
    except OSError:  # reset: closed, with what was sent before it
        chunk = b""
    if not chunk:
        closed_after = round(time.monotonic() - started, 2)
        break
    received += chunk

if sender is not None:
    sender_done.wait(max(0.0, seconds - (time.monotonic() - started)))
head = received.split(b"\r\n\r\n", 1)[0].decode("latin-1")
status_line = head.split("\r\n", 1)[0].split(" ")
print(json.dumps({
    "status": int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else None,
    "head": head[:500],
    "body": received.split(b"\r\n\r\n", 1)[-1][:500].decode("utf-8", "replace") if b"\r\n\r\n" in received else "",
    "closed_after": closed_after,
    "sender_done": sender_done.is_set() if sender is not None else None,
}, sort_keys=True))
