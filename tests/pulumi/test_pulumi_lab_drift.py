"""A lab host lost under a running stack: `drift` names it, `up` boots it again — real engine, real lab.

The stack is the verify tests' declaration as lab ``cfverif2`` (tests/verify_lab_copy.py: inventory/lab.yaml
in 198.19.96.0/19, so it runs beside other labs) on the lab target, without provisioning or checks (the lab alone).
Killing one host's systemd-nspawn leaves its systemd running (the lab reports it `orphaned`).
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from pulumi_fixtures import run_cli
from verify_lab_copy import LAB, planned_lab, verify_lab_declaration

from clusterforge.lab import missing_prerequisites, status

pytestmark = [pytest.mark.pulumi, pytest.mark.slow, pytest.mark.lab]

STACK = "labdrift"
VICTIM = "su01-r01-gpu02"


def _cli(backend, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(backend, *args, timeout=900)


def test_a_lost_lab_host_is_drift_and_up_boots_it(backend, tmp_path: Path) -> None:
    why = missing_prerequisites()
    if why:
        pytest.skip("the lab cannot run here: " + ", ".join(why))
    DECLARATION = verify_lab_declaration(tmp_path)  # noqa: N806
    _, topology = planned_lab(DECLARATION)
    up_args = ("up", str(DECLARATION), "--stack", STACK, "--target", "lab", "--no-provision", "--no-verify", "--yes")
    try:
        first = _cli(backend, *up_args)
        assert first.returncode == 0, first.stderr[-3000:]
        assert _cli(backend, "drift", str(DECLARATION), "--stack", STACK).returncode == 0

        rows = {r.host: r for r in status(topology)}
        os.kill(rows[VICTIM].pid, signal.SIGKILL)
        found = _cli(backend, "drift", str(DECLARATION), "--stack", STACK)
        assert found.returncode == 1, found.stdout + found.stderr
        assert f"DRIFT lab {LAB}: host {VICTIM} lost its container process" in found.stdout, found.stdout
        assert f"update: {LAB}" in found.stdout  # the Lab resource
        assert {r.host: r.state for r in status(topology)}[VICTIM] == "orphaned"  # drift changed nothing

        repaired = _cli(backend, *up_args)
        assert repaired.returncode == 0, repaired.stderr[-3000:]
        assert f"host {VICTIM} lost its container process" in repaired.stderr
        after = {r.host: r for r in status(topology)}
        assert after[VICTIM].state == "running" and after[VICTIM].sshd
        assert all(r.pid == rows[h].pid for h, r in after.items() if h != VICTIM)
        assert _cli(backend, "drift", str(DECLARATION), "--stack", STACK).returncode == 0
    finally:
        gone = _cli(backend, "destroy", "--stack", STACK, "--yes")
        assert gone.returncode == 0, gone.stderr[-3000:]
