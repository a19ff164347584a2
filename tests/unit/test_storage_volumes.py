"""GlusterFS volumes planned from the declared tiers, and the parsers the storage checks read glusterd and
fio with. Layout facts (GlusterFS administration guide): consecutive groups of `replica` bricks form a replica
set; replica 1 is distribute, bricks == replica is replicate, more is distributed-replicate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.model import ClusterSpec
from clusterforge.plan.volumes import plan_volumes, volume_layout
from clusterforge.verify.hosts._storage import (
    kernel_visible,
    parse_fio_write_mbps,
    parse_volume_info,
    parse_volume_status,
)

LAB = Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml"


@pytest.fixture(scope="module")
def lab():
    spec, plan, _ = load_and_plan(LAB)
    return spec, plan


def _with_storage(spec: ClusterSpec, **storage) -> ClusterSpec:
    data = spec.model_dump()
    data["storage"] = {**data["storage"], **storage}
    return type(spec).model_validate(data)


def _fake_servers(plan, count: int):
    """The planned storage server, copied `count` times with distinct storage addresses."""
    import dataclasses

    base = next(d for d in plan.devices if d.kind == "storage")
    out = []
    for n in range(count):
        ifaces = tuple(dataclasses.replace(i, ip=f"198.18.12.{80 + n}/27") if i.plane == "storage" else i
                       for i in base.interfaces)
        out.append(dataclasses.replace(base, name=f"stor-{n + 1:03d}", interfaces=ifaces))
    return out


def test_lab_volumes_follow_the_declared_tiers(lab):
    _, plan = lab
    volumes = {v["name"]: v for v in plan.services.storage.volumes}
    assert {n: (v["layout"], v["replica"], len(v["bricks"]), v["force"]) for n, v in volumes.items()} == {
        "hot": ("distribute", 1, 2, False), "cold": ("replicate", 2, 2, True)}
    assert [b["path"] for b in volumes["hot"]["bricks"]] == ["/srv/bricks/hot/b1", "/srv/bricks/hot/b2"]
    assert {b["address"] for v in volumes.values() for b in v["bricks"]} == {"198.18.12.80"}


def test_lab_mounts_use_the_volume_on_the_storage_plane(lab):
    _, plan = lab
    mounts = {m.tier: m for m in plan.services.storage.mounts}
    assert mounts["hot"].source == "198.18.12.80:/hot" and mounts["cold"].source == "198.18.12.80:/cold"
    assert (mounts["hot"].throughput_mbps, mounts["hot"].options) == (40.0, "rw,noatime")


def test_replicas_on_one_server_are_a_plan_warning(lab):
    _, plan = lab
    assert any("replica set 1 has 2 bricks on stor-001" in w for w in plan.warnings)


def test_replica_sets_span_servers_when_there_are_enough(lab):
    spec, plan = lab
    spec = _with_storage(spec, servers=2, tiers=[
        {"name": "warm", "capacity_tb": 8, "mount": "/mnt/warm", "export": "/export/warm", "replicas": 2,
         "bricks_per_server": 2}])  # fmt: skip
    volumes, warnings = plan_volumes(spec, [d for d in plan.devices if d.kind != "storage"] + _fake_servers(plan, 2))
    (volume,) = volumes
    assert volume["layout"] == "distributed-replicate" and not volume["force"] and warnings == []
    sets = [volume["bricks"][i:i + 2] for i in range(0, 4, 2)]
    assert [[b["server"] for b in s] for s in sets] == [["stor-001", "stor-002"]] * 2


def test_other_kinds_plan_no_volumes(lab):
    spec, plan = lab
    spec = _with_storage(spec, kind="nfs", tiers=[
        {"name": "hot", "capacity_tb": 1, "mount": "/mnt/hot", "export": "/export/hot"}])
    assert plan_volumes(spec, list(plan.devices)) == ([], [])


@pytest.mark.parametrize(("replicas", "bricks", "layout"), [
    (1, 1, "distribute"), (1, 4, "distribute"), (2, 2, "replicate"), (3, 3, "replicate"),
    (2, 4, "distributed-replicate"), (3, 6, "distributed-replicate")])
def test_volume_layout_names(replicas, bricks, layout):
    assert volume_layout(replicas, bricks) == layout


@pytest.mark.parametrize(("storage", "loc", "message"), [
    ({"kind": "glusterfs", "servers": 0, "server_model": None,
      "tiers": [{"name": "hot", "capacity_tb": 1, "mount": "/m", "export": "/e"}]},
     ("storage", "servers"), "needs storage servers"),
    ({"kind": "nfs", "tiers": [{"name": "hot", "capacity_tb": 1, "mount": "/m", "export": "/e", "replicas": 2}]},
     ("storage", "tiers", 0, "replicas"), "applies to storage.kind glusterfs only"),
    ({"kind": "glusterfs", "tiers": [{"name": "hot", "capacity_tb": 1, "mount": "/m", "export": "/e",
                                      "replicas": 3, "bricks_per_server": 2}]},
     ("storage", "tiers", 0, "replicas"), "(1 server(s) x bricks_per_server 2) is not a multiple of replicas 3"),
])
def test_layouts_that_do_not_fit_the_servers_are_refused_per_tier(lab, storage, loc, message):
    from clusterforge.model.checks import semantic_problems

    spec, _ = lab
    spec = _with_storage(spec, **{"servers": 1, "server_model": "storage-nvme-2u", **storage})
    problems = [(p_loc, text) for p_loc, text in semantic_problems(spec) if p_loc[0] == "storage"]
    assert [p_loc for p_loc, _ in problems] == [loc] and message in problems[0][1]


@pytest.mark.parametrize("tier", [
    {"mount": "/m/../etc"}, {"options": "rw,x-systemd.requires=$(reboot)"}, {"replicas": 4}, {"throughput_mbps": 0}])
def test_hostile_or_out_of_range_tier_fields_are_refused(lab, tier):
    spec, _ = lab
    with pytest.raises(ValueError):
        _with_storage(spec, tiers=[{"name": "hot", "capacity_tb": 1, "mount": "/m", "export": "/e", **tier}])


# --- parsers, on output captured from GlusterFS 10.3 (Debian 12) and fio 3.33 ----------------------

VOLUME_INFO = """
Volume Name: cold
Type: Replicate
Volume ID: aacc2766-c998-4632-938a-4213e2eb22a1
Status: Started
Snapshot Count: 0
Number of Bricks: 1 x 2 = 2
Transport-type: tcp
Bricks:
Brick1: 198.18.12.80:/srv/bricks/cold/b1
Brick2: 198.18.12.80:/srv/bricks/cold/b2
Options Reconfigured:
cluster.granular-entry-heal: on
storage.fips-mode-rchecksum: on
transport.address-family: inet
nfs.disable: on
performance.client-io-threads: off
"""

VOLUME_STATUS = """Status of volume: hot
Gluster process                             TCP Port  RDMA Port  Online  Pid
------------------------------------------------------------------------------
Brick 198.18.12.80:/srv/bricks/hot/b1       56133     0          Y       1164
Brick 198.18.12.80:/srv/bricks/hot/b2       N/A       N/A        N       N/A

Task Status of Volume hot
------------------------------------------------------------------------------
There are no active volume tasks
"""


def test_parse_volume_info():
    info = parse_volume_info(VOLUME_INFO)
    assert info is not None
    assert (info.name, info.type, info.status) == ("cold", "Replicate", "Started")
    assert info.bricks == ("198.18.12.80:/srv/bricks/cold/b1", "198.18.12.80:/srv/bricks/cold/b2")
    assert info.options["nfs.disable"] == "on"
    assert parse_volume_info("Volume cold does not exist\n") is None


def test_parse_volume_status_marks_offline_bricks():
    assert parse_volume_status(VOLUME_STATUS) == {"198.18.12.80:/srv/bricks/hot/b1": True,
                                                  "198.18.12.80:/srv/bricks/hot/b2": False}


def test_parse_fio_write_bandwidth_in_mb_per_s():
    text = "note: both iodepth >= 1 and synchronous I/O engine are selected\n" + json.dumps(
        {"fio version": "fio-3.33", "jobs": [{"jobname": "x", "write": {"bw": 122070, "io_bytes": 33554432}}]})
    assert parse_fio_write_mbps(text) == pytest.approx(125.0, rel=1e-3)
    with pytest.raises(ValueError):
        parse_fio_write_mbps("fio: pid=0, err=2/file:filesetup.c")


@pytest.mark.parametrize(("kind", "option", "shown"), [
    ("glusterfs", "noatime", True), ("glusterfs", "rw", True), ("glusterfs", "backup-volfile-servers=a:b", False),
    ("glusterfs", "_netdev", False), ("nfs", "vers=4.1", True), ("nfs", "_netdev", False)])
def test_which_options_the_kernel_shows(kind, option, shown):
    assert kernel_visible(kind, option) is shown


@pytest.mark.parametrize(("supernet", "patterns"), [
    ("198.18.12.0/24", ["198.18.12.*"]), ("10.16.0.0/22", ["10.16.0.*", "10.16.1.*", "10.16.2.*", "10.16.3.*"]),
    ("10.0.0.0/8", ["10.*.*.*"]), ("198.18.12.0/30", ["198.18.12.0", "198.18.12.1", "198.18.12.2", "198.18.12.3"])])
def test_auth_allow_patterns_cover_exactly_the_storage_supernet(supernet, patterns):
    from clusterforge.plan.volumes import storage_clients

    assert storage_clients(supernet) == patterns


def test_lab_volumes_allow_the_storage_plane_only(lab):
    _, plan = lab
    assert list(plan.services.storage.clients) == ["198.18.12.*"]
