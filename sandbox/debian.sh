# Sourced by the set-up scripts: installs missing Debian packages.
# Needs `say` from the caller.

# install_debian_packages PKG...: apt-installs those of PKG not installed
# yet (with sudo unless root); an apt failure stops the calling script
# (call it as a plain command, not in a condition). Sets
# `debian_installed` to the packages it installed (empty: none missing).
install_debian_packages() {
  local pkg sudo=""
  debian_installed=""
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || debian_installed+="$pkg "
  done
  [ -n "$debian_installed" ] || return 0
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing Debian packages: $debian_installed"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086 # one word per package
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $debian_installed >/dev/null
}
