#!/usr/bin/env bash
# The test venv holding the official MCP Python SDK (tests/mcp/requirements.lock),
# at target/mcp-client-venv; `make test` runs this before the tests.
# Idempotent: nothing is downloaded when the venv matches the lock.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/target/mcp-client-venv"
lock="$root/tests/mcp/requirements.lock"
python="${PYTHON:-python3}"
want="$(sha256sum "$lock" | cut -d' ' -f1)"
stamp="$venv/.gisclaw-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  exit 0
fi
echo "==> creating the MCP client test venv at $venv"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: --no-deps -r "$lock"
"$venv/bin/python" -c 'import mcp.client.stdio'
echo "$want" > "$stamp"
