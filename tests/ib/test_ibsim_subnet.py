"""The real ibsim, OpenSM and infiniband-diags on the plan's InfiniBand plane (a SIMULATED subnet, unprivileged).

inventory/dgx-b200-su.yaml's data plane (24 QM9700, 256 HCAs, 512 cables) comes up as planned with the
rendered opensm.conf and partitions; a swapped pair of cables is named as a swap; a cable left out of the
net file is missing and leaves its HCA unreachable; a partition the SM was not given is not loaded; a pulled
spine cable is seen and routed around; every process and temporary directory is gone afterwards.
scripts/setup.sh installs the packages; without them these skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest

from clusterforge.ibcheck.runner import SimRun, ToolsMissing, find_tools, run_plane
from clusterforge.loading import load_and_plan
from clusterforge.plan import Plan
from clusterforge.plan.ib_subnet import IbCable, IbSubnet, ib_subnets
from clusterforge.render.switches._infiniband import opensm_partitions, opensm_settings
from clusterforge.render.switches.device_config import fabric_files

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventory" / "dgx-b200-su.yaml"


def _missing() -> str:
    try:
        find_tools()
    except ToolsMissing as exc:
        return str(exc)
    return ""


MISSING = _missing()
pytestmark = [pytest.mark.slow, pytest.mark.ibsim,
              pytest.mark.skipif(bool(MISSING), reason=f"missing Debian packages: {MISSING}; scripts/setup.sh "
                                 "installs them")]


@cache
def _plan() -> Plan:
    return load_and_plan(INVENTORY)[1]


def _subnet() -> IbSubnet:
    (subnet,) = ib_subnets(_plan())
    return subnet


def _fabric() -> dict[str, str]:
    return fabric_files(opensm_partitions(_plan()), opensm_settings(_plan()))


def _own_processes() -> list[str]:
    """ibsim/opensm processes this test process started (their environment carries its socket-name prefix)."""
    prefix = f"IBSIM_SOCKNAME=cf-ibsim-{os.getpid()}-".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if prefix in (proc / "environ").read_bytes():
                    found.append(f"{proc.name}: {(proc / 'comm').read_text().strip()}")
            except OSError:
                continue
    return found


def _workdirs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("cf-ibsim-*")}


@pytest.fixture(scope="module")
def as_planned() -> SimRun:
    before = _workdirs()
    run = run_plane(_subnet(), _fabric(), pull=True)
    assert _own_processes() == []
    assert _workdirs() <= before
    return run


def test_the_plane_comes_up_as_planned(as_planned):
    run = as_planned
    assert (run.switches, run.hcas, run.left_out) == (24, 256, None)
    assert (run.links.planned, run.links.discovered) == (512, 512)
    assert run.links.missing == run.links.unexpected == run.links.miswired == ()
    assert (run.sm_state, run.sm_priority) == ("MASTER", 15)  # the rendered sm_priority
    assert run.routing_engine == "ftree"  # the rendered engine, first of ftree,updn
    assert run.partitions == {"Default=0x7fff": True, "data=0x0064": True}
    assert run.partition_ports_checked == 8
    assert run.unreachable == 0
    assert run.ok


def test_a_pulled_spine_cable_is_seen_and_routed_around(as_planned):
    pulled = as_planned.pulled
    assert pulled is not None
    assert pulled.links is not None and pulled.links.missing == (pulled.cable,)
    assert pulled.detected and pulled.rerouted and pulled.unreachable == 0
    # one spine port short, the topology is no longer a pure fat tree: OpenSM falls back to Up/Down
    assert pulled.routing_engine == "updn"


def test_a_swapped_pair_of_cables_is_named():
    subnet = _subnet()
    a, b = subnet.cables[0], subnet.cables[1]  # su01-r01-gpu01 rail0 and rail1 on the rail0/rail1 leaves
    swapped = (IbCable(a.a, b.b, a.a_name, b.b_name), IbCable(b.a, a.b, b.a_name, a.b_name), *subnet.cables[2:])
    run = run_plane(subnet, _fabric(), cables=swapped, pull=False)
    assert not run.ok
    assert (run.links.planned, run.links.discovered) == (512, 512)
    (swap,) = run.links.miswired
    assert swap == ("swapped: planned su01-leaf-rail0:1/1 <-> su01-r01-gpu01:rail0 and su01-leaf-rail1:1/1 <-> "
                    "su01-r01-gpu01:rail1, found su01-leaf-rail0:1/1 <-> su01-r01-gpu01:rail1 and "
                    "su01-leaf-rail1:1/1 <-> su01-r01-gpu01:rail0")
    assert _own_processes() == []


def test_a_cable_not_built_is_missing_and_its_hca_unreachable():
    subnet = _subnet()
    run = run_plane(subnet, _fabric(), cables=subnet.cables[1:], pull=False)
    assert run.links.missing == ("su01-leaf-rail0:1/1 <-> su01-r01-gpu01:rail0",)
    assert run.links.unexpected == ()
    assert run.unreachable == 2 * 255  # to and from the cut-off HCA
    assert all("su01-r01-gpu01/rail0" in pair for pair in run.unreachable_sample)
    assert not run.ok


def test_a_partition_the_sm_was_not_given_is_not_loaded():
    deployed = dict(_fabric())
    deployed["opensm-partitions.conf"] = "\n".join(
        line for line in deployed["opensm-partitions.conf"].splitlines() if not line.startswith("data="))
    run = run_plane(_subnet(), _fabric(), given=deployed, pull=False)
    assert run.partitions == {"Default=0x7fff": True, "data=0x0064": False}
    assert run.links.missing == () and run.unreachable == 0
    assert not run.ok


def test_the_command_says_simulated_and_exits_by_the_result():
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "clusterforge.cli", "ib", "check", str(INVENTORY), "--no-pull"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("SIMULATED subnet")
    assert "links: planned 512, discovered 512, missing 0, unexpected 0, miswired 0" in done.stdout
    as_json = subprocess.run([*cmd, "--format", "json"], capture_output=True, text=True, env=env, timeout=120,
                             check=False)
    document = json.loads(as_json.stdout)
    assert as_json.returncode == 0 and document["simulated"] is True and document["ok"] is True
    (plane,) = document["planes"]
    assert (plane["plane"], plane["links"]["planned"], plane["sm_state"], plane["unreachable"]) == (
        "data", 512, "MASTER", 0)
    missing = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False,
                             env={**env, "CLUSTERFORGE_UMAD2SIM": "/nonexistent/libumad2sim.so"})
    assert missing.returncode == 3
    assert "libumad2sim0" in missing.stderr and "Traceback" not in missing.stderr
    usage = subprocess.run(cmd[:5], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert usage.returncode == 2


def test_an_sm_that_does_not_come_up_is_an_error_and_leaves_nothing_behind():
    from clusterforge.ibcheck.runner import SimFailed, Tools

    real = find_tools()
    before = _workdirs()
    broken = Tools({**real.paths, "opensm": shutil.which("false") or "/bin/false"}, real.umad2sim)
    with pytest.raises(SimFailed, match="opensm did not come up"):
        run_plane(_subnet(), _fabric(), tools=broken, pull=False)
    assert _own_processes() == []  # ibsim, already running, was stopped
    assert _workdirs() <= before
