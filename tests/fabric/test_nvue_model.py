"""Cumulus startup.yaml against NVUE's object model as NVIDIA documents it (paths, identifiers,
value types and ranges: schemas/nvue_object_model.json), for every Cumulus switch of every example
and of the lab's Cumulus RoCE variant; and the check rejects what the reference does not allow."""

from __future__ import annotations

import pytest
from fabric_examples import REPO, example
from golden_cases import rendered

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
    ("type: numbered", "type: numberd", "type: 'numberd' is not one of numbered|unnumbered"),
    ("aspath-ignore: on", "aspath-ignores: on", "aspath-ignores: not in NVUE's object model"),
])
def test_rejects_what_the_reference_does_not_allow(old, new, problem):
    text = _roce_leaf()
    assert old in text
    problems = nvue_problems(text.replace(old, new, 1))
    assert any(problem in p for p in problems), problems
