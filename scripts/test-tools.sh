#!/usr/bin/env bash
# The Debian programs the test suite drives for real: zbarimg (zbar-tools) decodes the QR images the
# API draws, Chromium renders /docs offline and runs the web console's tests (test/support/browser.ts),
# and Debian's python3 with requests and twisted runs osmocom pySim's ES2+ definitions over our
# recorded ES2+ traffic (test/carrier.es2plus.pysim.test.ts; CI has no PyPI, Debian has both), and
# pgbouncer (Debian 12: 1.18) runs in transaction mode in front of the test PostgreSQL
# (test/db.pgbouncer.processes.test.ts), poppler-utils' pdftotext reads statement PDFs back, and
# the Noto fonts give Chromium Japanese, Chinese, Korean and Arabic glyphs.
# `npm test` runs this first and installs what is missing with apt-get (as root), as `npm run bench`
# does for wrk, so a fresh machine needs no step by hand.
set -euo pipefail
need=()
command -v zbarimg >/dev/null || need+=(zbar-tools)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -x /usr/sbin/pgbouncer ] || need+=(pgbouncer)
# pdftotext (poppler-utils) reads the monthly statement PDFs back (test/wallet.monthly-statements.test.ts).
command -v pdftotext >/dev/null || need+=(poppler-utils)
# Fonts with Japanese, Chinese, Korean and Arabic glyphs: Chromium draws the traveller's install page
# in every language (test/travellers.install-page.browser.test.ts, npm run install-page:screenshots).
compgen -G "/usr/share/fonts/opentype/noto/NotoSansCJK-*" >/dev/null || need+=(fonts-noto-cjk)
[ -e /usr/share/fonts/truetype/noto/NotoNaskhArabic-Regular.ttf ] || need+=(fonts-noto-core)
# systemd-analyze verify checks the deployment's units (test/deploy.units.test.ts); nothing is booted.
command -v systemd-analyze >/dev/null || need+=(systemd)
# A PostgreSQL server with its own pg_basebackup for the restore drill (test/restore-drill.test.ts):
# Debian 12's 15 (the embedded 18 ships no pg_basebackup, and 15's refuses a newer server).
compgen -G "/usr/lib/postgresql/*/bin/pg_basebackup" >/dev/null || need+=(postgresql-15)
if [ ! -x /usr/bin/python3 ]; then
  need+=(python3 python3-requests python3-twisted)
else
  /usr/bin/python3 -c "import requests" 2>/dev/null || need+=(python3-requests)
  /usr/bin/python3 -c "import twisted.web.server" 2>/dev/null || need+=(python3-twisted)
fi
[ "${#need[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "test tools missing: ${need[*]}; install them with apt-get (as root) and run npm test again" >&2
  exit 1
fi
echo "installing test tools: ${need[*]}" >&2
apt-get update -qq
# A package with a service (pgbouncer on port 6432, postgresql-15's cluster on 5432) would start it
# with its default configuration; the tests start their own. Where no policy says otherwise (a
# container image usually has one), services are not started during this install.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "${policy}" ]; then
  printf '#!/bin/sh\nexit 101\n' >"${policy}" && chmod 0755 "${policy}" && own_policy=1
  trap '[ "${own_policy}" -eq 1 ] && rm -f "${policy}"' EXIT
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
