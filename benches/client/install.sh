#!/usr/bin/env bash
# The OpenAI Python SDK for the agent-step bench's reference
# (benches/client/requirements.lock), at target/bench-openai; `make bench`
# runs this first. Idempotent: nothing is downloaded when the folder matches
# the lock. Without a package index the bench says the client figures are
# not measured and goes on.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
folder="$root/target/bench-openai"
lock="$root/benches/client/requirements.lock"
venv="${GISCLAW_VENV:-${XDG_DATA_HOME:-$HOME/.local/share}/gisclaw/venv}"
want="$(sha256sum "$lock" | cut -d' ' -f1)"
stamp="$folder/.gisclaw-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "==> installing the OpenAI Python SDK for the agent-step bench at $folder"
rm -rf "$folder"
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: \
    --no-deps --target "$folder" -r "$lock"; then
  rm -rf "$folder"
  echo "    not installed: the agent-step bench will leave the model clients out" >&2
  exit 0
fi
echo "$want" > "$stamp"
