"""A WebSocket client on a plain socket, for the server's tests: the tests decide when it reads.

Libraries read on in the background into queues of their own; these tests need a client that
leaves the server's bytes unread (stall.py), or that sends what no library would (probe.py).
"""
import base64
import json
import os
import socket
import struct


class RawWebSocket:
    def __init__(self, host, port, path, protocol="graphql-transport-ws", receive_buffer=None, timeout=60):
        self.s = socket.socket()
        if receive_buffer:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms waits for small messages
        self.s.connect((host, port))
        self.s.settimeout(timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Sec-WebSocket-Protocol: {protocol}\r\n\r\n".encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.s.recv(4096)
            if not chunk:
                raise EOFError("the server closed the connection during the upgrade")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise EOFError(f"no upgrade: {head!r}")

    def send(self, message, opcode=1):
        """Sends a text frame of `message` (JSON unless it is bytes or a str), masked as a client's are."""
        if isinstance(message, (dict, list)):
            message = json.dumps(message)
        data = message.encode() if isinstance(message, str) else message
        mask, n = os.urandom(4), len(data)
        if n < 126:
            length = bytes([0x80 | n])
        elif n < 65536:
            length = bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            length = bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.s.sendall(bytes([0x80 | opcode]) + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exactly(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError("the server closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def receive(self):
        """The next message: ("text", parsed JSON), ("close", (code, reason)) or ("other", opcode).
        A ping is answered with a pong, as a client must, and not returned."""
        while True:
            kind, value = self._frame()
            if kind != "ping":
                return kind, value
            self.send(value, opcode=10)

    def _frame(self):
        b0, b1 = self._exactly(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._exactly(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._exactly(8))[0]
        payload = self._exactly(n)
        opcode = b0 & 0x0F
        if opcode == 1:
            return "text", json.loads(payload)
        if opcode == 9:
            return "ping", payload
        if opcode == 8:
            code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None
            return "close", (code, payload[2:].decode(errors="replace"))
        return "other", opcode
