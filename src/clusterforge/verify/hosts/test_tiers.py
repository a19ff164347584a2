"""Storage tiers as the GPU servers use them: each tier mounted with the planned source, file system
type and declared options; a file written on one GPU server reads back with the same SHA-256 on
another (the tier is shared, not a local directory); a sequential-write fio smoke per tier,
reported against the tier's declared ``throughput_mbps``.

These need the storage servers up (the lab runs GlusterFS). The write checks use
``<mount>/.clusterforge-verify/`` and remove what they wrote.
"""

from __future__ import annotations

import secrets
import shlex

import pytest

from clusterforge.verify.hosts._parsers import split_options
from clusterforge.verify.hosts._storage import LIVE_FSTYPES, kernel_visible, parse_fio_write_mbps

WORK_DIR = ".clusterforge-verify"
SHARE_BYTES = 4 * 1024 * 1024
FIO_SIZE = "32M"


def _kind(host_vars) -> str:
    return (host_vars.get("cf_storage") or {}).get("kind", "nfs")


def _live(facts, mount):
    live = [m for m in facts.proc_mounts() if m.target == mount["path"]]
    assert live, f"{mount['path']} is not mounted"
    return live[-1]


def _mounted_as_planned(facts, host_vars, mount) -> None:
    """Fail unless the tier is mounted from its planned source with its kind's type (the write checks
    must not measure a local directory)."""
    m = _live(facts, mount)
    kind = _kind(host_vars)
    assert m.source == mount["source"] and m.fstype in LIVE_FSTYPES.get(kind, (kind,)), (
        f"{mount['path']} has {m.source} ({m.fstype}) mounted, planned {mount['source']} ({kind})"
    )


def test_tier_mounted(facts, mount):
    m = _live(facts, mount)
    assert m.source == mount["source"], f"{mount['path']} has {m.source} mounted, planned {mount['source']}"


def test_tier_type(facts, host_vars, mount):
    m = _live(facts, mount)
    kind = _kind(host_vars)
    assert m.fstype in LIVE_FSTYPES.get(kind, (kind,)), (
        f"{mount['path']} is mounted as {m.fstype}, planned {kind} ({'/'.join(LIVE_FSTYPES.get(kind, (kind,)))})"
    )


def test_tier_options(facts, host_vars, mount):
    m = _live(facts, mount)
    kind = _kind(host_vars)
    missing = [o for o in split_options(mount.get("options")) if kernel_visible(kind, o) and o not in m.options]
    assert not missing, f"{mount['path']} is mounted with {','.join(m.options)}, without declared {','.join(missing)}"


def _peer(check_context, host: str, mount) -> str | None:
    """Another GPU server of the inventory that plans the same tier path (the next one, cyclically)."""
    inventory = check_context.inventory
    servers = [h for h in inventory.group_hosts("servers")
               if any(m["path"] == mount["path"] for m in (inventory.host_vars(h).get("cf_storage") or {})
                      .get("mounts") or [])]  # fmt: skip
    if host not in servers or len(servers) < 2:
        return None
    return servers[(servers.index(host) + 1) % len(servers)]


def test_tier_shared_checksum(check_context, facts, host_vars, cf_host_name, mount):
    peer = _peer(check_context, cf_host_name, mount)
    if peer is None:
        pytest.skip(f"no other GPU server in the inventory mounts {mount['path']}")
    _mounted_as_planned(facts, host_vars, mount)
    path = f"{mount['path']}/{WORK_DIR}/{cf_host_name}-{secrets.token_hex(6)}.bin"
    q = shlex.quote(path)
    write = facts.run(f"mkdir -p -- {shlex.quote(mount['path'] + '/' + WORK_DIR)} && "
                      f"head -c {SHARE_BYTES} /dev/urandom > {q} && sync -f {q} && sha256sum -- {q}")
    try:
        assert write.rc == 0, f"writing {path} on {cf_host_name} failed: {write.stderr.strip()[:300]}"
        written = write.stdout.split()[0]
        read = check_context.facts(peer).run(f"sha256sum -- {q}")
        assert read.rc == 0, (
            f"{path} written on {cf_host_name} is not readable on {peer}: {read.stderr.strip()[:300]} "
            f"(is {peer}'s {mount['path']} the same {mount['source']}?)"
        )
        got = read.stdout.split()[0]
        assert got == written, f"{path}: sha256 {written[:16]}... on {cf_host_name}, {got[:16]}... read on {peer}"
    finally:
        facts.run(f"rm -f -- {q}")


def test_tier_throughput(facts, host_vars, cf_host_name, mount, record_property):
    _mounted_as_planned(facts, host_vars, mount)
    if facts.which("fio") is None:
        pytest.fail("fio is not installed (the parallel_fs role installs it for this smoke test)")
    work = f"{mount['path']}/{WORK_DIR}"
    r = facts.run(f"mkdir -p -- {shlex.quote(work)} && fio --name={shlex.quote('cf-' + cf_host_name)} "
                  f"--directory={shlex.quote(work)} --rw=write --bs=1M --size={FIO_SIZE} --ioengine=psync "
                  "--end_fsync=1 --unlink=1 --output-format=json")
    assert r.rc == 0, f"fio on {mount['path']} failed: {(r.stderr or r.stdout).strip()[-300:]}"
    mbps = parse_fio_write_mbps(r.stdout)
    expected = mount.get("throughput_mbps")
    record_property("tier", mount["tier"])
    record_property("throughput_mbps", round(mbps, 1))
    record_property("expected_mbps", expected)
    if expected is None:
        return  # no declared expectation: the figure is reported, nothing to hold it against
    assert mbps >= float(expected), (
        f"{mount['path']} ({mount['tier']}): fio sequential write {mbps:.0f} MB/s, declared {float(expected):.0f} MB/s"
    )
