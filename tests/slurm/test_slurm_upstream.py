"""The rendered Slurm files as the real Slurm 22.05 reads them (Debian 12's slurm-wlm: slurmctld, slurmd, scontrol).

slurmctld runs on loopback in a scratch directory on each rendered slurm.conf/topology.conf (only the lines that
place this machine's daemons rewritten, accounting off: tests/slurm/slurm_daemons.py); what ``scontrol`` then
reports (every node's CPU topology, memory and GRES, the partitions, the topology switches) must equal the plan,
and slurmctld's log may hold no error but those of a scratch controller on this machine. ``slurmd -G`` reads
gres.conf and cgroup.conf for a node, and a real slurmd registers a lab node with the controller.
scripts/setup.sh installs the binaries; without them these skip.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from slurm_daemons import Controller, Slurmd, missing_binaries, scratch_config, slurmd_gres_check

from clusterforge.loading import load_and_plan
from clusterforge.model import load_cluster
from clusterforge.model.catalog import CpuSpec
from clusterforge.model.control import Control
from clusterforge.model.scale import scaled
from clusterforge.model.slurm import Slurm
from clusterforge.plan import Plan, plan_cluster
from clusterforge.render.slurm.node_files import SIMULATED_GPU_DIR
from clusterforge.render.tree import render_tree

ROOT = Path(__file__).resolve().parents[2]
MISSING = missing_binaries()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(MISSING), reason=f"Slurm binaries missing: {MISSING};"
                                                    " scripts/setup.sh installs slurmctld, slurmd and slurm-client")]

# What a scratch controller on this machine logs whatever the configuration: a first start has no state
# files; accounting is off here (no slurmdbd); Debian's plugins recommend libpmix2 and the mail program,
# which a test machine need not have.
SCRATCH_ERRORS = re.compile(
    r"Could not open \w+ state file|Trying backup state save file|Configured MailProg is invalid"
    r"|accounting information gathered, but not stored|you have asked for it not to be stored"
    r"|mpi/pmix|MPI: Cannot create context")

# the examples declare Kubernetes settings: they stay declared beside Slurm
SLURM_ON = "\ncontrol:\n  nodes: 1\n  server_model: control-1u\nschedulers: [kubernetes, slurm]\n"


def plan_of(tmp_path: Path, example: str, extra: str = "") -> Plan:
    shutil.copytree(ROOT / "inventory" / "catalog", tmp_path / "catalog", dirs_exist_ok=True)
    path = tmp_path / example
    path.write_text((ROOT / "inventory" / example).read_text() + extra)
    return load_and_plan(path)[1]


def lab_plan() -> Plan:
    return load_and_plan(ROOT / "inventory" / "lab.yaml")[1]


def records(text: str) -> list[dict[str, str]]:
    """scontrol -o lines as key=value dicts (values have no spaces in what is compared here)."""
    return [dict(part.split("=", 1) for part in line.split() if "=" in part) for line in text.splitlines() if line]


def hostnames(ctl: Controller, expression: str) -> list[str]:
    return ctl.scontrol("show", "hostnames", expression).stdout.split()


@pytest.fixture
def controller(request, tmp_path: Path):
    plan: Plan = request.param(tmp_path) if callable(request.param) else request.param
    files = dict(render_tree(plan).slurm)
    conf = scratch_config(files, tmp_path / "slurm")
    ctl = Controller(conf)
    yield plan, ctl
    ctl.stop()


def superpod(tmp_path: Path) -> Plan:
    return plan_of(tmp_path, "superpod-4su.yaml", SLURM_ON)


def partitions_declared(tmp_path: Path) -> Plan:
    return plan_of(tmp_path, "roce-128gpu.yaml", SLURM_ON + "slurm:\n  partitions:\n"
                   "    - {name: train, sus: [1], max_time: '7-00:00:00', default_time: '1:00:00'}\n"
                   "    - {name: debug, nodes: [su01-r01-gpu01, su01-r02-gpu01], default: true, max_time: '30'}\n")


def three_tier(_: Path) -> Plan:
    """16 DGX B200 SUs: per-SU spines under the cores (a three-level tree), 512 nodes."""
    spec = scaled(load_cluster(ROOT / "inventory" / "dgx-b200-su.yaml")[0], 16)
    return plan_cluster(spec.model_copy(update={"schedulers": ["slurm"],
                                                "control": Control(nodes=1, server_model="control-1u")}))


CASES = [pytest.param(lambda _: lab_plan(), id="lab-simulated"), pytest.param(superpod, id="superpod-4su"),
         pytest.param(partitions_declared, id="roce-128gpu-partitions"),
         pytest.param(three_tier, id="dgx-b200-16su-three-tier")]


@pytest.mark.parametrize("controller", CASES, indirect=True)
def test_slurmctld_reads_every_node_as_planned(controller) -> None:
    plan, ctl = controller
    got = {r["NodeName"]: r for r in records(ctl.scontrol("-o", "show", "nodes").stdout)}
    assert set(got) == {n.name for n in plan.slurm.nodes}
    for node in plan.slurm.nodes:
        seen = got[node.name]
        assert (seen["Sockets"], seen["CoresPerSocket"], seen["ThreadsPerCore"], seen["RealMemory"]) == (
            str(node.sockets), str(node.cores_per_socket), str(node.threads_per_core), str(node.real_memory_mb))
        assert seen["Gres"] == node.gres and seen["CPUTot"] == str(node.sockets * node.cores_per_socket
                                                                    * node.threads_per_core)


@pytest.mark.parametrize("controller", CASES, indirect=True)
def test_slurmctld_reads_the_partitions_as_planned(controller) -> None:
    plan, ctl = controller
    got = {r["PartitionName"]: r for r in records(ctl.scontrol("-o", "show", "partitions").stdout)}
    assert list(got) == [p.name for p in plan.slurm.partitions]
    for part in plan.slurm.partitions:
        seen = got[part.name]
        assert hostnames(ctl, seen["Nodes"]) == list(part.nodes)
        assert seen["Default"] == ("YES" if part.default else "NO")
        assert seen["MaxTime"] == {"INFINITE": "UNLIMITED", "30": "00:30:00"}.get(part.max_time, part.max_time)
        if part.default_time:
            assert seen["DefaultTime"] == "01:00:00"


@pytest.mark.parametrize("controller", CASES, indirect=True)
def test_slurmctld_reads_the_topology_as_planned(controller) -> None:
    plan, ctl = controller
    assert plan.slurm.topology_plugin == "topology/tree"
    got = {r["SwitchName"]: r for r in records(ctl.scontrol("-o", "show", "topology").stdout)}
    assert set(got) == {s.name for s in plan.scheduler.tree}
    for switch in plan.scheduler.tree:
        if switch.nodes:
            assert hostnames(ctl, got[switch.name]["Nodes"]) == list(switch.nodes)
            assert got[switch.name]["Level"] == "0"
        else:
            assert sorted(hostnames(ctl, got[switch.name]["Switches"])) == sorted(switch.switches)


@pytest.mark.parametrize("controller", CASES, indirect=True)
def test_slurmctld_logs_no_error_of_the_configuration(controller) -> None:
    _, ctl = controller
    assert ctl.scontrol("show", "config").stdout.count("SelectType              = select/cons_tres") == 1
    assert [line for line in ctl.errors() if not SCRATCH_ERRORS.search(line)] == []


def test_slurmd_reads_the_labs_gres_and_cgroup_conf(tmp_path: Path) -> None:
    plan = lab_plan()
    conf = scratch_config(dict(render_tree(plan).slurm), tmp_path)
    for node in plan.slurm.nodes:
        result = slurmd_gres_check(conf, node.name)
        assert result.returncode == 0, result.stderr
        assert f"Gres Name=gpu Type={node.gpu_type} Count={node.gpus}" in result.stderr, result.stderr
        errors = [line for line in result.stderr.splitlines() if "error:" in line]
        # the placeholders are files, not devices: slurmd says so and counts them
        assert errors and all("is not a valid character or block device" in line for line in errors), errors


def test_a_real_slurmd_registers_a_simulated_lab_node_idle_with_its_gpus(tmp_path: Path) -> None:
    """The lab's node line (one core, 512 MB) and placeholder GPU files are met by a real slurmd on this
    machine: it registers the node IDLE with its GPUs (a count-only GPU would be dropped and the node drained)."""
    plan = lab_plan()
    ctl = Controller(scratch_config(dict(render_tree(plan).slurm), tmp_path))
    node = plan.slurm.nodes[0]
    slurmd = Slurmd(ctl, node.name)
    try:
        record = slurmd.registered()
    finally:
        slurmd.stop()
        ctl.stop()
    assert record.get("State") == "IDLE", record.get("Reason", record)
    assert record["Gres"] == node.gres == "gpu:h200:2"


def test_slurmd_reads_real_gres_up_to_the_missing_devices(tmp_path: Path) -> None:
    """Real hosts' gres.conf names /dev/nvidia0-7; this machine has none, so slurmd parses the file and
    stops exactly at the first device it cannot stat (a parse error would stop it earlier, naming the line)."""
    plan = superpod(tmp_path)
    conf = scratch_config(dict(render_tree(plan).slurm), tmp_path / "slurm")
    result = slurmd_gres_check(conf, plan.slurm.nodes[0].name)
    assert result.returncode == 1
    assert "can't stat gres.conf file /dev/nvidia0" in result.stderr and "Parse error" not in result.stderr


def test_the_check_can_fail(tmp_path: Path) -> None:
    """A rendered file slurmctld cannot read stops it, and the harness reports its log."""
    files = dict(render_tree(lab_plan()).slurm)
    files["topology.conf"] += "SwitchName=broken Nodes=no-such-node[01-02] Bogus=1\n"
    conf = scratch_config(files, tmp_path)
    with pytest.raises(RuntimeError, match="unrecognized key: Bogus"):
        Controller(conf, timeout_s=60).stop()


def this_machine() -> dict[str, int]:
    """What slurmd -C reads of this machine's hardware (its own node line)."""
    line = subprocess.run([shutil.which("slurmd") or "/usr/sbin/slurmd", "-C"], capture_output=True, text=True,
                          timeout=60, check=True).stdout.splitlines()[0]
    facts = dict(part.split("=", 1) for part in line.split())
    return {key: int(facts[key]) for key in ("SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory")}


@pytest.mark.parametrize(("pct", "state"), [(95, "IDLE"), (100, "DRAIN")])
def test_real_memory_rule_against_a_real_slurmd(tmp_path: Path, pct: int, state: str) -> None:
    """A server model stating this machine's CPUs (slurmd -C) and its memory rounded up to whole GiB, as a spec
    sheet states installed memory: at real_memory_pct 95 the rendered node line is met and the node registers
    IDLE; at 100 it asks for more than the kernel reports and Slurm drains it for low memory."""
    hw = this_machine()
    spec = load_cluster(ROOT / "inventory" / "lab.yaml")[0]
    model = spec.catalog.servers["hgx-h200-2gpu"]
    cpu = CpuSpec(sockets=hw["SocketsPerBoard"], cores_per_socket=hw["CoresPerSocket"],
                  threads_per_core=hw["ThreadsPerCore"])
    catalog = spec.catalog.model_copy(update={"servers": {**spec.catalog.servers, "hgx-h200-2gpu": model.model_copy(
        update={"cpu": cpu, "memory_gb": -(-hw["RealMemory"] // 1024)})}})
    plan = plan_cluster(spec.model_copy(update={"catalog": catalog, "slurm": Slurm(real_memory_pct=pct)}))
    files = dict(render_tree(plan).slurm)
    node = plan.slurm.nodes[0]
    assert node.real_memory_mb == -(-hw["RealMemory"] // 1024) * 1024 * pct // 100
    # real hardware names /dev/nvidia0-1, which this machine lacks: the same placeholders the lab uses
    files["gres.conf"] = files["gres.conf"].replace("/dev/nvidia", SIMULATED_GPU_DIR + "/nvidia")
    ctl = Controller(scratch_config(files, tmp_path))
    slurmd = Slurmd(ctl, node.name)
    try:
        record = slurmd.registered()
    finally:
        slurmd.stop()
        ctl.stop()
    if state == "IDLE":
        assert record.get("State") == "IDLE", record.get("Reason", record)
    else:
        assert "DRAIN" in record.get("State", "") and "Low RealMemory" in record["Reason"], record
