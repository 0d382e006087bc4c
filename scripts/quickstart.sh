#!/usr/bin/env bash
# The main job, end to end: a local throwaway Postgres with logical replication, the legacy
# documentation's example schema (Bus, Driver, Schedule, Route) with data, a Realm seeded from
# it by the loader, the adapter daemon syncing both ways, and one change flowing each way; then
# the same daemon serving the Realm: a token with curl, a GraphQL query, and a subscription
# (gql, a Python client) receiving a change made in Postgres.
# Safe to run again: it starts from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

scripts/install-deps.sh

step "Building realm-adapter"
swift build --product realm-adapter
cli="$(swift build --show-bin-path)/realm-adapter"

step "Starting a throwaway Postgres with logical replication (scripts/pg.sh)"
eval "$(scripts/pg.sh start)"
psql() { command psql -X -q -v ON_ERROR_STOP=1 -h "$REALM_ADAPTER_PG_HOST" -p "$REALM_ADAPTER_PG_PORT" -U "$REALM_ADAPTER_PG_USER" "$@"; }

step "Creating the example database busdemo with its rows (examples/quickstart/busdemo*.sql)"
psql -d postgres -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'busdemo'" >/dev/null
psql -d postgres -c "DROP DATABASE IF EXISTS busdemo WITH (FORCE)" -c "CREATE DATABASE busdemo"
psql -d busdemo -f examples/quickstart/busdemo.sql
psql -d busdemo -f examples/quickstart/busdemo-data.sql

store=./demo-store
rm -rf "$store"
mkdir -p "$store"

step "Seeding the Realm /SQLDemo: realm-adapter load --config examples/quickstart/adapter.json"
"$cli" load --config examples/quickstart/adapter.json --dry-run
"$cli" load --config examples/quickstart/adapter.json
"$cli" realm list --store "$store"
"$cli" realm dump /SQLDemo --store "$store" --type Bus --type Driver

step "A user for the server: realm-adapter user add demo --admin (tokens are signed with REALM_ADAPTER_SIGNING_KEY)"
export REALM_ADAPTER_SIGNING_KEY="$(openssl rand -hex 32)"
echo "quickstart-password" | "$cli" user add demo --admin --config examples/quickstart/adapter.json

step "Starting the adapter daemon: realm-adapter run --serve --config examples/quickstart/adapter.json"
"$cli" run --serve --config examples/quickstart/adapter.json 2>"$store/daemon.log" &
daemon=$!
trap 'kill "$daemon" 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do grep -q "Syncing" "$store/daemon.log" 2>/dev/null && break; sleep 0.1; done
grep -q "Syncing" "$store/daemon.log" || { cat "$store/daemon.log"; exit 1; }
cat "$store/daemon.log"

wait_for() {  # wait_for DESCRIPTION COMMAND...: up to 10 s
  local what="$1"; shift
  for _ in $(seq 1 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "timed out waiting for $what" >&2; cat "$store/daemon.log" >&2; exit 1
}

step "Postgres → Realm: UPDATE bus SET fleet_id = 'F-101-night' WHERE vehicle = 101"
psql -d busdemo -c "UPDATE bus SET fleet_id = 'F-101-night' WHERE vehicle = 101"
wait_for "the Realm to see the new fleet id" sh -c "'$cli' realm dump /SQLDemo --store '$store' --type Bus | grep -q F-101-night"
"$cli" realm dump /SQLDemo --store "$store" --type Bus

step "Realm → Postgres: a Realm transaction renames driver 1"
echo '[{"type": "SET", "object_type": "Driver", "identity": 1, "values": {"name": "Ada Lovelace"}}]' \
  | "$cli" realm apply /SQLDemo --store "$store" -f -
wait_for "Postgres to see the new name" sh -c "psql() { command psql -X -At -h '$REALM_ADAPTER_PG_HOST' -p '$REALM_ADAPTER_PG_PORT' -U postgres \"\$@\"; }; psql -d busdemo -c 'SELECT name FROM driver WHERE id = 1' | grep -q 'Ada Lovelace'"
psql -d busdemo -c "SELECT id, name, \"Busvehicle\" FROM driver ORDER BY id"

step "The server (run --serve, port 9080): a token with curl, then a GraphQL query"
token=$(curl -s -X POST localhost:9080/auth \
  -d '{"provider": "password", "data": "demo", "user_info": {"password": "quickstart-password"}}' \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["refresh_token"]["token"])')
curl -s -X POST localhost:9080/graphql/SQLDemo -H "Authorization: $token" -H 'Content-Type: application/json' \
  -d '{"query": "{ buses(query: \"vehicle >= 100\", sortBy: \"vehicle\") { vehicle fleet_id } }"}'
echo

step "A GraphQL subscription (gql over WebSocket) receives a change made in Postgres"
python3 Tests/Support/graphql-client/subscribe.py ws://127.0.0.1:9080/graphql/SQLDemo "$token" \
  'subscription { bus(vehicle: 101) { vehicle fleet_id } }' 2 >"$store/subscription.out" &
subscriber=$!
wait_for "the subscription's first result" grep -q ready "$store/subscription.out"
psql -d busdemo -c "UPDATE bus SET fleet_id = 'F-101-day' WHERE vehicle = 101"
wait "$subscriber"
grep '"client"' "$store/subscription.out"

step "Each change travelled once: the Realm's history (origins: the load's and the daemon's writes, then the CLI's)"
"$cli" realm history /SQLDemo --store "$store" | cut -c1-160

step "Where sync stands: realm-adapter status"
"$cli" status --config examples/quickstart/adapter.json

step "Studio, the Realms in a browser: log in at http://localhost:9080/studio as demo (password quickstart-password)"
jar="$store/studio.cookies"
curl -s -c "$jar" -b "$jar" localhost:9080/studio/login -o "$store/studio-login.html"
csrf=$(grep -o 'name="csrf" value="[^"]*"' "$store/studio-login.html" | sed 's/.*value="//; s/"$//')
curl -s -c "$jar" -b "$jar" -o /dev/null -d "csrf=$csrf&name=demo&password=quickstart-password" localhost:9080/studio/login
curl -s -b "$jar" "localhost:9080/studio/objects?path=%2FSQLDemo&type=Bus" | grep -o '[0-9]* objects\?\.' \
  | sed 's/^/Studio lists the Bus type of \/SQLDemo: /'

step "Stopping the daemon gracefully (SIGTERM)"
kill -TERM "$daemon"
wait "$daemon" && echo "daemon exited cleanly"
trap - EXIT

printf '\nDone. Postgres keeps running (scripts/pg.sh stop stops it); the Realm store is in %s.\n' "$store"
cat <<EOF

The replication slot busdemo stays, so that \`realm-adapter run --config examples/quickstart/adapter.json\`
goes on where the daemon stopped. While nothing follows it, Postgres keeps every WAL segment written
since, for the whole cluster (\`realm-adapter status\` shows how much). When you are done with the demo:
  psql -h $REALM_ADAPTER_PG_HOST -p $REALM_ADAPTER_PG_PORT -U postgres -c "SELECT pg_drop_replication_slot('busdemo')"
(the next quickstart makes it again), or stop Postgres: scripts/pg.sh stop.

Studio, to look at the Realms in a browser: start the daemon and its server again (any new signing
key will do: the users and their passwords are in the store),
  REALM_ADAPTER_SIGNING_KEY=\$(openssl rand -hex 32) $cli run --serve --config examples/quickstart/adapter.json
then open http://localhost:9080/studio and log in as demo, password quickstart-password (docs/studio.md).
EOF
