#!/usr/bin/env bash
# Installs the system packages realm-adapter builds and tests against.
# Idempotent; run as root on Debian (or with sudo). Safe to run again.
set -euo pipefail

# python3-psycopg2: the Python peer loader of the load benchmark (Benchmarks/peer);
# openssl: the self-signed certificate of the TLS test.
# gdb: where the threads of a hung test are (scripts/watchdog.sh).
# nginx: the load balancer in front of two `serve` replicas in the replica test.
# chromium, chromium-driver: the real browser Studio's tests drive (headless, through Selenium).
packages=(libsqlite3-dev libpq-dev freetds-dev freetds-bin postgresql postgresql-contrib python3-psycopg2 openssl gdb nginx
  chromium chromium-driver)

# prometheus-client (PyPI): the metrics test reads /metrics with Prometheus's own parser, in the
# python3 the tests run (the first on PATH).
if ! python3 -c 'import prometheus_client' 2>/dev/null; then
  echo "install-deps: installing prometheus-client (PyPI) for $(command -v python3)"
  python3 -m pip install -q prometheus-client 2>/dev/null \
    || python3 -m pip install -q --break-system-packages prometheus-client
fi
# gql with its requests and WebSocket transports (PyPI): the server's tests query it and
# subscribe through a GraphQL client nobody here wrote.
if ! python3 -c 'import gql, requests_toolbelt, websockets' 2>/dev/null; then
  echo "install-deps: installing gql[requests,websockets] (PyPI) for $(command -v python3)"
  python3 -m pip install -q 'gql[requests,websockets]==3.5.0' 2>/dev/null \
    || python3 -m pip install -q --break-system-packages 'gql[requests,websockets]==3.5.0'
fi
# PyJWT with its crypto extra (PyPI): the server's tests sign provider-jwt tokens as an app's
# own auth service would, with a library nobody here wrote.
if ! python3 -c 'import jwt, cryptography' 2>/dev/null; then
  echo "install-deps: installing pyjwt[crypto] (PyPI) for $(command -v python3)"
  python3 -m pip install -q 'pyjwt[crypto]==2.10.1' 2>/dev/null \
    || python3 -m pip install -q --break-system-packages 'pyjwt[crypto]==2.10.1'
fi

# aiosmtpd (PyPI): the real SMTP server the server's mail tests send password resets and
# confirmations to (Tests/Support/smtp-server/sink.py).
if ! python3 -c 'import aiosmtpd' 2>/dev/null; then
  echo "install-deps: installing aiosmtpd (PyPI) for $(command -v python3)"
  python3 -m pip install -q 'aiosmtpd==1.4.6' 2>/dev/null \
    || python3 -m pip install -q --break-system-packages 'aiosmtpd==1.4.6'
fi

# Selenium (PyPI): drives the browser in Studio's tests (Tests/Support/studio/studio.py).
if ! python3 -c 'import selenium' 2>/dev/null; then
  echo "install-deps: installing selenium (PyPI) for $(command -v python3)"
  python3 -m pip install -q 'selenium==4.51.0' 2>/dev/null \
    || python3 -m pip install -q --break-system-packages 'selenium==4.51.0'
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all system packages present (${packages[*]})"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
