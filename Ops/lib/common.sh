# Shared by Ops/run, Ops/test and Ops/bench: install what is missing, start a
# private PostgreSQL under .ledger/ when no DATABASE_URL is given, migrate.
# Sourced, not executed.
set -euo pipefail

LEDGER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LEDGER_STATE="$LEDGER_ROOT/.ledger"
PG_BIN=/usr/lib/postgresql/15/bin

log() { printf '[ops] %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

ensure_packages() {
  local wanted=(libpq-dev libssl-dev libmicrohttpd-dev libjemalloc-dev libcurl4 pkg-config postgresql-15 postgresql-contrib wrk nginx)
  local missing=()
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Runs a PostgreSQL tool as the cluster's owner: `postgres` when we are root.
as_pg_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Starts (or reuses) the private cluster and exports DATABASE_URL (superuser,
# used for migrations and tests) and LEDGER_SERVICE_URL (the service's own
# least-privileged role).
start_private_postgres() {
  local data="$LEDGER_STATE/pgdata" port_file="$LEDGER_STATE/port"
  mkdir -p "$LEDGER_STATE"
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$LEDGER_STATE"; fi
  if [ ! -s "$data/PG_VERSION" ]; then
    log "initialising a private PostgreSQL cluster in $data"
    as_pg_owner "$PG_BIN/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  if ! as_pg_owner "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    local port; port=$(free_port)
    echo "$port" > "$port_file"
    as_pg_owner "$PG_BIN/pg_ctl" -D "$data" -l "$data/server.log" -w \
      -o "-p $port -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=256MB" start >/dev/null
    log "PostgreSQL started on 127.0.0.1:$port"
  fi
  local port; port=$(cat "$port_file")
  as_pg_owner psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname='ledger'" | grep -q 1 ||
    as_pg_owner psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE ledger" >/dev/null
  export PGDATA_DIR="$data" PG_PORT="$port"
  export DATABASE_URL="postgresql://postgres@127.0.0.1:$port/ledger"
  export LEDGER_SERVICE_URL="postgresql://ledger_service@127.0.0.1:$port/ledger"
}

stop_private_postgres() {
  [ -s "$LEDGER_STATE/pgdata/PG_VERSION" ] || return 0
  as_pg_owner "$PG_BIN/pg_ctl" -D "$LEDGER_STATE/pgdata" -m fast stop >/dev/null 2>&1 || true
}

setup_database() {
  if [ -z "${DATABASE_URL:-}" ]; then
    start_private_postgres
  else
    export LEDGER_SERVICE_URL="${LEDGER_SERVICE_URL:-$DATABASE_URL}"
  fi
}
