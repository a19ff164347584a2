#!/usr/bin/env bash
# Set up everything clusterforge needs on a fresh Debian 12 machine (idempotent; re-runs take seconds):
#   1. Debian packages: debootstrap, systemd-container (nspawn), FRR, iproute2, OpenSSH client,
#      chromium (report screenshots), python3-venv
#   2. the project venv (.venv) with clusterforge and its test tools
#   3. the Pulumi engine (PATH, or built from the Go module proxy: scripts/setup-pulumi.sh)
#   4. the lab's cached Debian rootfs (scripts/lab-rootfs.sh; root only)
#   5. PostgreSQL, Redis and Nautobot for the source-of-truth tests (scripts/setup-sot.sh)
#
#   scripts/setup.sh [--no-lab]
set -euo pipefail
repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$repo"
say() { printf 'setup: %s\n' "$*"; }

lab=yes
[[ "${1:-}" == "--no-lab" ]] && lab=no

source "$repo/scripts/lib/apt.sh"
apt_ensure debootstrap systemd-container frr iproute2 openssh-client openssh-server python3-venv chromium \
    fonts-dejavu-core ca-certificates
if ((${#apt_installed[@]})); then
    # the lab runs FRR inside containers only; the host's own FRR must not route anything
    systemctl disable --now frr >/dev/null 2>&1 || true
    # sshd is here for the switch-push tests, which start their own on 127.0.0.1; no system daemon
    systemctl disable --now ssh >/dev/null 2>&1 || true
fi

python=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
    say "creating .venv"
    "$python" -m venv .venv
fi
stamp=.venv/.clusterforge-installed
if [[ ! -f $stamp || pyproject.toml -nt $stamp ]]; then
    say "installing clusterforge and test tools into .venv"
    .venv/bin/pip install -q --upgrade pip >/dev/null
    .venv/bin/pip install -q -e ".[test]"
    touch "$stamp"
fi

scripts/setup-pulumi.sh
scripts/setup-sot.sh  # PostgreSQL, Redis and Nautobot for the source-of-truth tests

if [[ $lab == yes ]]; then
    if [[ $(id -u) -eq 0 ]]; then
        scripts/lab-rootfs.sh
    else
        say "not root: skipping the lab rootfs (lab tests will skip)"
    fi
fi
say "ready (. scripts/env.sh puts the venv and the Pulumi engine on PATH)"
