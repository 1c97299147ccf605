#!/usr/bin/env bash
# The browser tests drive Debian's Chromium through playwright-core. Installs it when missing
# and possible (root with apt-get); otherwise says that the browser tests will be skipped.
set -uo pipefail
if [[ -x /usr/bin/chromium ]]; then
  echo "  Chromium is installed"
  exit 0
fi
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  echo "  installing chromium from Debian for the browser tests"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null && exit 0
fi
echo "  Chromium is not installed (apt-get install chromium): the browser tests will be skipped" >&2
exit 0
