"""The NOS table: one driver per vocab.Nos value, and the rendered tree carries each switch's NOS."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.render.switches.network_os import DRIVERS, ansible_network_vars, driver_for
from clusterforge.render.tree import render_tree
from clusterforge.vocab import Nos

ROOT = Path(__file__).resolve().parents[2]


def test_every_nos_has_exactly_one_driver_under_its_own_name() -> None:
    assert sorted(DRIVERS) == sorted(Nos.values())
    assert all(nos == driver.nos for nos, driver in DRIVERS.items())


def test_an_unknown_nos_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="no driver for NOS 'junos'.*sonic"):
        driver_for("junos")


def test_ansible_manages_the_ip_switches_only() -> None:
    assert ansible_network_vars(Nos.EOS)["ansible_network_os"] == "arista.eos.eos"
    assert ansible_network_vars(Nos.INFINIBAND) == {}
    assert ansible_network_vars("junos") == {}


@pytest.mark.parametrize("inventory", ["roce-128gpu.yaml", "superpod-4su.yaml"])
def test_the_tree_carries_the_plans_nos_and_only_the_drivers_file_names(inventory: str) -> None:
    _, plan, _ = load_and_plan(ROOT / "inventory" / inventory)
    tree = render_tree(plan, workers=1)
    assert tree.switches
    for name, entry in tree.switches.items():
        device = plan.device(name)
        assert entry.nos == tree.nos(name) == plan.plane(device.plane).nos
        assert set(entry) <= set(driver_for(entry.nos).file_names), name
        assert driver_for(entry.nos).startup_file in entry
    assert tree.nos("no-such-switch") is None


def test_the_ip_switches_have_an_apply_step_and_infiniband_none() -> None:
    from clusterforge.pulumi.providers.switch_apply import apply_script

    assert apply_script(Nos.INFINIBAND, "/d", ["ib.json"]) is None and apply_script(None, "/d") is None
    for nos in (Nos.SONIC, Nos.CUMULUS, Nos.EOS):
        script = apply_script(nos, "/d", driver_for(nos).file_names)
        assert script is not None and script.startswith("set -e; ")
    # SONiC reloads FRR only where the switch was given an frr.conf
    assert "frr-reload.py" in apply_script(Nos.SONIC, "/d", ["config_db.json", "frr.conf"])
    assert "frr-reload.py" not in apply_script(Nos.SONIC, "/d", ["config_db.json"])
