"""Signs a token as an app's own auth service would, with PyJWT (from PyPI), for the server's
provider-jwt tests.

    python3 sign.py PRIVATE-KEY-PEM ALGORITHM CLAIMS-JSON

ALGORITHM is one PyJWT knows (RS256, ES256, ...). Two forgeries are made by hand, since PyJWT
rightly refuses to make them: `none` (no signature) and `HS256-with-key` (HMAC keyed with the
bytes of the PEM file given, the classic confusion attack when that file is a public key).
CLAIMS-JSON may use "exp": "+N" or "-N" for N seconds from now.
"""
import base64
import hashlib
import hmac
import json
import sys
import time

import jwt

key_file, algorithm, claims = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for name in ("exp", "nbf", "iat"):
    if isinstance(claims.get(name), str):
        claims[name] = int(time.time()) + int(claims[name])
key = open(key_file, "rb").read()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


if algorithm == "none":
    head = b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    print(head + "." + b64(json.dumps(claims).encode()) + ".")
elif algorithm == "HS256-with-key":
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    signing_input = head + "." + b64(json.dumps(claims).encode())
    print(signing_input + "." + b64(hmac.new(key, signing_input.encode(), hashlib.sha256).digest()))
else:
    print(jwt.encode(claims, key, algorithm=algorithm))
