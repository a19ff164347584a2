"""Two SU stacks of one cluster applied side by side against one PostgreSQL backend, and the same cluster as one
stack: the real CLI and Pulumi engine against a real server on loopback (state_fixtures).

The declaration is inventory/lab.yaml with a second SU and `state: {split: su}`, applied with the `files` target
(switch configs written into a directory; no hosts, no Ansible), the cheapest real `up`. The times are printed,
not asserted: on a machine shared with other work they say little more than that the two SU runs overlap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from state_fixtures import SRC, PgServer

from clusterforge.paths import workspace
from clusterforge.pulumi.automation import engine_binary

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

LAB = workspace() / "inventory" / "lab.yaml"
ONE_SU = "scalable_units:\n  - id: 1\n    server_model: hgx-h200-2gpu\n    nodes: 4\n    racks: 2\n"
SECOND_SU = "  - id: 2\n    server_model: hgx-h200-2gpu\n    nodes: 4\n    racks: 2\n"
APPLY = ("--target", "files", "--no-provision", "--no-verify", "--yes")
PASSPHRASE = "the team's passphrase"


def declarations(directory: Path) -> tuple[Path, Path]:
    """(split by SU, held whole): the same two-SU cluster."""
    shutil.copytree(workspace() / "inventory" / "catalog", directory / "catalog")
    text = LAB.read_text()
    assert ONE_SU in text
    text = text.replace(ONE_SU, ONE_SU + SECOND_SU, 1)
    split, whole = directory / "split.yaml", directory / "whole.yaml"
    split.write_text(text.replace("\nsite:\n", "\nstate: {split: su}\nsite:\n", 1))
    whole.write_text(text)
    return split, whole


def cli(state_dir: Path, pg: PgServer, *args: str) -> subprocess.Popen[str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PULUMI_CONFIG_PASSPHRASE", "CLUSTERFORGE_"))}
    env.update({"CLUSTERFORGE_STATE_DIR": str(state_dir), "CLUSTERFORGE_BACKEND_URL": pg.url(),
                "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
                "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])})
    return subprocess.Popen([sys.executable, "-c", "from clusterforge.cli import main; main()", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            stdin=subprocess.DEVNULL)


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str, float]:
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()  # and its engine, which exits with its parent's pipes closed
        proc.communicate()
        raise
    return proc.returncode, out, err, time.monotonic()


def test_two_su_stacks_apply_side_by_side(tmp_path: Path, pg: PgServer) -> None:
    if not engine_binary().exists():
        pytest.skip(f"{engine_binary()} is absent (build it with scripts/setup-pulumi.sh)")
    split, whole = declarations(tmp_path)
    state = tmp_path / "operator"

    # an SU stack reads the site stack's outputs: before the site stack is applied it is refused, naming it
    code, _, err, _ = finish(cli(state, pg, "up", str(split), "--stack", "lab", "--part", "su01", *APPLY))
    assert code == 1 and "reads the outputs of lab-site, not applied" in err and "--part site" in err, err[-2000:]

    start = time.monotonic()
    code, _, err, site_done = finish(cli(state, pg, "up", str(split), "--stack", "lab", "--part", "site", *APPLY))
    assert code == 0, err[-3000:]

    both = time.monotonic()
    runs = [cli(state, pg, "up", str(split), "--stack", "lab", "--part", part, *APPLY) for part in ("su01", "su02")]
    results = [finish(run) for run in runs]
    for code, out, err, _ in results:
        assert code == 0, err[-3000:]  # no lock in common: neither is refused
        assert "is being applied" not in err and "locked" not in err.lower()
        assert '"site": "lab"' in out  # the site stack's output, read through the stack reference
    su_times = [done - both for *_, done in results]
    side_by_side = max(su_times)

    one = time.monotonic()
    code, out, err, one_done = finish(cli(state, pg, "up", str(whole), "--stack", "whole", *APPLY))
    assert code == 0, err[-3000:]
    keys = pg.psql("SELECT key FROM pulumi_state WHERE key LIKE '%.pulumi/stacks/%.json' ORDER BY key;").split()
    stacks = [key.rsplit("/", 1)[-1].removesuffix(".json") for key in keys]
    assert {"lab-site", "lab-su01", "lab-su02", "whole"} <= set(stacks), stacks

    print(f"\nSU stacks against one PostgreSQL backend ({os.cpu_count()} CPUs, shared):"
          f"\n  site stack           {site_done - start:6.1f} s"
          f"\n  su01 | su02 together {side_by_side:6.1f} s (each {su_times[0]:.1f} s, {su_times[1]:.1f} s)"
          f"\n  split, end to end    {site_done - start + side_by_side:6.1f} s"
          f"\n  one stack, both SUs  {one_done - one:6.1f} s"
          f"\n  stacks in the backend: {' '.join(stacks)}")
