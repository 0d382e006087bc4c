#!/usr/bin/env bash
# A tour of the embedded Realm store (no database needed): write a Realm from a JSON file of
# instructions, look into it, follow it with the example connector (jsonl-mirror) while it
# changes, and check an adapter configuration. Safe to run again: it starts from a fresh store.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

echo "==> Building realm-adapter and the example connector"
swift build --product realm-adapter
swift build --product jsonl-mirror
bin="$(swift build --show-bin-path)"
cli="$bin/realm-adapter"

store=./demo-store
rm -rf "$store"
mkdir -p "$store"

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "Write a Realm: apply examples/demo/1-schema-and-tasks.json to /demo"
"$cli" realm apply /demo --store "$store" --file examples/demo/1-schema-and-tasks.json

step "What the store holds"
"$cli" realm list --store "$store"
"$cli" realm schema /demo --store "$store"

step "The objects, as JSON"
"$cli" realm dump /demo --store "$store"

step "Start the example connector: it mirrors every Realm into JSON-lines files"
"$bin/jsonl-mirror" "$store" "$store/mirror" 2>"$store/mirror.log" &
mirror=$!
trap 'kill "$mirror" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$store/mirror/demo.jsonl" ] && break; sleep 0.1; done
echo "mirror/demo.jsonl after the first transaction:"
cat "$store/mirror/demo.jsonl"

step "Change the Realm while the connector runs: examples/demo/2-edits.json"
"$cli" realm apply /demo --store "$store" --file examples/demo/2-edits.json
for _ in $(seq 1 100); do grep -q '"version":2' "$store/mirror/demo.jsonl" && break; sleep 0.1; done
echo "New lines the connector wrote for version 2:"
grep '"version":2' "$store/mirror/demo.jsonl"

step "A transaction that breaks the schema is rejected whole"
echo '[{"type":"SET","object_type":"Task","identity":1,"values":{"done":false}},
       {"type":"INSERT","object_type":"Task","identity":9,"values":{"id":9,"title":null}}]' \
  | "$cli" realm apply /demo --store "$store" -f - || echo "(exit code $?: nothing was written)"

step "History of /demo"
"$cli" realm history /demo --store "$store"

step "Stop the connector gracefully (SIGTERM)"
kill -TERM "$mirror"
wait "$mirror" || true
trap - EXIT
tail -n 2 "$store/mirror.log"

step "Check an adapter configuration (examples/config/bus-postgres.json)"
PGPASSWORD=demo "$cli" validate --config examples/config/bus-postgres.json

printf '\nDone. The store is in %s; try: %s realm --help\n' "$store" "$cli"
