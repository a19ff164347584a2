"""`clusterforge replace HOST` on the lab: re-image one host, provision it, verify it — identity unchanged.

Real lab (the verify tests' declaration: inventory/lab.yaml as ``cfverif2`` in 198.19.96.0/19),
real SSH with host keys checked, the real site playbook (limited to the nouveau role to stay quick)
and the real host checks (kernel, network).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lab_fixtures import skip_reason
from verify_lab_copy import on_host as on_lab_host
from verify_lab_copy import planned_lab, verify_lab_declaration

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
HOST = "su01-r02-gpu01"

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def test_replace_reimages_provisions_and_verifies_one_host(tmp_path: Path) -> None:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    from clusterforge.lab import down, status, up

    declaration = verify_lab_declaration(tmp_path)
    plan, topology = planned_lab(declaration)

    def on_host(script: str) -> str:
        return on_lab_host(topology, HOST, script)

    down(topology.name)
    try:
        up(topology)
        before = {r.host: r.pid for r in status(topology)}
        old_id = on_host("cat /etc/machine-id")
        on_host("touch /root/made-before-the-rma")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.run([sys.executable, "-m", "clusterforge.cli", "replace", str(declaration), HOST,
                               "--target", "lab", "--tags", "nouveau", "-k", "kernel", "-k", "network"],
                              capture_output=True, text=True, env=env, timeout=900)
        assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
        assert f"replace {HOST}: provisioned and verified" in proc.stdout
        assert re.search(rf"provision +\d+s {HOST}: changed +task", proc.stderr), proc.stderr[-3000:]
        assert f"lab {HOST}: stopping and wiping it" in proc.stderr
        # a new machine, the same node: fresh image and machine-id, the planned name and addresses
        assert on_host("cat /etc/machine-id") != old_id
        assert on_host("test -e /root/made-before-the-rma && echo still || echo gone") == "gone"
        assert on_host("hostname") == HOST
        planned = next(d for d in plan.devices if d.name == HOST)
        have = on_host("ip -br addr")
        assert all(i.ip.split("/")[0] in have for i in planned.interfaces if i.ip and i.plane == "management")
        assert "blacklist nouveau" in on_host("cat /etc/modprobe.d/*nouveau*")
        after = {r.host: r.pid for r in status(topology)}
        assert after[HOST] != before[HOST]
        assert all(after[h] == before[h] for h in before if h != HOST)  # nothing else was touched
        # `clusterforge provision` on the replaced host: nothing left to change, progress per host on stderr
        again = subprocess.run([sys.executable, "-m", "clusterforge.cli", "provision", str(declaration),
                                "--limit", HOST, "--tags", "nouveau"], capture_output=True, text=True, env=env,
                               timeout=900)
        assert again.returncode == 0, again.stdout + again.stderr[-3000:]
        assert re.search(rf"^{HOST}: ok=\d+ changed=0 failed=0 unreachable=0$", again.stdout, re.M), again.stdout
        assert re.search(rf"provision +\d+s {HOST}: done, \d+ tasks \(ok=", again.stderr), again.stderr[-2000:]
    finally:
        down(topology.name)
