#!/usr/bin/env bash
# A throwaway local Postgres with logical replication, for the tests, the quickstart and the
# benchmarks. Runs as the `postgres` user when invoked as root (Postgres refuses root).
#
#   scripts/pg.sh start   # init (first time) and start; prints the connection settings
#   scripts/pg.sh stop
#   scripts/pg.sh env     # the settings as shell exports (eval "$(scripts/pg.sh env)")
#
# Settings: PGDEV_DIR (default /tmp/realm-adapter-pg), PGDEV_PORT (default 54329).
# The cluster trusts local connections; it is for development only.
set -euo pipefail

dir="${PGDEV_DIR:-/tmp/realm-adapter-pg}"
port="${PGDEV_PORT:-54329}"
bin="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}"
[ -x "$bin/pg_ctl" ] || { echo "pg.sh: Postgres binaries not found; run scripts/install-deps.sh first" >&2; exit 1; }

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

env_lines() {
  cat <<ENV
export REALM_ADAPTER_PG_HOST=127.0.0.1
export REALM_ADAPTER_PG_PORT=$port
export REALM_ADAPTER_PG_USER=postgres
export REALM_ADAPTER_PG_DATABASE=postgres
export REALM_ADAPTER_PG_BIN=$bin
ENV
}

case "${1:-start}" in
  start)
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      mkdir -p "$dir"
      [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
      as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >/dev/null
      echo "include_if_exists = 'realm-adapter.conf'" >> "$dir/data/postgresql.conf"
      cat > "$dir/data/pg_hba.conf" <<HBA
local all all trust
host all all 127.0.0.1/32 trust
local replication all trust
host replication all 127.0.0.1/32 trust
HBA
    fi
    # The settings are rewritten on every start, so a cluster left by an older script gets them too.
    grep -q "realm-adapter.conf" "$dir/data/postgresql.conf" || echo "include_if_exists = 'realm-adapter.conf'" >> "$dir/data/postgresql.conf"
    cat > "$dir/data/realm-adapter.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
wal_level = logical
max_replication_slots = 64
max_wal_senders = 32
fsync = off
full_page_writes = off
# synchronous_commit stays on: logical decoding only sees flushed WAL.
CONF
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir/data/realm-adapter.conf"
    if as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      slots=$(psql -X -At -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "SHOW max_replication_slots" 2>/dev/null || echo 0)
      if [ "$slots" != "64" ]; then  # started with older settings: restart to apply them
        as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w -l "$dir/server.log" restart >/dev/null
        echo "pg.sh: restarted on port $port with current settings" >&2
      else
        echo "pg.sh: already running on port $port" >&2
      fi
    else
      as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start >/dev/null \
        || { echo "pg.sh: Postgres did not start; see $dir/server.log" >&2; tail -n 20 "$dir/server.log" >&2; exit 1; }
      echo "pg.sh: Postgres running on 127.0.0.1:$port (data in $dir/data)" >&2
    fi
    env_lines
    ;;
  stop)
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    echo "pg.sh: stopped" >&2
    ;;
  restart)
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w -l "$dir/server.log" restart >/dev/null
    ;;
  env)
    env_lines
    ;;
  *)
    echo "usage: scripts/pg.sh start|stop|restart|env" >&2; exit 2 ;;
esac
