#!/usr/bin/env bash
# The Debian programs the test suite drives for real: zbarimg (zbar-tools) decodes the QR images the
# API draws, Chromium renders /docs offline and runs the web console's tests (test/support/browser.ts).
# `npm test` runs this first and installs what is missing with apt-get (as root), as `npm run bench`
# does for wrk, so a fresh machine needs no step by hand.
set -euo pipefail
need=()
command -v zbarimg >/dev/null || need+=(zbar-tools)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ "${#need[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "test tools missing: ${need[*]}; install them with apt-get (as root) and run npm test again" >&2
  exit 1
fi
echo "installing test tools: ${need[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
