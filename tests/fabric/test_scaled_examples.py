"""Every example grown to 64 SUs plans three-tier storage (and data, where one spine tier is too small),
passes the fabric checks (up-down reachability included) and renders; at 128 SUs the 64-port cores
of the examples cannot reach every SU, so the plan is refused with the fix named, and with chassis
cores declared it passes. Management/oob past one aggregation pair get an access core pair (a
chassis where the aggregation model has too few ports). Growing three-tier planes only creates.

512 SUs is the benchmark's size (benchmarks/scale_examples.py), not a test's.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from clusterforge.model import ClusterSpec, load_cluster
from clusterforge.model.checks import semantic_problems
from clusterforge.model.cluster import cross_problems
from clusterforge.model.scale import scaled
from clusterforge.plan import PlanError, plan_cluster
from clusterforge.plan.fabric_checks import check_fabric
from clusterforge.render.switches import render_switches

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.stem for p in (REPO / "inventory").glob("*.yaml"))
SWITCH_KINDS = ("leaf", "spine", "core", "mgmt-switch")


@cache
def example_spec(name: str) -> ClusterSpec:
    return load_cluster(REPO / "inventory" / f"{name}.yaml")[0]


def _unique_addresses(plan) -> list[str]:
    seen: dict[str, str] = {}
    clashes = []
    for device in plan.devices:
        for iface in device.interfaces:
            if not iface.ip:
                continue
            address = iface.ip.split("/")[0]
            where = f"{device.name}:{iface.name}"
            if address in seen and not iface.name.startswith("Vlan"):  # SVIs share only the gateway, never .ip
                clashes.append(f"{where} and {seen[address]} share {address}")
            seen.setdefault(address, where)
    return clashes


def test_every_example_is_covered():
    assert {"lab", "roce-128gpu", "superpod-4su"} <= set(EXAMPLES)


@pytest.mark.parametrize(("sus", "chassis"), [(64, False), (128, True)])
@pytest.mark.parametrize("name", EXAMPLES)
def test_scaled_example_plans_three_tiers_and_passes_fabric_checks(name, sus, chassis):
    spec = scaled(example_spec(name), sus, chassis_cores=chassis)
    # what the loader checks of a written-out what-if (make bench loads them): disjoint pools, pod blocks enough
    assert cross_problems(spec) + semantic_problems(spec) == []
    plan = plan_cluster(spec)
    assert plan.summary.scalable_units == tuple(range(1, sus + 1))
    assert check_fabric(plan) == []
    assert _unique_addresses(plan) == []
    storage = plan.fabric["storage"]
    spine_ports = spec.catalog.switches[spec.networks.storage.spine_model].ports
    # two tiers only where one spine tier takes every SU's storage leaf pair (a chassis spine)
    assert storage.tiers == 3 or storage.leaves <= spine_ports, f"{name} x {sus}: storage has {storage.tiers} tiers"
    assert storage.leaves == 2 * sus
    assert storage.tiers == 2 or storage.cores >= 2
    for plane in ("data", "storage"):
        worst = max(plan.fabric[plane].oversubscription.values())
        assert worst <= plan.fabric[plane].declared_oversubscription + 1e-9


@pytest.mark.parametrize("name", EXAMPLES)
def test_past_the_core_radix_the_plan_is_refused_with_the_fix(name):
    with pytest.raises(PlanError) as caught:
        plan_cluster(scaled(example_spec(name), 128))
    (loc, message), *_ = caught.value.problems
    assert loc[-1] == "core_model" and "A fourth tier is not planned" in message, (loc, message)


@pytest.mark.parametrize("name", EXAMPLES)
def test_scaled_example_renders_every_switch(name):
    spec = scaled(example_spec(name), 64)
    plan = plan_cluster(spec)
    files = render_switches(plan)
    rendered = {path.split("/")[1] for path in files}
    switches = {d.name for d in plan.devices if d.kind in SWITCH_KINDS}
    assert switches - rendered == set()
    assert all(text.strip() for text in files.values())


def _grown(envelope_spec: ClusterSpec, ids: range) -> ClusterSpec:
    units = [u for u in envelope_spec.scalable_units if u.id in ids]
    return envelope_spec.model_copy(update={"scalable_units": units})


def test_growing_a_three_tier_storage_plane_only_creates():
    full = scaled(example_spec("lab"), 64)
    base = _grown(full, range(1, 4))
    plan = plan_cluster(base)
    before = render_switches(plan)
    pods_before = {d.name for d in plan.devices if d.name.startswith("stor-pod")}
    assert plan.fabric["storage"].tiers == 3 and pods_before
    for last in (4, 5, 9):  # the first pod's last SU, then SUs that open new pods
        spec = _grown(full, range(1, last + 1))
        grown = plan_cluster(spec)
        assert check_fabric(grown) == []
        after = render_switches(grown)
        assert set(before) <= set(after), f"files disappeared adding SUs up to {last}"
        changed = sorted(path for path, text in before.items() if after[path] != text)
        assert changed == [], f"adding SUs up to {last} changed {changed[:5]}"
        assert set(after) - set(before)
    assert {d.name for d in grown.devices if d.name.startswith("stor-pod")} > pods_before
