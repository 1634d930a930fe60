# Shared by Ops/run, Ops/test, Ops/bench, Ops/drill and Ops/rebuild-under-load: install what is missing, start a
# private PostgreSQL under .ledger/ when no DATABASE_URL is given, migrate.
# Sourced, not executed.
set -euo pipefail

LEDGER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LEDGER_STATE="$LEDGER_ROOT/.ledger"
PG_BIN=/usr/lib/postgresql/15/bin

log() { printf '[ops] %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

ensure_packages() {
  local wanted=(libpq-dev libssl-dev libmicrohttpd-dev libjemalloc-dev libcurl4 pkg-config postgresql-15 postgresql-contrib wrk curl openssl nginx time python3-venv chromium)
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
# From /, which that user can always enter (the checkout may be a folder it cannot);
# every path given to it is absolute.
as_pg_owner() {
  if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

# Where this checkout's cluster keeps its data. `.ledger/pgdata` when the
# cluster's owner can reach it; when it cannot (we are root and the checkout
# sits in a folder user postgres may not enter: root's home, a `mktemp -d`
# folder), a folder under /var/lib/ledger owned by postgres and named after
# the checkout's path. The choice is recorded in .ledger/cluster-location, so
# every later run (and every script) uses the same cluster.
cluster_data_dir() {
  local recorded="$LEDGER_STATE/cluster-location"
  if [ -s "$recorded" ]; then cat "$recorded"; return; fi
  mkdir -p "$LEDGER_STATE"
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$LEDGER_STATE"; fi
  local data="$LEDGER_STATE/pgdata"
  if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -w "$LEDGER_STATE"; then
    local name
    name=$(printf '%s' "$LEDGER_ROOT" | tr -c 'A-Za-z0-9._-' '_' | tail -c 80)
    name="${name#_}-$(printf '%s' "$LEDGER_ROOT" | sha256sum | cut -c1-12)"
    data="/var/lib/ledger/$name/pgdata"
  fi
  printf '%s\n' "$data" > "$recorded"
  printf '%s\n' "$data"
}

# Starts the cluster in $1 on 127.0.0.1 port $2 and waits until it accepts
# connections (Ops/drill starts it again on the same port after a stop).
pg_ctl_start() {
  as_pg_owner "$PG_BIN/pg_ctl" -D "$1" -l "$1/server.log" -w \
    -o "-p $2 -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=256MB" start >/dev/null
}

# Starts (or reuses) the private cluster and exports DATABASE_URL (superuser,
# used for migrations and tests) and LEDGER_SERVICE_URL (the service's own
# least-privileged role).
start_private_postgres() {
  local port_file="$LEDGER_STATE/port"
  mkdir -p "$LEDGER_STATE"
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$LEDGER_STATE"; fi
  local data; data=$(cluster_data_dir)
  if [ "$data" != "$LEDGER_STATE/pgdata" ] && [ ! -d "$data" ]; then
    log "user postgres cannot reach $LEDGER_STATE: the cluster's data goes to $data (recorded in $LEDGER_STATE/cluster-location)"
    install -d -o postgres -g postgres -m 700 "$data"
    chown postgres:postgres "$(dirname "$data")"
  fi
  if [ ! -s "$data/PG_VERSION" ]; then
    log "initialising a private PostgreSQL cluster in $data"
    as_pg_owner "$PG_BIN/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  if ! as_pg_owner "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    local port; port=$(free_port)
    echo "$port" > "$port_file"
    pg_ctl_start "$data" "$port"
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
  [ -s "$LEDGER_STATE/cluster-location" ] || [ -s "$LEDGER_STATE/pgdata/PG_VERSION" ] || return 0
  local data; data=$(cluster_data_dir)
  [ -s "$data/PG_VERSION" ] || return 0
  as_pg_owner "$PG_BIN/pg_ctl" -D "$data" -m fast stop >/dev/null 2>&1 || true
}

# DATABASE_URL with its database replaced by $1 (a URI's path, or a later dbname=).
database_url_for() {
  case "$DATABASE_URL" in
    postgres://*|postgresql://*)
      local base="${DATABASE_URL%%\?*}" query=""
      [[ "$DATABASE_URL" == *\?* ]] && query="?${DATABASE_URL#*\?}"
      printf '%s/%s%s' "${base%/*}" "$1" "$query" ;;
    *) printf '%s dbname=%s' "$DATABASE_URL" "$1" ;;
  esac
}

setup_database() {
  if [ -z "${DATABASE_URL:-}" ]; then
    start_private_postgres
  else
    export LEDGER_SERVICE_URL="${LEDGER_SERVICE_URL:-$DATABASE_URL}"
  fi
}
