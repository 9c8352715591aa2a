#!/usr/bin/env bash
# The test venv holding inspect_ai itself (tests/inspect/requirements.lock,
# inspect_ai 0.3.285: the eval-log format gisclaw's export follows), at
# target/inspect-venv; `make test` runs this before the tests.
# Idempotent: nothing is downloaded when the venv matches the lock.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/target/inspect-venv"
lock="$root/tests/inspect/requirements.lock"
python="${PYTHON:-python3}"
want="$(sha256sum "$lock" | cut -d' ' -f1)"
stamp="$venv/.gisclaw-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  exit 0
fi
echo "==> creating the inspect_ai test venv at $venv"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: --no-deps --require-hashes -r "$lock"
"$venv/bin/python" -c 'from inspect_ai.log import read_eval_log'
echo "$want" > "$stamp"
