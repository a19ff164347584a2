"""`clusterforge health` and `clusterforge remediate` on the session's lab: real hosts (systemd-nspawn), real
kubelets and a real Slurm (the kube_cluster and slurm_cluster fixtures, on the converged lab), reached the way
an operator reaches a cluster that is not a stack of this machine: `--ssh-config` and `--kubeconfig`.

One scenario, in order, everything restored at the end (the fixtures are shared by the session):

1. every GPU server PASS, exit 0;
2. two faults in SU 1: rail0 down on one server (rack 1), the node exporter stopped on another (rack 2):
   both CRITICAL with the evidence that names the fault and the action drain, exit 1;
3. `remediate --observe`: both decisions printed (one act, one held by `max_out_per_su: 1`), nothing
   changes: both nodes schedulable in Kubernetes, not drained in Slurm;
4. `remediate --yes` (the copy's `remediation: {mode: act}`): the first server is cordoned in Kubernetes and
   DRAIN in Slurm with remediate's reason, its configuration is applied again (the site playbook, which does
   not bring a link an operator set down back up: it stays out), the second is held by the SU limit and
   left in service;
5. both repaired by hand: every server PASS;
6. `remediate --yes` returns the first server to service (uncordoned, resumed), recorded in the journal.

The SIMULATED Xid drill (a test of its own, on the same fixtures): an Xid 48 line (double-bit ECC, the catalog's
RESET_GPU bucket) written into one server's SIMULATED kernel log (the lab's hosts share the machine's kernel, so
the drill never touches the real one) gives it CRITICAL/reset_gpu, marked simulated; `remediate --yes` drains it,
runs the reset rung (SIMULATED: no GPU, said in the output and the journal), checks it PASS and returns it in one
run; then the command line of the continuous loop's service (`remediate --write-units`), run as its unit would
run it, finds nothing to do. Its times, fault to verdict, drained, repaired and returned, are printed.

The NVLink domain drill (issue 45): the drill's copy of the declaration says `nvlink_domain_nodes: 2`, so each
rack's two servers are one declared NVLink domain (the shared lab's own topology is not changed: only this
copy declares it, and its repair is the SIMULATED GPU reset, which renders and applies nothing). A SIMULATED
Xid 48 on one server of rack 1 takes BOTH servers out while one remediate run works: cordoned in Kubernetes
and drained in Slurm at the same moment (watched while the run goes), the faulty one reset (SIMULATED), both
checked and both returned (schedulable, IDLE); the journal records the domain, both nodes and the one tray
that needed the reset. Its times are printed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clusterforge.health.xid import SIMULATED_KERNEL_LOG, SIMULATED_MARK

pytestmark = [pytest.mark.lab, pytest.mark.slow]

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import CoreV1Api  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LINK_DOWN = "su01-r01-gpu01"  # rack 1: rail0 set down
EXPORTER_STOPPED = "su01-r02-gpu01"  # rack 2, the same SU: the node exporter stopped
XID_NODE = "su01-r02-gpu02"  # the Xid drill's server
# the NVLink domain drill: the drill's declaration makes each rack's two servers one NVLink domain
DOMAIN, DOMAIN_FAULT, DOMAIN_PEER = "su01-r01-nvd01", "su01-r01-gpu02", "su01-r01-gpu01"
EXPORTER = "prometheus-node-exporter"
STATE_SAVE = "/var/lib/slurm/slurmctld"  # slurmctld's StateSaveLocation (render/slurm/slurm_conf.py)


def _declaration(directory: Path, nvlink_domain_nodes: int | None = None) -> Path:
    """inventory/lab.yaml beside a copy of its catalog, with `remediation: {mode: act}` (the defaults else:
    one failure domain out per SU and per rack) and, for the NVLink domain drill, the SU's
    `nvlink_domain_nodes` (the drill's copy only: the shared lab's scheduler topology stays as it is)."""
    (directory / "inv").mkdir()
    shutil.copytree(ROOT / "inventory" / "catalog", directory / "inv" / "catalog")
    text = (ROOT / "inventory" / "lab.yaml").read_text()
    assert "\nremediation:" not in text and "nvlink_domain_nodes" not in text
    if nvlink_domain_nodes is not None:
        assert text.count("\n    racks: 2\n") == 1
        text = text.replace("\n    racks: 2\n", f"\n    racks: 2\n    nvlink_domain_nodes: {nvlink_domain_nodes}\n")
    path = directory / "inv" / "lab.yaml"
    path.write_text(text + "\nremediation: {mode: act, max_out_per_su: 1, max_out_per_rack: 1}\n")
    return path


def _cli(state: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
           "CLUSTERFORGE_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "clusterforge.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, stdin=subprocess.DEVNULL)


def _verdicts(run: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    document = json.loads(run.stdout)
    assert document["schema"] == "clusterforge.health/1"
    return {n["name"]: n for n in document["nodes"]}


def _bad(node: dict) -> list[str]:
    return [f"{e['status']} {e['check']}: {e['summary']}" for e in node["evidence"]
            if e["status"] in ("warn", "fail", "unknown")]


def _slurm(slurm_cluster, node: str) -> str:
    rc, out, err = slurm_cluster.sh(f"scontrol --oneliner show node {node}")
    assert rc == 0, err
    return out


def _slurm_state(slurm_cluster, node: str) -> str:
    return next(w.removeprefix("State=") for w in _slurm(slurm_cluster, node).split() if w.startswith("State="))


def _schedulable(core: CoreV1Api, node: str) -> bool:
    return not core.read_node(node).spec.unschedulable


def _saved_after(slurm_cluster, since: float, timeout_s: float = 30.0) -> None:
    """Wait until slurmctld has saved its node state after `since` (its clock): a later test that kills
    slurmctld must not bring back a DRAIN this test left behind (tests/lab_cluster/test_slurm.py)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rc, out, _ = slurm_cluster.sh(f"date -r {STATE_SAVE}/node_state +%s.%N")
        if rc == 0 and float(out) > since:
            return
        time.sleep(0.5)


def _link_up_command(lab_cluster, host: str, dev: str = "rail0") -> str:
    """`ip link set DEV up` and the host's planned routes through DEV again: setting a link down flushes its IPv4
    routes, and nothing in the lab re-adds them (a real host's network manager would); the fabric tests that
    share this cluster route over every rail."""
    (lab_host,) = [h for h in lab_cluster.topology.hosts if h.name == host]
    routes = [f"ip route replace {r.dst} via {r.via} dev {r.dev}" + (f" metric {r.metric}" if r.metric else "")
              for r in lab_host.routes if r.dev == dev]
    assert routes, f"{host} has no planned route through {dev}"
    return " && ".join([f"ip link set {dev} up", *routes])


def _simulated_xid48(kube_cluster, node: str) -> float:
    """Append a SIMULATED Xid 48 line to the node's simulated kernel log; the time of the fault."""
    line = (f"$(date -Is) {node} kernel: NVRM: Xid (PCI:0000:1b:00): 48, pid=0, name=cf-drill, An uncorrectable"
            f" double bit error (DBE) has been detected on GPU in the framebuffer. {SIMULATED_MARK}")
    fault = time.time()
    rc, _, err = kube_cluster.sh(node, f"mkdir -p {Path(SIMULATED_KERNEL_LOG).parent} &&"
                                       f" printf '%s\\n' \"{line}\" >> {SIMULATED_KERNEL_LOG}")
    assert rc == 0, err
    return fault


def _drill(tmp_path, kube_cluster, lab_cluster, stack: str, nvlink_domain_nodes: int | None = None):
    """A drill's declaration, state directory, API, `--target lab` options and remediate command line."""
    declaration = _declaration(tmp_path, nvlink_domain_nodes)
    # --alertmanager none: the drills judge what the hosts say; the session sets up Prometheus and Alertmanager
    # (monitoring_cluster) after this module, if at all, and a NodeDown raised by the stopped exporter would resolve
    # on Alertmanager's clock, not the drill's. Health reading the lab's Alertmanager: test_monitoring_live.py.
    where = ["--target", "lab", "--ssh-config", str(lab_cluster.ssh_config), "--alertmanager", "none"]
    remediate = ["remediate", str(declaration), "--stack", stack, *where,
                 "--kubeconfig", str(kube_cluster.kubeconfig)]
    return declaration, tmp_path / "state", CoreV1Api(kube_cluster.api), where, remediate


def test_health_and_remediate_on_the_lab(lab_converged, kube_cluster, slurm_cluster, lab_cluster, tmp_path):
    declaration, state, core, where, remediate = _drill(tmp_path, kube_cluster, lab_cluster, "lab-health")
    servers = set(lab_cluster.hosts)
    assert {LINK_DOWN, EXPORTER_STOPPED} <= servers
    for node in (LINK_DOWN, EXPORTER_STOPPED):  # what the end restores
        assert _schedulable(core, node), f"{node} is cordoned before the test"
        assert _slurm_state(slurm_cluster, node) == "IDLE", _slurm(slurm_cluster, node)

    def sh(host: str, command: str) -> str:
        rc, out, err = kube_cluster.sh(host, command)
        assert rc == 0, f"{host}: {command}: {err}"
        return out

    try:
        # 1. all healthy
        healthy = _cli(state, "health", str(declaration), *where, "--format", "json")
        verdicts = _verdicts(healthy)
        assert set(verdicts) == servers
        assert {n: v["verdict"] for n, v in verdicts.items()} == dict.fromkeys(servers, "PASS"), \
            {n: _bad(v) for n, v in verdicts.items()}
        assert healthy.returncode == 0, healthy.stderr[-3000:]
        for node in verdicts.values():  # what the lab cannot check says so: no GPU passed through
            checks = {e["check"]: e for e in node["evidence"]}
            assert checks["doctor:gpu-visible"]["status"] == "skip"
            assert checks["doctor:data-links"]["status"] == "ok"
            assert checks["services:kubelet"]["status"] == "ok" and checks["services:slurmd"]["status"] == "ok"

        # 2. two faults in SU 1
        sh(LINK_DOWN, "ip link set rail0 down")
        sh(EXPORTER_STOPPED, f"systemctl stop {EXPORTER}")
        broken = _cli(state, "health", str(declaration), *where, "--format", "json")
        verdicts = _verdicts(broken)
        assert broken.returncode == 1, broken.stderr[-3000:]
        link = verdicts[LINK_DOWN]
        assert (link["verdict"], link["action"]) == ("CRITICAL", "drain"), _bad(link)
        links = {e["check"]: e for e in link["evidence"]}["doctor:data-links"]
        assert (links["status"], links["action"]) == ("fail", "drain") and "rail0 is down" in links["summary"], links
        assert any(e["check"].startswith("verify:") and e["status"] == "fail" and "rail0" in e["check"] + e["summary"]
                   for e in link["evidence"]), _bad(link)
        exporter = verdicts[EXPORTER_STOPPED]
        assert (exporter["verdict"], exporter["action"]) == ("CRITICAL", "drain"), _bad(exporter)
        stopped = {e["check"]: e for e in exporter["evidence"]}[f"services:{EXPORTER}"]
        assert stopped["status"] == "fail" and stopped["action"] == "drain", stopped
        assert {n: v["verdict"] for n, v in verdicts.items() if n not in (LINK_DOWN, EXPORTER_STOPPED)} == \
            dict.fromkeys(servers - {LINK_DOWN, EXPORTER_STOPPED}, "PASS")

        # 3. observe: said, recorded, nothing changed
        observed = _cli(state, *remediate, "--observe")
        assert observed.returncode == 1, observed.stdout + observed.stderr[-3000:]
        lines = observed.stdout.splitlines()
        assert any(line.startswith(f"OBSERVED  {LINK_DOWN} (act drain): ") for line in lines), lines
        assert any(line.startswith(f"OBSERVED  {EXPORTER_STOPPED} (hold drain): ") and "max_out_per_su: 1" in line
                   for line in lines), lines
        assert "would act (observe" in observed.stdout
        for node in (LINK_DOWN, EXPORTER_STOPPED):
            assert _schedulable(core, node)
            assert _slurm_state(slurm_cluster, node) == "IDLE", _slurm(slurm_cluster, node)

        # 4. act: the first server out in both schedulers, the second held by the SU limit
        acted = _cli(state, *remediate, "--yes", "--format", "json", timeout=1500)
        assert acted.returncode == 1, acted.stdout[-3000:] + acted.stderr[-3000:]
        document = json.loads(acted.stdout)
        assert document["mode"] == "act"
        decisions = {d["domain"]: d for d in document["decisions"]}
        assert (decisions[LINK_DOWN]["kind"], decisions[LINK_DOWN]["result"]) == ("act", "still-out"), decisions
        assert (decisions[EXPORTER_STOPPED]["kind"], decisions[EXPORTER_STOPPED]["result"]) == ("hold", "held")
        assert "SU 1 already has 1 failure domain(s) out" in decisions[EXPORTER_STOPPED]["why"]
        assert not _schedulable(core, LINK_DOWN)
        assert _schedulable(core, EXPORTER_STOPPED)
        shown = _slurm(slurm_cluster, LINK_DOWN)
        assert "DRAIN" in _slurm_state(slurm_cluster, LINK_DOWN) and "Reason=clusterforge remediate:" in shown, shown
        rc, sinfo, _ = slurm_cluster.sh(f"sinfo --noheader --Node --nodes={LINK_DOWN} --format='%T|%E'")
        assert rc == 0 and sinfo.split("\n")[0].startswith("drained|clusterforge remediate: "), sinfo
        assert "DRAIN" not in _slurm_state(slurm_cluster, EXPORTER_STOPPED)
        journal = state / "stacks" / "lab-health" / "remediation.jsonl"
        events = [(e["event"], e["domain"]) for e in map(json.loads, journal.read_text().splitlines())]
        assert [e for e, d in events if d == LINK_DOWN][-4:] == ["decided", "drained", "repaired", "checked"], events

        # 5. repaired by hand: every server PASS
        sh(LINK_DOWN, _link_up_command(lab_cluster, LINK_DOWN))
        sh(EXPORTER_STOPPED, f"systemctl start {EXPORTER}")
        repaired = _cli(state, "health", str(declaration), *where, "--format", "json")
        verdicts = _verdicts(repaired)
        assert {n: v["verdict"] for n, v in verdicts.items()} == dict.fromkeys(servers, "PASS"), \
            {n: _bad(v) for n, v in verdicts.items()}
        assert repaired.returncode == 0

        # 6. remediate returns the server it took out
        returned = _cli(state, *remediate, "--yes", "--format", "json")
        assert returned.returncode == 0, returned.stdout[-3000:] + returned.stderr[-3000:]
        (decision,) = json.loads(returned.stdout)["decisions"]
        assert (decision["domain"], decision["kind"], decision["result"]) == (LINK_DOWN, "resume", "returned")
        assert _schedulable(core, LINK_DOWN)
        assert _slurm_state(slurm_cluster, LINK_DOWN) == "IDLE", _slurm(slurm_cluster, LINK_DOWN)
        last = json.loads(journal.read_text().splitlines()[-1])
        assert (last["event"], last["nodes"], last["result"]) == ("resumed", [LINK_DOWN], "schedulable"), last
        again = _cli(state, *remediate, "--yes", "--format", "json")
        assert again.returncode == 0 and json.loads(again.stdout)["decisions"] == [], again.stdout
    finally:
        kube_cluster.sh(LINK_DOWN, _link_up_command(lab_cluster, LINK_DOWN))
        kube_cluster.sh(EXPORTER_STOPPED, f"systemctl start {EXPORTER}")
        since = float(slurm_cluster.sh("date +%s.%N")[1] or 0)
        for node in (LINK_DOWN, EXPORTER_STOPPED):
            if not _schedulable(core, node):
                core.patch_node(node, {"spec": {"unschedulable": None}})
            if "DRAIN" in _slurm_state(slurm_cluster, node):
                slurm_cluster.sh(f"scontrol update NodeName={node} State=RESUME")
        _saved_after(slurm_cluster, since)


def _unit_command(units: Path) -> tuple[list[str], dict[str, str]]:
    """The service's ExecStart words and Environment, as systemd reads them for plain paths (no quotes, no
    specifiers: asserted)."""
    import shlex

    (service,) = units.glob("*.service")
    text = service.read_text()
    start = next(line.removeprefix("ExecStart=") for line in text.splitlines() if line.startswith("ExecStart="))
    assert '"' not in start and "%" not in start and "$" not in start, start
    env = dict(shlex.split(line.removeprefix("Environment="))[0].split("=", 1) for line in text.splitlines()
               if line.startswith("Environment="))
    return start.split(), env


def test_simulated_xid_drill_is_reset_and_returned_then_the_loop_finds_nothing(
        lab_converged, kube_cluster, slurm_cluster, lab_cluster, tmp_path):
    declaration, state, core, where, remediate = _drill(tmp_path, kube_cluster, lab_cluster, "lab-xid")
    assert _schedulable(core, XID_NODE) and _slurm_state(slurm_cluster, XID_NODE) == "IDLE"
    try:
        fault = _simulated_xid48(kube_cluster, XID_NODE)
        # one remediate run: its own verdicts (the health gather) are the fault's verdict, its journal's `decided`
        acted = _cli(state, *remediate, "--yes", "--format", "json")
        assert acted.returncode == 0, acted.stdout[-3000:] + acted.stderr[-3000:]
        document = json.loads(acted.stdout)
        node = {n["name"]: n for n in document["nodes"]}[XID_NODE]
        assert (node["verdict"], node["action"]) == ("CRITICAL", "reset_gpu"), _bad(node)
        xid = {e["check"]: e for e in node["evidence"]}["kernel:xid-48"]
        assert (xid["status"], xid.get("simulated"), node.get("simulated")) == ("fail", True, True), node
        assert [n["verdict"] for n in document["nodes"] if n["name"] != XID_NODE] == ["PASS"] * 3
        (decision,) = document["decisions"]
        assert (decision["domain"], decision["kind"], decision["action"], decision["result"]) == \
            (XID_NODE, "act", "reset_gpu", "returned"), decision
        assert "SIMULATED: the lab has no GPU" in decision["detail"]
        assert f"remediate {XID_NODE}: reset_gpu SIMULATED: the lab has no GPU" in acted.stderr
        journal = [json.loads(x) for x in (state / "stacks" / "lab-xid" / "remediation.jsonl").read_text().splitlines()]
        at = {e["event"]: e for e in journal}
        assert [e["event"] for e in journal] == ["decided", "drained", "repaired", "checked", "resumed"], journal
        assert at["repaired"]["simulated"].startswith("SIMULATED") and at["checked"]["result"] == {XID_NODE: "PASS"}
        assert _schedulable(core, XID_NODE) and _slurm_state(slurm_cluster, XID_NODE) == "IDLE"
        times = {k: at[e]["t"] - fault for k, e in
                 (("verdict", "decided"), ("drained", "drained"), ("repaired", "repaired"), ("returned", "resumed"))}
        print("SIMULATED Xid 48 drill on " + XID_NODE + ": " + ", ".join(f"{k} {v:.1f} s" for k, v in times.items())
              + " after the fault")

        # the continuous loop: the service's command line, in the unit's environment, finds nothing to do
        units = tmp_path / "units"
        wrote = _cli(state, *remediate, "--write-units", str(units), "--every", "60")
        assert wrote.returncode == 0, wrote.stderr[-2000:]
        argv, env = _unit_command(units)
        assert argv[-1] == "--yes" and env["CLUSTERFORGE_STATE_DIR"] == str(state)
        started = time.monotonic()
        looped = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, cwd=ROOT,
                                stdin=subprocess.DEVNULL)
        assert looped.returncode == 0, looped.stdout[-2000:] + looped.stderr[-3000:]
        assert "remediate: 0 decision(s), acted" in looped.stdout, looped.stdout
        print(f"the loop's service command: nothing to do, {time.monotonic() - started:.1f} s")
        again = [json.loads(x) for x in (state / "stacks" / "lab-xid" / "remediation.jsonl").read_text().splitlines()]
        assert len(again) == len(journal)  # the same journal, nothing new to record
    finally:
        kube_cluster.sh(XID_NODE, f"rm -f {SIMULATED_KERNEL_LOG}")
        since = float(slurm_cluster.sh("date +%s.%N")[1] or 0)
        if not _schedulable(core, XID_NODE):
            core.patch_node(XID_NODE, {"spec": {"unschedulable": None}})
        if "DRAIN" in _slurm_state(slurm_cluster, XID_NODE):
            slurm_cluster.sh(f"scontrol update NodeName={XID_NODE} State=RESUME")
        _saved_after(slurm_cluster, since)


def _domain_out(core: CoreV1Api, slurm_cluster, nodes: tuple[str, ...]) -> dict[str, tuple[bool, str]]:
    """Per node: cordoned in Kubernetes, and Slurm's state as sinfo names it (drained, draining, idle...)."""
    rc, out, err = slurm_cluster.sh(f"sinfo --noheader --Node --nodes={','.join(nodes)} --format='%N|%T'")
    assert rc == 0, err
    slurm = dict(line.split("|", 1) for line in out.splitlines() if "|" in line)
    return {n: (not _schedulable(core, n), slurm.get(n, "?")) for n in nodes}


def test_a_fault_on_one_node_of_an_nvlink_domain_drains_and_returns_the_whole_domain(
        lab_converged, kube_cluster, slurm_cluster, lab_cluster, tmp_path):
    declaration, state, core, where, remediate = _drill(tmp_path, kube_cluster, lab_cluster, "lab-nvlink",
                                                        nvlink_domain_nodes=2)
    members = (DOMAIN_PEER, DOMAIN_FAULT)
    for node in members:
        assert _schedulable(core, node) and _slurm_state(slurm_cluster, node) == "IDLE", _slurm(slurm_cluster, node)
    try:
        fault = _simulated_xid48(kube_cluster, DOMAIN_FAULT)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
               "CLUSTERFORGE_STATE_DIR": str(state)}
        out, err_path = tmp_path / "remediate.out", tmp_path / "remediate.err"
        with out.open("w") as stdout_file, err_path.open("w") as stderr_file:  # files: a pipe could fill and stall
            run = subprocess.Popen([sys.executable, "-m", "clusterforge.cli", *remediate, "--yes", "--format", "json"],
                                   stdout=stdout_file, stderr=stderr_file, text=True, env=env,
                                   stdin=subprocess.DEVNULL)
        # watched while the run goes: the whole domain out in both schedulers at one moment
        seen: dict[str, tuple[bool, str]] = {}
        both_out = None
        deadline = time.monotonic() + 600
        while run.poll() is None and time.monotonic() < deadline:
            now = _domain_out(core, slurm_cluster, members)
            if both_out is None and all(cordoned and slurm == "drained" for cordoned, slurm in now.values()):
                both_out, seen = time.time(), now
            time.sleep(0.3)
        run.wait(timeout=60)
        stdout, stderr = out.read_text(), err_path.read_text()
        assert run.returncode == 0, stdout[-3000:] + stderr[-3000:]
        assert both_out is not None, "the domain was never seen out in both schedulers at once"
        assert seen == dict.fromkeys(members, (True, "drained")), seen

        document = json.loads(stdout)
        verdicts = {n["name"]: n for n in document["nodes"]}
        assert (verdicts[DOMAIN_FAULT]["verdict"], verdicts[DOMAIN_FAULT]["action"]) == ("CRITICAL", "reset_gpu")
        assert verdicts[DOMAIN_PEER]["verdict"] == "PASS", _bad(verdicts[DOMAIN_PEER])
        (decision,) = document["decisions"]
        assert (decision["domain"], decision["nodes"], decision["targets"], decision["kind"], decision["action"],
                decision["result"]) == (DOMAIN, list(members), [DOMAIN_FAULT], "act", "reset_gpu", "returned"), decision
        assert f"NVLink domain {DOMAIN}: all 2 trays go out as one" in decision["why"], decision
        assert "SIMULATED: the lab has no GPU" in decision["detail"]
        for node in members:  # both returned
            assert _schedulable(core, node), node
            assert _slurm_state(slurm_cluster, node) == "IDLE", _slurm(slurm_cluster, node)

        journal = [json.loads(x) for x in (state / "stacks" / "lab-nvlink" / "remediation.jsonl").read_text()
                   .splitlines()]
        assert [e["event"] for e in journal] == ["decided", "drained", "repaired", "checked", "resumed"], journal
        at = {e["event"]: e for e in journal}
        assert all(e["domain"] == DOMAIN and e["nodes"] == list(members) for e in journal), journal
        assert at["repaired"]["targets"] == [DOMAIN_FAULT] and at["repaired"]["simulated"].startswith("SIMULATED")
        assert at["checked"]["result"] == dict.fromkeys(members, "PASS")
        times = {"verdict": at["decided"]["t"], "drained": at["drained"]["t"], "seen out": both_out,
                 "repaired": at["repaired"]["t"], "returned": at["resumed"]["t"]}
        print(f"NVLink domain drill ({DOMAIN}: {', '.join(members)}; SIMULATED Xid 48 on {DOMAIN_FAULT}): "
              + ", ".join(f"{k} {v - fault:.1f} s" for k, v in times.items()) + " after the fault")
    finally:
        kube_cluster.sh(DOMAIN_FAULT, f"rm -f {SIMULATED_KERNEL_LOG}")
        since = float(slurm_cluster.sh("date +%s.%N")[1] or 0)
        for node in members:
            if not _schedulable(core, node):
                core.patch_node(node, {"spec": {"unschedulable": None}})
            if "DRAIN" in _slurm_state(slurm_cluster, node):
                slurm_cluster.sh(f"scontrol update NodeName={node} State=RESUME")
        _saved_after(slurm_cluster, since)
