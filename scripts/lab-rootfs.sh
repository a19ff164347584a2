#!/usr/bin/env bash
# Build (or verify) the cached Debian 12 rootfs the lab boots from: <repo>/.lab/rootfs/bookworm.
# Needs root and debootstrap. Idempotent: does nothing when the cached image matches the
# wanted package list; --force rebuilds. For CI, cache .lab/rootfs/debs (downloaded .debs)
# between runs; keep the key on src/clusterforge/lab/rootfs.py.
#
#   sudo scripts/lab-rootfs.sh [--force]
set -euo pipefail
root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
py="${root}/.venv/bin/python"
[[ -x "${py}" ]] || py="$(command -v python3)"
force=False
case "${1:-}" in
    --force) force=True ;;
    "") ;;
    *) echo "usage: $0 [--force]" >&2; exit 2 ;;
esac
if [[ $(id -u) -ne 0 ]]; then echo "lab-rootfs: must run as root" >&2; exit 1; fi
command -v debootstrap >/dev/null || { echo "lab-rootfs: debootstrap missing (apt-get install debootstrap)" >&2; exit 1; }
PYTHONPATH="${root}/src${PYTHONPATH:+:${PYTHONPATH}}" exec "${py}" - "${force}" <<'PY'
import sys
from clusterforge.lab.rootfs import ensure_rootfs, current_stamp
p = ensure_rootfs(force=sys.argv[1] == "True", progress=lambda host, msg: print("lab-rootfs:", msg, flush=True))
st = current_stamp(p)
print(f"lab-rootfs: {p} (hash {st['hash'][:12]}, built {st.get('built_at')}, {st.get('build_seconds')} s)")
PY
