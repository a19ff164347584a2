"""Rolling-change batches from the declaration's rollout_batch per SU."""

from __future__ import annotations

import pytest

from clusterforge.plan.rollout import Batch, rollout_batches

SERVERS = [(f"su{su:02d}-r{r:02d}-gpu{n:02d}", su, f"su{su:02d}-r{r:02d}") for su in (1, 2) for r in (1, 2)
           for n in (1, 2, 3)]


def test_batches_follow_the_declared_size_su_by_su():
    batches = rollout_batches(SERVERS, {1: 2, 2: 4})
    assert [(b.su, b.index, len(b.hosts)) for b in batches] == [(1, 1, 2), (1, 2, 2), (1, 3, 2), (2, 1, 4), (2, 2, 2)]
    assert sorted(h for b in batches for h in b.hosts) == sorted(name for name, _, _ in SERVERS)


def test_a_batch_takes_racks_in_turn_never_a_whole_rack_first():
    first = rollout_batches(SERVERS, {1: 2})[0]
    assert first == Batch(1, 1, ("su01-r01-gpu01", "su01-r02-gpu01"))


def test_default_is_one_server_at_a_time():
    assert all(len(b.hosts) == 1 for b in rollout_batches(SERVERS, {}))


def test_drain_evicts_workload_pods_and_leaves_daemonset_and_mirror_pods():
    kubernetes = pytest.importorskip("kubernetes")
    from clusterforge.ops.drain import _evictable

    m = kubernetes.client

    def pod(owner: str | None = None, mirror: bool = False, phase: str = "Running"):
        owners = [m.V1OwnerReference(api_version="apps/v1", kind=owner, name="o", uid="u")] if owner else None
        annotations = {"kubernetes.io/config.mirror": "x"} if mirror else None
        return m.V1Pod(metadata=m.V1ObjectMeta(name="p", owner_references=owners, annotations=annotations),
                       status=m.V1PodStatus(phase=phase))

    assert _evictable(pod("ReplicaSet")) and _evictable(pod())
    assert not _evictable(pod("DaemonSet")) and not _evictable(pod(mirror=True))
    assert not _evictable(pod("ReplicaSet", phase="Succeeded"))
