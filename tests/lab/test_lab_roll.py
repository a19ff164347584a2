"""`clusterforge roll` on the lab: declared batches, a health gate per batch, a failing batch stops the roll.

Real lab (the verify tests' declaration as ``cfverif2``, with ``rollout_batch: 2`` on SU 1: two batches
of two, racks taken in turn), the real site playbook limited to the nouveau role, the real host
checks (kernel, network) as the gate. First a planned interface of a batch-1 host is down: batch 1
fails its gate, the roll stops naming that host and batch 2 is never provisioned. Then, repaired,
the whole roll passes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lab_fixtures import skip_reason
from verify_lab_copy import on_host, planned_lab, verify_lab_declaration

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
BROKEN = "su01-r02-gpu01"  # batch 1 is su01-r01-gpu01 + su01-r02-gpu01 (racks in turn)
LATER = ("su01-r01-gpu02", "su01-r02-gpu02")

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def _in_batches_of_two(text: str) -> str:
    text = text.replace("    racks: 2\n", "    racks: 2\n    rollout_batch: 2\n", 1)
    assert "rollout_batch: 2" in text
    return text


def test_roll_stops_at_a_failing_batch_then_passes_when_repaired(tmp_path: Path) -> None:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    from clusterforge.lab import down, up

    declaration = verify_lab_declaration(tmp_path, edit=_in_batches_of_two)
    _, topology = planned_lab(declaration)

    def on(host: str, script: str) -> str:
        return on_host(topology, host, script)

    def roll() -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
        return subprocess.run([sys.executable, "-m", "clusterforge.cli", "roll", str(declaration), "--target", "lab",
                               "--tags", "nouveau", "-k", "kernel", "-k", "network",
                               "--no-slurm"],  # this lab's hosts are booted, not converged: no slurmctld to drain in
                              capture_output=True, text=True, env=env, timeout=1200)

    blacklisted = "ls /etc/modprobe.d/ | grep -c nouveau || true"
    down(topology.name)
    try:
        up(topology)
        on(BROKEN, "ip link set rail0 down")
        stopped = roll()
        assert stopped.returncode == 1, stopped.stdout + stopped.stderr[-3000:]
        assert "batch 1/2 (SU 1 #1: su01-r01-gpu01, su01-r02-gpu01)" in stopped.stdout
        failed = rf"FAIL {BROKEN}: network::test_interface_up\[{BROKEN}/rail0\]"
        assert re.search(failed, stopped.stdout), stopped.stdout
        assert f"2 server(s) in later batches untouched ({', '.join(LATER)})" in stopped.stdout
        assert all(on(h, blacklisted) == "0" for h in LATER)  # batch 2 never ran
        assert "not reached (needs --kubeconfig FILE or --stack): not drained in Kubernetes" in stopped.stderr
        assert "drained in Slurm" not in stopped.stderr  # the verify lab declares Kubernetes only

        on(BROKEN, "ip link set rail0 up")
        passed = roll()
        assert passed.returncode == 0, passed.stdout + passed.stderr[-3000:]
        assert "roll: 4 server(s) changed in 2 batch(es), every batch healthy" in passed.stdout
        assert passed.stderr.index("batch 1/2") < passed.stderr.index("batch 2/2")
        assert all(on(h, blacklisted) != "0" for h in (*LATER, BROKEN))
    finally:
        down(topology.name)
