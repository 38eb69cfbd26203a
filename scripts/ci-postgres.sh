#!/usr/bin/env bash
# CI, second database: the whole suite again against the PostgreSQL an operator's platform gives
# (Debian 12: PostgreSQL 15), through DATABASE_URL. The embedded PostgreSQL (18) covers the newest
# release; this covers the oldest one we can install here, so syntax newer than the operator's
# server fails CI instead of the operator's start-up.
#
#   scripts/ci-postgres.sh [VERSION] [npm test arguments...]     VERSION defaults to 15
#   PG_BIN=/path/to/bin scripts/ci-postgres.sh 14                 PostgreSQL binaries from elsewhere
#
# Installs postgresql-VERSION with apt-get when its server binary is missing (needs root), starts
# a throw-away cluster in a temporary directory on a free loopback port, runs `npm test` with
# DATABASE_URL pointing at it, and stops and deletes the cluster on any exit.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION="${1:-15}"
shift || true
BIN="${PG_BIN:-/usr/lib/postgresql/${VERSION}/bin}"

if [ ! -x "${BIN}/postgres" ] && [ -z "${PG_BIN:-}" ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "ci-postgres: ${BIN}/postgres is missing and installing postgresql-${VERSION} needs root" >&2
    exit 1
  fi
  echo "ci-postgres: installing postgresql-${VERSION}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "postgresql-${VERSION}" >&2
fi

# PostgreSQL refuses to run as root: as root, the server runs as the `postgres` system user
# (the Debian package creates it; create it if a minimal image lacks it).
as_postgres() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
  id -u postgres >/dev/null 2>&1 || useradd --system --user-group postgres
  as_postgres() { runuser -u postgres -- "$@"; }
fi

CLUSTER_DIR="$(mktemp -d "${TMPDIR:-/tmp}/esim-pg${VERSION}-XXXXXX")"
chmod 0755 "${CLUSTER_DIR}"
if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "${CLUSTER_DIR}"; fi
DATA="${CLUSTER_DIR}/data"

stop_cluster() {
  if [ -f "${DATA}/postmaster.pid" ]; then
    as_postgres "${BIN}/pg_ctl" -D "${DATA}" -m fast -w -t 60 stop >/dev/null || true
  fi
  rm -rf "${CLUSTER_DIR}"
}
trap stop_cluster EXIT

# A free port: bind port 0 on loopback and read what the kernel gave (npm's Node, else the system's).
NODE=node_modules/.bin/node
[ -x "${NODE}" ] || NODE=node
PORT="$("${NODE}" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"

# Trust authentication on a loopback-only, throw-away cluster; UTF-8 with the C locale like the
# embedded cluster, and the connections the suite's parallel test files need.
as_postgres "${BIN}/initdb" -D "${DATA}" -U postgres -A trust -E UTF8 --locale=C >/dev/null
as_postgres "${BIN}/pg_ctl" -D "${DATA}" -l "${CLUSTER_DIR}/postgres.log" -w -t 60 \
  -o "-p ${PORT} -k ${CLUSTER_DIR} -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
echo "ci-postgres: $("${BIN}/postgres" --version) on 127.0.0.1:${PORT}" >&2

DATABASE_URL="postgres://postgres@127.0.0.1:${PORT}/postgres" npm test -- "$@"
