"""Helpers for the Pulumi tests (a plain module: conftest.py names clash across test directories)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clusterforge.paths import workspace
from clusterforge.pulumi.automation import Backend, engine_binary

REPO = workspace()

LAB_INVENTORY = REPO / "inventory" / "lab.yaml"
SRC = Path(__file__).resolve().parents[2] / "src"
SECOND_SU = "  - {id: 2, server_model: hgx-h200-2gpu, nodes: 4, racks: 2}\n"


def require_engine() -> None:
    if not engine_binary().exists():
        pytest.skip(f"{engine_binary()} is absent (build it with scripts/setup-pulumi.sh)")


def temp_backend(state: Path) -> Backend:
    """A state dir of its own: file:// backend, generated passphrase, per-stack work dirs."""
    (state / "pulumi").mkdir(parents=True, exist_ok=True)
    return Backend.resolve(state, f"file://{state / 'pulumi'}")


CONTROL_BLOCK = "control:\n  nodes: 1\n  server_model: control-1u\n"
SLURM_SCHEDULERS = "schedulers: [kubernetes, slurm]"
SLURM_BLOCK = "slurm:\n  hardware: simulated\n"


def copy_inventory(directory: Path, source: Path = LAB_INVENTORY, control: bool = False) -> Path:
    """The declaration and its catalog, copied so a test may edit it. Without `control` the lab's control
    node is left out: these tests exercise hosts, switches and the engine, and a Kubernetes control
    plane per test would cost minutes each (tests/lab_cluster/test_kubernetes.py shares one per session)."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source.parent / "catalog", directory / "catalog", dirs_exist_ok=True)
    target = directory / source.name
    text = source.read_text()
    if not control and source == LAB_INVENTORY:
        assert CONTROL_BLOCK in text, "inventory/lab.yaml changed shape; update tests/pulumi/pulumi_fixtures.py"
        text = text.replace(CONTROL_BLOCK, "", 1)
        # Slurm needs the control node too (slurmctld): without one the declaration schedules with Kubernetes
        assert SLURM_SCHEDULERS in text and SLURM_BLOCK in text, "inventory/lab.yaml changed shape"
        text = text.replace(SLURM_SCHEDULERS, "schedulers: [kubernetes]", 1).replace(SLURM_BLOCK, "", 1)
    target.write_text(text)
    return target


def with_second_su(text: str) -> str:
    """The lab declaration with SU 2 appended to scalable_units (the lab envelope allows two)."""
    anchor = "    racks: 2\n\nnetworks:"
    assert anchor in text, "inventory/lab.yaml changed shape; update tests/pulumi/pulumi_fixtures.py"
    return text.replace(anchor, "    racks: 2\n" + SECOND_SU + "\nnetworks:", 1)


def state_file(backend: Backend, stack: str) -> Path:
    return backend.state_dir / "pulumi" / ".pulumi" / "stacks" / "clusterforge-cluster" / f"{stack}.json"


def cli_env(backend: Backend) -> dict[str, str]:
    """This process's environment for a ``clusterforge`` child: the test's backend, and this checkout's
    src first on PYTHONPATH."""
    return {**os.environ, "CLUSTERFORGE_STATE_DIR": str(backend.state_dir), "CLUSTERFORGE_BACKEND_URL": backend.url,
            "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}


def run_cli(backend: Backend, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``clusterforge ARGS...`` in a child process on the test's backend, its output captured."""
    return subprocess.run([sys.executable, "-c", "from clusterforge.cli import main; main()", *args],
                          capture_output=True, text=True, env=cli_env(backend), timeout=timeout)


