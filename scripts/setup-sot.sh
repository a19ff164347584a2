#!/usr/bin/env bash
# The source-of-truth test server's parts (idempotent): PostgreSQL and Redis from Debian (their own
# system services stay off: the tests start private instances on loopback ports), Nautobot from PyPI
# in its own venv (.sot/venv: its Django pins stay out of the project's venv), and the migrated
# template database the tests restore (tests/sot/nautobot_server.py builds it on first use).
#
#   scripts/setup-sot.sh
set -euo pipefail
repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$repo"
say() { printf 'setup-sot: %s\n' "$*"; }
NAUTOBOT_VERSION=3.2.7

source "$repo/scripts/lib/apt.sh"
apt_ensure postgresql redis-server
if ((${#apt_installed[@]})); then
    # the tests run their own instances; the system ones must not hold ports or memory
    for service in postgresql redis-server; do
        systemctl disable --now "$service" >/dev/null 2>&1 || service "$service" stop >/dev/null 2>&1 || true
    done
fi

python=.venv/bin/python
[[ -x $python ]] || python=${PYTHON:-python3}
if [[ ! -x .sot/venv/bin/nautobot-server ]] || ! .sot/venv/bin/pip show nautobot 2>/dev/null | grep -q "^Version: $NAUTOBOT_VERSION$"; then
    say "installing nautobot $NAUTOBOT_VERSION into .sot/venv"
    "$python" -m venv .sot/venv
    .sot/venv/bin/pip install -q "nautobot==$NAUTOBOT_VERSION"
fi
say "ready"
