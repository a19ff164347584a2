"""The scheduler drivers (clusterforge.schedulers) against the parts they describe: the registry against the
declaration's schema, each driver's rendering against the rendered tree, its application against the
playbooks, roles and Pulumi components, its queues against the plan; the node sequence `replace` and `roll`
run through every reached scheduler, on Slurm's own drain code answering a scripted scontrol."""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import get_args

import pytest
import yaml

from clusterforge import paths
from clusterforge.loading import load_and_plan
from clusterforge.model import slurm as slurm_model
from clusterforge.plan import Plan
from clusterforge.render import render_tree
from clusterforge.schedulers import (
    SCHEDULERS,
    DrainRefused,
    Reach,
    ResumeFailed,
    Unreachable,
    controls,
    declared,
    drain_nodes,
    driver_for,
    resume_nodes,
)
from clusterforge.schedulers.slurm.control import SlurmControl
from clusterforge.schedulers.slurm.remote import Runner
from clusterforge.targets import SSH
from clusterforge.vocab import DeviceKind

ROOT = Path(__file__).resolve().parents[2]


@cache
def lab_plan() -> Plan:  # schedulers: [kubernetes, slurm]
    return load_and_plan(ROOT / "inventory" / "lab.yaml")[1]


def test_one_driver_per_declarable_scheduler():
    assert tuple(SCHEDULERS) == slurm_model.SCHEDULERS == get_args(slurm_model.SchedulerName)
    assert all(driver_for(name).name == name for name in SCHEDULERS)
    with pytest.raises(ValueError, match="unknown scheduler 'pbs'"):
        driver_for("pbs")


def test_declared_follows_the_plan():
    plan = lab_plan()
    assert [d.name for d in declared(plan)] == ["kubernetes", "slurm"]
    assert [d.name for d in declared(replace(plan, schedulers=("slurm",)))] == ["slurm"]


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_a_driver_renders_what_the_tree_writes(name):
    plan = lab_plan()
    driver = SCHEDULERS[name]
    files = render_tree(plan).files()
    own = {f"{driver.rendering.directory}/{path}": text for path, text in driver.rendering.files(plan).items()}
    assert own, f"{name} renders nothing for the lab"
    assert {path: files[path] for path in own} == own
    assert not [p for p in files if p.startswith(f"{driver.rendering.directory}/") and p not in own]
    control = next(d.name for d in plan.devices if d.kind == DeviceKind.CONTROL)
    assert driver.rendering.host_var in yaml.safe_load(render_tree(plan).host_vars(control))


def _playbook_roles(playbook: Path) -> set[str]:
    plays = yaml.safe_load(playbook.read_text())
    return {r["role"] if isinstance(r, dict) else r for play in plays for r in play.get("roles", [])}


def _component_tokens() -> set[str]:
    tokens = set()
    for path in (paths.checkout_root() / "src" / "clusterforge" / "pulumi").rglob("component.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                tokens.add(node.args[0].value)
    return tokens


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_a_driver_applies_through_its_playbook_roles_and_component(name):
    application = SCHEDULERS[name].application
    roles = set().union(*(_playbook_roles(paths.playbooks_dir() / playbook)
                          for playbook in (application.playbook, *application.more_playbooks)))
    assert set(application.roles) <= roles
    assert all((paths.roles_dir() / role / "tasks" / "main.yml").is_file() for role in application.roles)
    assert application.component in _component_tokens()


def test_the_playbooks_are_the_pulumi_steps_own():
    from clusterforge.pulumi.kube.component import NODES_PLAYBOOK
    from clusterforge.pulumi.program import KUBERNETES_PLAYBOOK
    from clusterforge.pulumi.slurm.wiring import SLURM_PLAYBOOK

    assert SCHEDULERS["kubernetes"].application.playbook == KUBERNETES_PLAYBOOK
    assert SCHEDULERS["kubernetes"].application.more_playbooks == (NODES_PLAYBOOK,)
    assert SCHEDULERS["slurm"].application.playbook == SLURM_PLAYBOOK


def test_queues_are_the_plans_quotas_partitions_and_accounts():
    plan = lab_plan()
    assert plan.slurm is not None
    kube = SCHEDULERS["kubernetes"].queues(plan)
    assert [(q.name, q.kind, q.gpus) for q in kube] == [(t.name, "ResourceQuota", t.gpus) for t in plan.services.teams]
    slurm = SCHEDULERS["slurm"].queues(plan)
    assert [(q.name, q.nodes) for q in slurm if q.kind == "partition"] == [
        (p.name, p.nodes) for p in plan.slurm.partitions]
    assert [(q.name, q.gpus) for q in slurm if q.kind == "account"] == [(a.name, a.gpus) for a in plan.slurm.accounts]
    assert SCHEDULERS["slurm"].queues(replace(plan, slurm=None)) == ()


def test_a_run_reaches_only_the_schedulers_it_is_given_the_means_for():
    plan = lab_plan()
    assert controls(Reach(plan, SSH, skip=frozenset({"slurm"}))) == ()  # no kubeconfig, Slurm turned off
    (slurm,) = controls(Reach(plan, SSH))
    assert plan.slurm is not None and slurm.scheduler == "slurm"
    assert {n.name for n in plan.slurm.nodes} == {d.name for d in plan.devices if slurm.manages(d.name)}
    assert not slurm.manages(next(d.name for d in plan.devices if d.kind == DeviceKind.CONTROL))


def test_a_kubeconfig_for_a_cluster_without_kubernetes_is_refused(tmp_path):
    plan = replace(lab_plan(), schedulers=("slurm",))
    with pytest.raises(Unreachable, match="declaration runs no Kubernetes") as caught:
        controls(Reach(plan, SSH, kubeconfig=tmp_path / "kubeconfig", skip=frozenset({"slurm"})))
    assert caught.value.usage


class Scontrol:
    """slurmctld's answers for the commands ops/slurm_drain sends, node states kept per node."""

    def __init__(self, log: list[str], refuse_resume: str = "") -> None:
        self.state: dict[str, str] = {}
        self.log, self.refuse_resume = log, refuse_resume

    def __call__(self, command: str) -> tuple[int, str, str]:
        words = shlex.split(command)
        if words[:2] == ["scontrol", "update"]:
            node, state = (re.search(rf"{k}=(\S+)", command)[1] for k in ("NodeName", "State"))  # type: ignore[index]
            self.log.append(f"{state.lower()} {node}")
            if state == "RESUME" and node == self.refuse_resume:
                return 1, "", "slurm_update error: Invalid node name specified"
            self.state[node] = "IDLE+DRAIN" if state == "DRAIN" else "IDLE"
            return 0, "", ""
        if words[:3] == ["scontrol", "--oneliner", "show"]:
            return 0, f"NodeName={words[-1]} State={self.state.get(words[-1], 'IDLE')}", ""
        if words[0] == "squeue":
            return 0, "", ""
        return 1, "", f"unexpected command {command}"


def _control(name: str, run: Runner, nodes: set[str]) -> SlurmControl:
    return SlurmControl(run, frozenset(nodes), SSH, None, "lab", scheduler=name)


def test_nodes_leave_in_registry_order_and_come_back_in_reverse():
    log: list[str] = []
    first, second = _control("first", Scontrol(log), {"n1", "n2"}), _control("second", Scontrol(log), {"n2"})
    said: list[str] = []
    drain_nodes([first, second], ["n1", "n2"], "test", 5, said.append)
    resume_nodes([first, second], ["n1", "n2"], said.append)
    assert log == ["drain n1", "drain n2", "drain n2", "resume n2", "resume n1", "resume n2"]
    assert said[-3:] == ["second: n2: resumed (IDLE)", "first: n1: resumed (IDLE)", "first: n2: resumed (IDLE)"]
    assert any(line.startswith("first: n1: drained (0 job(s) waited for)") for line in said)


def test_a_scheduler_that_cannot_take_the_node_back_keeps_it_held_in_the_earlier_ones():
    log: list[str] = []
    first, second = _control("first", Scontrol(log), {"n1"}), _control("second", Scontrol(log, "n1"), {"n1"})
    drain_nodes([first, second], ["n1"], "test", 5, lambda _line: None)
    with pytest.raises(ResumeFailed, match="^second: resuming n1 in Slurm failed") as caught:
        resume_nodes([first, second], ["n1"], lambda _line: None)
    assert caught.value.node == "n1" and log[-1] == "resume n1" and log.count("resume n1") == 1


def test_a_drain_that_fails_names_the_node_and_what_it_is_left_in():
    def refusing(command: str) -> tuple[int, str, str]:
        return 1, "", "slurm_update error: Invalid node name specified"

    with pytest.raises(DrainRefused, match="draining n9 in Slurm is blocked: scontrol update failed") as caught:
        drain_nodes([_control("slurm", refusing, {"n9"})], ["n9"], "test", 5, lambda _line: None)
    assert caught.value.node == "n9" and caught.value.held == "the node stays drained in Slurm"


def test_roll_says_why_a_declared_scheduler_is_not_drained():
    from clusterforge.cli.roll import _drain_note
    from clusterforge.schedulers import SCHEDULERS

    kube, slurm = SCHEDULERS["kubernetes"], SCHEDULERS["slurm"]
    assert _drain_note(kube, {"kubernetes"}, True) == "drained in Kubernetes"
    assert _drain_note(kube, set(), True) == \
        "not reached (needs --kubeconfig FILE or --stack): not drained in Kubernetes"
    assert _drain_note(slurm, set(), False) == "--no-slurm: not drained in Slurm"
    assert _drain_note(slurm, set(), True).startswith("not reached (needs its controller")
