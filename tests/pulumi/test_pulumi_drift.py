"""`clusterforge drift` and `up` on a stack whose delivered switch configs were changed by hand — real engine.

The stack delivers the lab declaration's switch configs to a directory (files target). Editing one
file is drift: `drift` names the switch and the file, exits 1 and changes nothing; `up` writes the
rendered file again; `drift` is then clean (exit 0).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pulumi_fixtures import LAB_INVENTORY, run_cli

from clusterforge.pulumi import automation

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

STACK = "drift"


def _cli(backend, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(backend, *args, timeout=600)


def test_drift_is_reported_without_change_and_up_repairs_it(backend, tmp_path: Path) -> None:
    configs = tmp_path / "switch-configs"
    handle = automation.open_stack(STACK, {"inventory": str(LAB_INVENTORY), "target": "files", "provision": "false",
                                           "verify": "false", "switchConfigDir": str(configs)}, backend)
    automation.up(handle)
    clean = _cli(backend, "drift", str(LAB_INVENTORY), "--stack", STACK)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "no drift" in clean.stdout

    edited = configs / "spine-01" / "frr.conf"
    rendered = edited.read_text()
    edited.write_text(rendered.replace("router bgp", "router bgp 64999 ! hand edit\n!router bgp", 1))
    (configs / "su01-leaf-rail0" / "frr.conf").unlink()
    found = _cli(backend, "drift", str(LAB_INVENTORY), "--stack", STACK)
    assert found.returncode == 1, found.stdout + found.stderr
    assert f"DRIFT switch spine-01: {edited} differs from the rendered config" in found.stdout
    assert f"DRIFT switch su01-leaf-rail0: {configs / 'su01-leaf-rail0' / 'frr.conf'} is missing" in found.stdout
    assert "update: " in found.stdout and "spine-01-config" in found.stdout
    assert "hand edit" in edited.read_text()  # drift changed nothing
    assert not (configs / "su01-leaf-rail0" / "frr.conf").exists()

    repaired = _cli(backend, "up", str(LAB_INVENTORY), "--stack", STACK, "--target", "files", "--no-provision",
                    "--no-verify", "--yes")
    assert repaired.returncode == 0, repaired.stderr
    assert edited.read_text() == rendered
    assert _cli(backend, "drift", str(LAB_INVENTORY), "--stack", STACK).returncode == 0
