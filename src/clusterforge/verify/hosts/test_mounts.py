"""Parallel/shared file system tiers (cf_storage.mounts) as configured: a systemd mount unit per
tier with the planned source, type and options plus _netdev (network mounts must wait for the
network), ordered after (and requiring) the storage network unit where the host has a storage-plane
interface, enabled at boot. Whether the tiers are live (mounted, shared, fast enough) is
``test_tiers``.
"""

from __future__ import annotations

import pytest

from clusterforge.verify.hosts._gates import require_systemd
from clusterforge.verify.hosts._parsers import parse_unit_file, split_options

# The unit parallel_fs installs: up once the storage-plane interface has its address.
STORAGE_NETWORK_UNIT = "parallel-fs-storage-network.service"
# kind -> the Type= of its mount unit
FSTYPES = {"nfs": ("nfs", "nfs4"), "lustre": ("lustre",), "beegfs": ("beegfs",), "gpfs": ("gpfs",),
           "weka": ("wekafs",), "glusterfs": ("glusterfs",)}  # fmt: skip


def _unit_sections(facts, mount) -> tuple[str, dict[str, dict[str, list[str]]]]:
    name = facts.mount_unit_name(mount["path"])
    if facts.systemd_running():
        r = facts.run("systemctl cat -- %s", name)
        text = r.stdout if r.rc == 0 else None
    else:
        text = facts.read(f"/etc/systemd/system/{name}")
    assert text, f"no systemd mount unit {name} for {mount['path']}"
    return name, parse_unit_file(text)


def _unit(facts, mount) -> tuple[str, dict[str, list[str]]]:
    name, sections = _unit_sections(facts, mount)
    return name, sections.get("Mount", {})


def _one(section: dict[str, list[str]], key: str) -> str:
    values = section.get(key) or [""]
    return values[-1]


def test_mount_unit_source(facts, mount):
    name, section = _unit(facts, mount)
    assert (_one(section, "What"), _one(section, "Where")) == (mount["source"], mount["path"]), (
        f"{name} mounts {_one(section, 'What')} on {_one(section, 'Where')}, "
        f"planned {mount['source']} on {mount['path']}"
    )


def test_mount_unit_type(facts, host_vars, mount):
    kind = (host_vars.get("cf_storage") or {}).get("kind", "nfs")
    name, section = _unit(facts, mount)
    assert _one(section, "Type") in FSTYPES.get(kind, (kind,)), f"{name} Type={_one(section, 'Type')}, planned {kind}"


def test_mount_unit_declared_options(facts, mount):
    name, section = _unit(facts, mount)
    have = set(split_options(_one(section, "Options")))
    missing = [o for o in split_options(mount.get("options")) if o not in have]
    assert not missing, f"{name} Options={_one(section, 'Options')} lacks declared {','.join(missing)}"


def test_mount_unit_netdev(facts, mount):
    name, section = _unit(facts, mount)
    assert "_netdev" in split_options(_one(section, "Options")), (
        f"{name} Options={_one(section, 'Options')} lacks _netdev: it may be mounted before the network is up"
    )


def test_mount_unit_enabled(facts, mount):
    require_systemd(facts)
    name = facts.mount_unit_name(mount["path"])
    state = facts.unit_state(name, "is-enabled")
    assert state == "enabled", f"{name} is {state}: the tier is not mounted at boot"


def test_mount_unit_after_storage_network(facts, host_vars, mount):
    storage = [i["name"] for i in host_vars.get("cf_interfaces") or [] if i.get("plane") == "storage"]
    if not storage:
        pytest.skip("no storage-plane interface planned on this host: network-online.target orders the mount")
    name, sections = _unit_sections(facts, mount)
    unit = sections.get("Unit", {})
    after = {w for v in unit.get("After", []) for w in v.split()}
    requires = {w for v in unit.get("Requires", []) + unit.get("BindsTo", []) for w in v.split()}
    assert STORAGE_NETWORK_UNIT in after and STORAGE_NETWORK_UNIT in requires, (
        f"{name} is not ordered after the storage network ({storage[0]}): After={' '.join(sorted(after))}, "
        f"Requires={' '.join(sorted(requires))}; expected both to name {STORAGE_NETWORK_UNIT}"
    )
