# Sourced by scripts/setup.sh and scripts/setup-sot.sh: install the Debian packages a script needs.
#
#   apt_ensure PACKAGE...
# Installs those of PACKAGE... that dpkg does not list as installed (as root; otherwise it warns
# through the caller's `say` and installs nothing). Sets the array apt_installed to what it
# installed, empty when nothing was missing or it could not install, so the caller can follow up
# (stop a system service it must not run) only after a fresh install.
apt_ensure() {
    local p
    local missing=()
    apt_installed=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    if [[ $(id -u) -ne 0 ]]; then
        say "warning: missing Debian packages (need root to install): ${missing[*]}"
        return 0
    fi
    say "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    apt_installed=("${missing[@]}")
}
