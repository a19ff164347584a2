"""site.time_servers reaches every host's host_vars as cf_time_servers (roles/time_sync reads it, and the
bare-metal installers write the same servers into timesyncd's drop-in); none declared: an empty list."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from verify_lab_copy import verify_lab_declaration

from clusterforge.loading import load_and_plan
from clusterforge.render.ansible_inventory import ansible_tree
from clusterforge.vocab import DeviceKind

ROOT = Path(__file__).resolve().parents[2]
HOSTS = (DeviceKind.SERVER, DeviceKind.STORAGE, DeviceKind.CONTROL)


@pytest.mark.parametrize(("inventory", "servers"), [("lab.yaml", ["198.18.8.1"]), ("lab-metal.yaml", ["198.19.40.1"]),
                                                    ("superpod-4su.yaml", [])])
def test_every_host_gets_the_declared_time_servers(inventory: str, servers: list[str]) -> None:
    spec, plan, _ = load_and_plan(ROOT / "inventory" / inventory)
    assert list(spec.site.time_servers) == servers
    tree = ansible_tree(plan)
    hosts = [d.name for d in plan.devices if d.kind in HOSTS]
    assert hosts
    for name in hosts:
        assert yaml.safe_load(tree[f"host_vars/{name}.yml"])["cf_time_servers"] == servers, name


def test_the_lab_examples_name_the_lab_ntp_server(tmp_path: Path) -> None:
    """The lab's NTP server (lab.timeserve) listens on the control address, the management plane's first
    gateway (lab.from_plan): the lab examples declare that address."""
    from clusterforge.lab.from_plan import lab_topology

    declarations = [ROOT / "inventory" / "lab.yaml", ROOT / "inventory" / "lab-metal.yaml",
                    verify_lab_declaration(tmp_path)]
    for declaration in declarations:
        spec, plan, _ = load_and_plan(declaration)
        assert list(spec.site.time_servers) == [lab_topology(plan).control.ip.split("/")[0]], declaration
