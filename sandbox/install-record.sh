# Sourced by setup.sh and setup-local-model.sh: writes where this install
# lives, as real paths, where gisclaw reads it even when started with a
# reduced environment (an MCP client that drops XDG_DATA_HOME, a shell
# without the set-up's variables):
#   $root/target/gisclaw-install.toml       beside the binaries
#   $XDG_CONFIG_HOME/gisclaw/install.toml   (default ~/.config/gisclaw)
# Both files hold the same keys; each set-up rewrites them whole from the
# same defaults, so running either script again keeps the other's entry.

# write_install_record ROOT VENV LOCAL_DIR
write_install_record() {
  local root="$1" venv="$2" local_dir="$3" text file
  quote() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
  text="# Written by make setup: where gisclaw's install lives (real paths).
"
  if [ -f "$venv/pyvenv.cfg" ]; then
    text+="venv = $(quote "$(realpath "$venv")")
"
  fi
  if [ -d "$local_dir" ]; then
    text+="local_dir = $(quote "$(realpath "$local_dir")")
"
  fi
  if [ -f "$root/sandbox/js/node_modules/.gisclaw-stamp" ]; then
    text+="js_dir = $(quote "$(realpath "$root/sandbox/js")")
"
  fi
  for file in "$root/target/gisclaw-install.toml" \
      "${XDG_CONFIG_HOME:-$HOME/.config}/gisclaw/install.toml"; do
    mkdir -p "$(dirname "$file")"
    # Writable by its owner alone: gisclaw ignores a record others may write.
    printf '%s' "$text" > "$file.part" && chmod 644 "$file.part" && mv "$file.part" "$file"
  done
}

# recorded ROOT KEY: the path the record beside the binaries names for KEY
# (venv, local_dir, js_dir), if any.
recorded() {
  local file="$1/target/gisclaw-install.toml"
  [ -f "$file" ] || return 0
  sed -n "s/^$2 = \"\\(.*\\)\"\$/\\1/p" "$file" | sed 's/\\"/"/g; s/\\\\/\\/g'
}
