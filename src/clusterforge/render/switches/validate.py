"""Checks of rendered switch configs against a real parser: FRR's own (SONiC: see sonic_yang.py).

FRR: `vtysh --dryrun -f FILE` parses the file with every daemon's command tree and exits non-zero
on an unknown or malformed command; it needs no running daemons and no root. Where it can run
(as root, bgpd installed), `bgpd --dryrun` then loads the file into a real bgpd that exits after
reading it, which also catches commands that parse but fail ("Specify remote-as or peer-group
commands first"); bgpd always exits 0 there, so its log is what is checked.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["frr_check", "frr_available"]

BGPD = "/usr/lib/frr/bgpd"
FRR_TIMEOUT_S = 60
# bgpd --dryrun logs, for a command that parses but does not apply, lines such as
# "[EC 100663304] Command returned Warning Config Failed on config line 2: ..." or "No such command".
_BGPD_FAILURE = re.compile(r"(Config Failed|No such command|Unknown command|% )")


def frr_available() -> bool:
    return shutil.which("vtysh") is not None


def _run(argv: list[str], cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=FRR_TIMEOUT_S, cwd=cwd, check=False)


def frr_check(text: str) -> tuple[bool, str]:
    """(ok, parser output) for one frr.conf text. Raises FileNotFoundError if FRR is not installed."""
    vtysh = shutil.which("vtysh")
    if vtysh is None:
        raise FileNotFoundError("vtysh not found: install FRR (Debian package frr)")
    with tempfile.TemporaryDirectory(prefix="cf-frr-") as tmp:
        path = Path(tmp) / "frr.conf"
        path.write_text(text)
        path.chmod(0o644)
        Path(tmp).chmod(0o755)  # bgpd drops to the frr user before reading the file
        # --config_dir: never read this machine's /etc/frr/vtysh.conf
        syntax = _run([vtysh, "--config_dir", tmp, "--dryrun", "-f", str(path)], tmp)
        output = _strip_noise(syntax.stdout + syntax.stderr)
        if syntax.returncode != 0:
            return False, output
        if os.geteuid() == 0 and Path(BGPD).exists():
            ok, semantic = _bgpd_dryrun(path, tmp)
            output = "\n".join(filter(None, [output, semantic]))
            if not ok:
                return False, output
    return True, output


def _bgpd_dryrun(path: Path, tmp: str) -> tuple[bool, str]:
    # no listening socket, no kernel routes, no zebra: it only reads the file and exits
    argv = [BGPD, "--dryrun", "-f", str(path), "-p", "0", "--no_kernel", "--no_zebra", "-i", f"{tmp}/bgpd.pid",
            "--vty_socket", tmp]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
    try:
        out, _ = proc.communicate(timeout=FRR_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        # bgpd keeps a per-process crash-log directory; it is ours to remove
        shutil.rmtree(f"/var/tmp/frr/bgpd.{proc.pid}", ignore_errors=True)
    failures = [line for line in out.splitlines() if _BGPD_FAILURE.search(line)]
    return not failures, "\n".join(failures)


def _strip_noise(output: str) -> str:
    # vtysh reports the vtysh.conf it was told not to need; that is not a finding about the file
    return "\n".join(line for line in output.splitlines() if "vtysh.conf" not in line)
