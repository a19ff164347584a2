"""Doctor: reading a kernel log's Xid lines and a host's planned state (pure functions)."""

from __future__ import annotations

import yaml

from clusterforge.ops.doctor import Expect
from clusterforge.ops.doctor.gpu import XID, parse_xids
from clusterforge.render import render_all


def test_xid_lines_give_address_and_code():
    log = ("2026-12-01T05:00:00+0000 node kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>,"
           " GPU has fallen off the bus.\nunrelated line\n"
           "Dec 01 05:01:00 node kernel: NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked\n")
    assert [(pci, code) for pci, code, _ in parse_xids(log)] == [("PCI:0000:3b:00", 79), ("PCI:0000:10:1c", 63)]
    assert parse_xids("NVRM: GPU at PCI:0000:3b:00: GPU-abc\n") == []
    assert {79, 48, 74, 94, 95} <= set(XID)


def test_expectations_come_from_the_rendered_host_vars():
    from clusterforge.loading import load_and_plan
    from clusterforge.paths import checkout_root

    spec, plan, _ = load_and_plan(checkout_root() / "inventory" / "lab.yaml")
    hv = yaml.safe_load(render_all(plan)["ansible/host_vars/su01-r01-gpu01.yml"])
    expect = Expect.from_host_vars(hv)
    assert expect.gpus == 2
    assert expect.interfaces["rail0"] == 9000 and expect.interfaces["mgmt0"] == 1500
    assert expect.mounts == ("/mnt/hot", "/mnt/cold")
    assert expect.driver_version == hv["cf_software"]["nvidia_driver_version"]
