"""Cumulus startup.yaml against NVUE's object model as NVIDIA documents it (paths, identifiers,
value types and ranges: schemas/nvue_object_model.json), for every Cumulus switch of every example
and of the lab's Cumulus RoCE variant; and the check rejects what the reference does not allow."""

from __future__ import annotations

import pytest
from fabric_examples import REPO, example
from golden_cases import CASES, rendered

from clusterforge.plan.build import plan_cluster
from clusterforge.render.switches import render_switches
from clusterforge.render.switches.nvue_model import nvue_problems

INVENTORIES = sorted(p.stem for p in (REPO / "inventory").glob("*.yaml"))
FILES = [(name, path, example(name)[2][path]) for name in INVENTORIES for path in sorted(example(name)[2])
         if path.endswith("/startup.yaml")]
FILES += [("lab-cumulus-roce", path, text) for path, text in sorted(rendered("lab-cumulus-roce").items())
          if path.endswith("/startup.yaml")]


def test_the_check_covers_cumulus_routers_access_switches_and_roce():
    texts = [text for _, _, text in FILES]
    assert any("roce:" in t for t in texts) and any("bridge:" in t for t in texts)
    assert any("neighbor:" in t for t in texts)


@pytest.mark.parametrize(("case", "path", "text"), FILES, ids=[f"{c}/{p}" for c, p, _ in FILES])
def test_startup_yaml_fits_the_nvue_object_model(case, path, text):
    assert nvue_problems(text) == []


def _roce_leaf() -> str:
    return rendered("lab-cumulus-roce")["switches/su01-leaf-rail0/startup.yaml"]


@pytest.mark.parametrize(("old", "new", "problem"), [
    ("mtu: 9000", "mtu: 9300", "link mtu: 9300 is outside 552-9216"),
    ("speed: 400G", "speed: 400g", "link speed: '400g' is not one of"),
    ("mode: lossless", "mode: lossles", "roce mode: 'lossles' is not one of lossy|lossless"),
    ("bw-percent: 50", "bw-percent: 101", "bw-percent: 101 is outside 0-100"),
    ("mode: strict", "mode: priority", "mode: 'priority' is not one of dwrr|strict"),
    ("'26':", "'64':", "dscp 64: identifier 64 is outside 0-63"),
    ("swp1:", "Ethernet0:", "interface Ethernet0: identifier"),
    ("cable-length: 100", "cable-length: 0", "cable-length: 0 is outside 1-100000"),
    ("traffic-class: 7\n", "traffic-class: 8\n", "traffic-class: 8 is outside 0-7"),
    ("egress-queue-mapping:", "egress-queue-map:", "egress-queue-map: not in NVUE's object model"),
    ("ecn: disable", "ecn: off", "ecn: 'off' is not one of"),
    ("type: numbered", "type: numberd", "type: 'numberd' is not one of numbered|unnumbered"),
    ("aspath-ignore: enabled", "aspath-ignores: enabled", "aspath-ignores: not in NVUE's object model"),
    ("aspath-ignore: enabled", "aspath-ignore: on", "aspath-ignore: 'on' is not one of enabled|disabled"),
])
def test_rejects_what_the_reference_does_not_allow(old, new, problem):
    text = _roce_leaf()
    assert old in text
    problems = nvue_problems(text.replace(old, new, 1))
    assert any(problem in p for p in problems), problems


def _lab_cumulus(syntax: str) -> str:
    """The lab's Cumulus RoCE leaf with its plane's nvue_syntax declared."""
    spec, _ = CASES["lab-cumulus-roce"].spec_and_plan()
    data = spec.networks.plane("data").model_copy(update={"nvue_syntax": syntax})
    plan = plan_cluster(spec.model_copy(update={"networks": spec.networks.model_copy(update={"data": data})}))
    return render_switches(plan)["switches/su01-leaf-rail0/startup.yaml"]


def test_both_nvue_syntaxes_fit_their_own_model_and_not_the_other():
    new, old = _lab_cumulus("5.15"), _lab_cumulus("5.14")
    assert "Cumulus Linux 5.15 and later NVUE syntax" in new and "Cumulus Linux 5.14 and earlier NVUE syntax" in old
    assert nvue_problems(new) == [] and nvue_problems(old) == []
    assert nvue_problems(new, "5.14") and nvue_problems(old, "5.15")  # the renames are real differences
    # 5.15 (New-and-Changed-NVUE-Commands): ipv4 address, state enabled; 5.14: ip address, enable on
    assert "        ipv4:\n          address:" in new and "\n        ip:\n" not in new and "enable: on" not in new
    assert "        ip:\n          address:" in old and "ipv4:" not in old and "state: enabled" not in old
    assert new.count("state: enabled") == 4  # qos roce, router bgp, vrf bgp, address-family ipv4-unicast
