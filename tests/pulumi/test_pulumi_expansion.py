"""The lab declaration through the real engine, target `files`: up, idempotence, adding and removing an SU.

One stack walks the whole life cycle once (each engine run costs seconds); the tests then each
check one fact about it. Provisioning and verification are off: no lab hosts, no Ansible here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from pulumi_fixtures import copy_inventory, with_second_su

from clusterforge.loading import load_and_plan
from clusterforge.plan import Plan
from clusterforge.pulumi import automation
from clusterforge.pulumi.automation import Backend, StackRun
from clusterforge.pulumi.program import SERVER_KINDS, SWITCH_KINDS
from clusterforge.render import render_all

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

STACK = "lab-files"
CONFIG_TYPE = "pulumi-python:dynamic/clusterforge:SwitchConfig"


@dataclass
class Journey:
    plan_one: Plan
    files_one: dict[str, str]
    plan_two: Plan
    files_two: dict[str, str]
    first_up: StackRun
    steady: StackRun
    add_preview: StackRun
    add_up: StackRun
    remove_preview: StackRun
    remove_up: StackRun
    cli_preview: dict
    destroyed: StackRun
    on_disk: dict[str, dict[str, str]]


def _disk(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _switch_files(files: dict[str, str]) -> dict[str, str]:
    return {path.removeprefix("switches/"): text for path, text in files.items() if path.startswith("switches/")}


def _cli_preview_json(inventory: Path, backend: Backend) -> dict:
    env = {**os.environ, "CLUSTERFORGE_STATE_DIR": str(backend.state_dir), "CLUSTERFORGE_BACKEND_URL": backend.url}
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "clusterforge"), "preview", str(inventory), "--stack", STACK,
         "--target", "files", "--no-provision", "--no-verify", "--json"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def journey(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Journey:
    work = tmp_path_factory.mktemp("lab-files")
    inventory = copy_inventory(work / "inventory")
    switch_dir = work / "switch-configs"
    original = inventory.read_text()
    spec, plan_one, _ = load_and_plan(inventory)
    files_one = render_all(plan_one)
    settings = {"inventory": str(inventory), "target": "files", "provision": "false", "verify": "false",
                "switchConfigDir": str(switch_dir)}
    stack = automation.open_stack(STACK, settings, backend)
    on_disk: dict[str, dict[str, str]] = {}

    first_up = automation.up(stack)
    on_disk["first_up"] = _disk(switch_dir)
    steady = automation.preview(stack)

    inventory.write_text(with_second_su(original))
    spec_two, plan_two, _ = load_and_plan(inventory)
    files_two = render_all(plan_two)
    add_preview = automation.preview(stack)
    add_up = automation.up(stack)
    on_disk["add_up"] = _disk(switch_dir)

    inventory.write_text(original)
    remove_preview = automation.preview(stack)
    remove_up = automation.up(stack)
    on_disk["remove_up"] = _disk(switch_dir)
    cli_preview = _cli_preview_json(inventory, backend)

    destroyed = automation.destroy(stack)
    on_disk["destroyed"] = _disk(switch_dir)
    return Journey(plan_one, files_one, plan_two, files_two, first_up, steady, add_preview, add_up,
                   remove_preview, remove_up, cli_preview, destroyed, on_disk)


def _names(run: StackRun, op: str) -> set[str]:
    return {step.name for step in run.summary.by_op().get(op, [])}


def _su_resources(plan: Plan, files: dict[str, str], su: int) -> set[str]:
    """Every resource the stack declares for SU `su`: the SU, its racks, PDUs, servers, switches, configs."""
    racks = {r.name for r in plan.racks if r.su == su}
    devices = {d.name for d in plan.devices if d.su == su and d.kind in SERVER_KINDS + SWITCH_KINDS}
    configs = {f"{d.name}-config" for d in plan.devices
               if d.su == su and d.kind in SWITCH_KINDS and any(p.startswith(f"switches/{d.name}/") for p in files)}
    pdus = {p.name for p in plan.pdus if p.rack in racks}
    return {f"su{su:02d}"} | racks | devices | configs | pdus


def _changed_switch_configs(journey: Journey) -> set[str]:
    """Switches whose rendered bytes differ with SU 2 (new downlinks on spines and aggregation switches)."""
    one, two = _switch_files(journey.files_one), _switch_files(journey.files_two)
    names = {path.split("/", 1)[0] for path in one}
    return {f"{n}-config" for n in names
            if {p: t for p, t in one.items() if p.startswith(n + "/")}
            != {p: t for p, t in two.items() if p.startswith(n + "/")}}  # fmt: skip


def test_up_declares_one_component_per_planned_object(journey: Journey) -> None:
    plan = journey.plan_one
    per_type = journey.first_up.summary.per_type()
    created = {rtype: counts["create"] for rtype, counts in per_type.items()}
    switches = [d for d in plan.devices if d.kind in SWITCH_KINDS]
    assert created["clusterforge:site:Site"] == 1
    assert created["clusterforge:network:Network"] == len(plan.fabric)
    assert created["clusterforge:su:ScalableUnit"] == len(plan.summary.scalable_units)
    assert created["clusterforge:facility:Rack"] == len(plan.racks)
    assert created["clusterforge:facility:Pdu"] == len(plan.pdus)
    assert created["clusterforge:compute:Server"] == len([d for d in plan.devices if d.kind in SERVER_KINDS])
    assert created["clusterforge:fabric:Switch"] == len(switches)
    assert created[CONFIG_TYPE] == len({p.split("/")[1] for p in journey.files_one if p.startswith("switches/")})


def test_resource_count_is_per_device_not_per_address(journey: Journey) -> None:
    """Stack + dynamic provider + Site + Networks + SUs + racks + PDUs + servers + switches + configs."""
    plan = journey.plan_one
    configs = len({p.split("/")[1] for p in journey.files_one if p.startswith("switches/")})
    devices = len([d for d in plan.devices if d.kind in SERVER_KINDS + SWITCH_KINDS])
    expected = 2 + 1 + len(plan.fabric) + len(plan.summary.scalable_units) + len(plan.racks) + len(plan.pdus)
    assert journey.first_up.summary.count("create") == expected + devices + configs


def test_up_writes_every_rendered_switch_config(journey: Journey) -> None:
    assert journey.on_disk["first_up"] == _switch_files(journey.files_one)


def test_second_preview_changes_nothing(journey: Journey) -> None:
    assert journey.steady.summary.changes == 0
    assert journey.steady.summary.count("same") == journey.first_up.summary.count("create")


def test_adding_an_su_creates_exactly_its_resources(journey: Journey) -> None:
    assert _names(journey.add_preview, "create") == _su_resources(journey.plan_two, journey.files_two, 2)


def test_adding_an_su_replaces_and_deletes_nothing(journey: Journey) -> None:
    assert journey.add_preview.summary.count("replace") == 0
    assert journey.add_preview.summary.count("delete") == 0


def test_adding_an_su_updates_nothing(journey: Journey) -> None:
    """Spines, cores and aggregation switches are provisioned for the envelope: their configs stay put."""
    assert _changed_switch_configs(journey) == set()
    assert _names(journey.add_preview, "update") == set()
    assert journey.add_preview.summary.count("update") == 0


def test_up_after_adding_an_su_writes_its_configs(journey: Journey) -> None:
    assert journey.add_up.summary.count("create") == len(_su_resources(journey.plan_two, journey.files_two, 2))
    assert journey.on_disk["add_up"] == _switch_files(journey.files_two)


def test_removing_the_su_deletes_exactly_its_resources(journey: Journey) -> None:
    assert _names(journey.remove_preview, "delete") == _su_resources(journey.plan_two, journey.files_two, 2)
    assert journey.remove_preview.summary.count("create") == 0
    assert journey.remove_preview.summary.count("replace") == 0
    assert _names(journey.remove_preview, "update") == set()


def test_removing_the_su_removes_its_files(journey: Journey) -> None:
    assert journey.on_disk["remove_up"] == _switch_files(journey.files_one)


def test_cli_preview_json_after_apply_is_empty(journey: Journey) -> None:
    result = journey.cli_preview
    assert (result["create"], result["update"], result["replace"], result["delete"]) == ([], [], [], [])
    assert result["same"] == journey.first_up.summary.count("create")


def test_destroy_removes_every_written_file(journey: Journey) -> None:
    assert journey.on_disk["destroyed"] == {}
    assert journey.destroyed.summary.count("delete") == journey.first_up.summary.count("create")
