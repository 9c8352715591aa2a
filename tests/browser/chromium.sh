#!/usr/bin/env bash
# Debian's Chromium, for the HTML report's browser test (tests/all/html_report.rs
# drives it headless over the DevTools protocol on a pipe); `make test` runs
# this before the tests. Idempotent: nothing is installed when it is there.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
say() { printf '==> %s\n' "$*"; }
# shellcheck source=../../sandbox/debian.sh
. "$root/sandbox/debian.sh"
install_debian_packages chromium
/usr/bin/chromium --version
