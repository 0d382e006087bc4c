#!/usr/bin/env bash
# Builds the DocC documentation of the RealmAdapter library (Sources/RealmAdapter/RealmAdapter.docc)
# (.build/plugins/Swift-DocC/outputs/RealmAdapter.doccarchive), and fails on any documentation problem (a symbol link
# to something that no longer exists, an ambiguous one, a broken topic) except parameters left
# undocumented, which are many and harmless. scripts/test.sh runs it.
#
#   scripts/docs.sh
#   docc preview Sources/RealmAdapter/RealmAdapter.docc    # to read it locally (needs a symbol graph)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(swift package --disable-sandbox generate-documentation --target RealmAdapter 2>&1) || { echo "$out" >&2; exit 1; }
problems=$(echo "$out" | grep -E '^(warning|error):' | grep -v 'is missing documentation' || true)
if [ -n "$problems" ]; then
  echo "$out" | grep -E -A4 '^(warning|error):' | grep -v -B1 -A3 'is missing documentation' >&2 || true
  echo "docs.sh: the documentation has problems:" >&2
  echo "$problems" >&2
  exit 1
fi
echo "docs.sh: built .build/plugins/Swift-DocC/outputs/RealmAdapter.doccarchive"
