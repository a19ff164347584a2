"""Does OVMF (UEFI firmware) run under this machine's KVM? Asked once per kernel and QEMU, the answer cached.

On a nested KVM such as this machine's (a Firecracker guest), QEMU starts under KVM but OVMF's first
instructions stop it with "KVM internal error. Suberror: 1 ... emulation failure" (SeaBIOS, legacy BIOS,
runs), or QEMU aborts setting an MSR with ``-cpu host``. The probe boots OVMF for a few seconds with
``-accel kvm`` and no disk: when QEMU reports either, the lab VM runs under TCG (QEMU's emulator) instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from clusterforge.paths import lab_home

__all__ = ["ovmf_runs_under_kvm", "PROBE_S"]

PROBE_S = 6.0
_FAILURES = ("emulation failure", "KVM internal error", "failed to set MSR", "Assertion")


def _key() -> str:
    qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    return f"{os.uname().release} | {qemu}"


def ovmf_runs_under_kvm(*, refresh: bool = False) -> bool:
    """True when OVMF boots under KVM here; False without /dev/kvm or when the probe saw KVM fail."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK) or shutil.which("qemu-system-x86_64") is None:
        return False
    cache = lab_home() / "kvm-ovmf-probe.json"
    key = _key()
    if not refresh and cache.exists():
        try:
            known = json.loads(cache.read_text())
            if known.get("key") == key:
                return bool(known["ok"])
        except (OSError, ValueError, KeyError):
            pass
    from .metal_vm import OVMF_CODE, OVMF_VARS

    with tempfile.TemporaryDirectory(prefix="cf-kvm-probe-") as tmp:
        nvram = Path(tmp) / "vars.fd"
        shutil.copyfile(OVMF_VARS, nvram)
        argv = ["qemu-system-x86_64", "-accel", "kvm", "-machine", "q35", "-cpu", "host", "-m", "256",
                "-display", "none", "-monitor", "none", "-serial", "none", "-nic", "none",
                "-drive", f"if=pflash,format=raw,readonly=on,file={OVMF_CODE}",
                "-drive", f"if=pflash,format=raw,file={nvram}"]
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_S)
            out, alive = p.stdout + p.stderr, False
        except subprocess.TimeoutExpired as exc:
            out = (exc.stdout or b"").decode(errors="replace") + (exc.stderr or b"").decode(errors="replace")
            alive = True
    ok = alive and not any(f in out for f in _FAILURES)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": key, "ok": ok, "evidence": out.strip().splitlines()[:3]}) + "\n")
    return ok
