#!/usr/bin/env python3
"""A webhook endpoint for the tests, with failures on demand (Python's own HTTP server).

    receiver.py LOG SECRET     prints the port it listens on (127.0.0.1), then serves until killed

Every request is appended to LOG as one JSON line: path, the Idempotency-Key header, whether
the X-Realm-Adapter-Signature header is the HMAC-SHA256 of the body under SECRET, the body.
What it answers depends on the path:
  /ok            200
  /fail/N        500 to the first N requests of each idempotency key, then 200
  /always-500    500
  /slow          answers 200 after 3 s
  /loop          302 to itself
  /endless       200, then a chunked body that never ends (64 KiB every 5 ms)
"""
import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log_path, secret = sys.argv[1], sys.argv[2].encode()
lock = threading.Lock()
seen = {}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        key = self.headers.get("Idempotency-Key")
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        with lock:
            seen[(self.path, key)] = seen.get((self.path, key), 0) + 1
            attempt = seen[(self.path, key)]
            with open(log_path, "a") as f:
                f.write(json.dumps({
                    "path": self.path, "key": key, "attempt": attempt,
                    "signed": self.headers.get("X-Realm-Adapter-Signature") == expected,
                    "auth": self.headers.get("Authorization"), "body": json.loads(body)}) + "\n")
        if self.path == "/slow":
            time.sleep(3)
        if self.path == "/endless":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"%x\r\n%s\r\n" % (65536, b"x" * 65536)
            try:
                while True:
                    self.wfile.write(chunk)
                    time.sleep(0.005)
            except (BrokenPipeError, ConnectionResetError):
                return
        if self.path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
        elif self.path == "/always-500" or (self.path.startswith("/fail/") and attempt <= int(self.path[6:])):
            self.send_response(500)
        else:
            self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
