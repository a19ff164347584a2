"""Storage servers (cf_kind storage): the GlusterFS daemon runs, and every planned volume that has a
brick here exists with the planned bricks and layout, is started, has its bricks online and allows only
the planned clients (auth.allow: the storage-plane supernet as address patterns).
"""

from __future__ import annotations

import pytest

from clusterforge.verify.hosts._gates import require_systemd
from clusterforge.verify.hosts._storage import LAYOUT_TYPES, parse_volume_info, parse_volume_status

HOST_KINDS = ("storage",)


def _require_glusterfs(host_vars) -> None:
    kind = (host_vars.get("cf_storage") or {}).get("kind")
    if kind != "glusterfs":
        pytest.skip(f"storage kind {kind}: its servers come from the vendor's tooling, not checked here")


def _info(facts, volume):
    r = facts.run("gluster --mode=script volume info %s", volume["name"])
    info = parse_volume_info(r.stdout) if r.rc == 0 else None
    assert info is not None, f"volume {volume['name']} does not exist: {(r.stderr or r.stdout).strip()[:300]}"
    return info


def _planned_bricks(volume) -> list[str]:
    return [f"{b['address']}:{b['path']}" for b in volume["bricks"]]


def test_glusterd_active(facts, host_vars):
    _require_glusterfs(host_vars)
    require_systemd(facts)
    state = facts.unit_state("glusterd.service", "is-active")
    assert state == "active", f"glusterd is {state}"


def test_volume_bricks(facts, host_vars, volume):
    _require_glusterfs(host_vars)
    info = _info(facts, volume)
    assert list(info.bricks) == _planned_bricks(volume), (
        f"volume {volume['name']} has bricks {' '.join(info.bricks)}, planned {' '.join(_planned_bricks(volume))}"
    )


def test_volume_layout(facts, host_vars, volume):
    _require_glusterfs(host_vars)
    info = _info(facts, volume)
    want = LAYOUT_TYPES[volume["layout"]]
    assert info.type == want, f"volume {volume['name']} is {info.type}, planned {want} (replica {volume['replica']})"


def test_volume_started(facts, host_vars, volume):
    _require_glusterfs(host_vars)
    info = _info(facts, volume)
    assert info.status == "Started", f"volume {volume['name']} is {info.status}"


def test_volume_bricks_online(facts, host_vars, cf_host_name, volume):
    _require_glusterfs(host_vars)
    r = facts.run("gluster --mode=script volume status %s", volume["name"])
    online = parse_volume_status(r.stdout) if r.rc == 0 else {}
    here = [f"{b['address']}:{b['path']}" for b in volume["bricks"] if b["server"] == cf_host_name]
    down = [b for b in here if not online.get(b)]
    assert not down, f"volume {volume['name']}: brick(s) not online: {' '.join(down)}"


def test_volume_allows_only_the_planned_clients(facts, host_vars, volume):
    _require_glusterfs(host_vars)
    clients = (host_vars.get("cf_storage") or {}).get("clients") or []
    if not clients:
        pytest.skip("the plan names no client addresses: auth.allow keeps GlusterFS's default")
    info = _info(facts, volume)
    have = info.options.get("auth.allow", "*")
    assert sorted(have.split(",")) == sorted(clients), (
        f"volume {volume['name']} allows {have}, planned {','.join(clients)}"
    )
