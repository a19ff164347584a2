"""Fixtures for the Ansible role tests; the lab inventory contract is in roles_lab.py."""

from __future__ import annotations

import pytest
from roles_lab import LabInventory, lab_inventory_from_env


@pytest.fixture(scope="session")
def lab_inventory(request: pytest.FixtureRequest) -> LabInventory:
    """The hosts named by the environment, else the shared lab of inventory/lab.yaml (tests/conftest.py)."""
    inventory = lab_inventory_from_env()
    if inventory is None:
        lab = request.getfixturevalue("lab_cluster")
        path = lab.inventory_dir / "ansible"
        inventory = LabInventory(path=path, inventory=path / "inventory.yml", ssh_config=lab.ssh_config,
                                 servers=tuple(sorted(lab.hosts)))
    if not inventory.servers:
        pytest.fail(f"{inventory.inventory} has no hosts in group 'servers'")
    return inventory
