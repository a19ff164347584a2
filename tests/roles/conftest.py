"""Fixtures for the Ansible role tests; the lab inventory contract is in roles_lab.py."""

from __future__ import annotations

import pytest
from roles_lab import LAB_INVENTORY_ENV, LabInventory, lab_inventory_from_env


@pytest.fixture(scope="session")
def lab_inventory() -> LabInventory:
    inventory = lab_inventory_from_env()
    if inventory is None:
        pytest.skip(f"no lab hosts: set {LAB_INVENTORY_ENV} (contract: tests/roles/roles_lab.py)")
    if not inventory.servers:
        pytest.fail(f"{inventory.inventory} has no hosts in group 'servers'")
    return inventory
