"""Lab inventory contract for the Ansible role tests.

Contract of ``lab_inventory`` (what a lab provides to these tests):

- ``CLUSTERFORGE_LAB_INVENTORY``: path of a rendered inventory directory, i.e. the
  ``DIR/ansible`` that ``clusterforge.render`` writes: ``inventory.yml`` with a ``servers``
  group, and ``host_vars/<host>.yml`` per server carrying ``ansible_host`` (and the cf_*
  variables of docs/CONTRACTS.md).
- An OpenSSH client config that reaches every ``ansible_host`` as a user that can become
  root: ``CLUSTERFORGE_LAB_SSH_CONFIG``, else ``<inventory dir>/ssh_config`` when present,
  else none (the caller's ~/.ssh/config applies).
- The hosts are throwaway: the converge tests change them.

Without ``CLUSTERFORGE_LAB_INVENTORY`` every test that uses ``lab_inventory`` skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LAB_INVENTORY_ENV = "CLUSTERFORGE_LAB_INVENTORY"
LAB_SSH_CONFIG_ENV = "CLUSTERFORGE_LAB_SSH_CONFIG"


@dataclass(frozen=True)
class LabInventory:
    """A rendered inventory of reachable lab hosts."""

    path: Path  # the inventory directory (DIR/ansible)
    inventory: Path  # the inventory source handed to Ansible
    ssh_config: Path | None
    servers: tuple[str, ...]


def lab_inventory_from_env() -> LabInventory | None:
    """The lab inventory named by the environment, or None when there is none."""
    raw = os.environ.get(LAB_INVENTORY_ENV, "")
    if not raw:
        return None
    path = Path(raw).resolve()
    inventory = path / "inventory.yml" if path.is_dir() and (path / "inventory.yml").exists() else path
    ssh_raw = os.environ.get(LAB_SSH_CONFIG_ENV, "")
    if ssh_raw:
        ssh_config: Path | None = Path(ssh_raw).resolve()
    elif (path / "ssh_config").exists():
        ssh_config = path / "ssh_config"
    else:
        ssh_config = None
    return LabInventory(path=path, inventory=inventory, ssh_config=ssh_config, servers=servers_of(inventory))


def servers_of(inventory: Path, group: str = "servers") -> tuple[str, ...]:
    """Hosts of ``group`` (default ``servers``), as Ansible itself resolves the inventory."""
    listed = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-inventory"), "-i", str(inventory), "--list"],
        check=True,
        capture_output=True,
        text=True,
    )
    groups = json.loads(listed.stdout)
    hosts: set[str] = set()
    pending = [group]
    while pending:
        group = groups.get(pending.pop(), {})
        hosts.update(group.get("hosts", []))
        pending.extend(group.get("children", []))
    return tuple(sorted(hosts))
