"""``loopback_api``: one real control plane on loopback per session (tests/kube/loopback_api.py), from the k8s
build cache; skips where the cache lacks a binary (scripts/setup-k8s.sh builds them)."""

from __future__ import annotations

import pytest
from loopback_api import LoopbackApi, start


@pytest.fixture(scope="session")
def loopback_api(tmp_path_factory: pytest.TempPathFactory) -> LoopbackApi:
    pytest.importorskip("kubernetes")
    from clusterforge.pulumi.kube.binaries import MissingBinaries, kubernetes_bin_dir

    try:
        bin_dir = kubernetes_bin_dir()
    except MissingBinaries as exc:
        pytest.skip(str(exc))
    api = start(bin_dir, tmp_path_factory.mktemp("loopback-api"))
    yield api
    api.stop()


@pytest.fixture(scope="module")
def kueue_api(tmp_path_factory: pytest.TempPathFactory) -> LoopbackApi:
    """A control plane of its own for each Kueue test module, with Kueue's CRDs applied: Kueue's topology-aware
    admission reads every Node, and the other tests' nodes would be in its way; a module that applies the lab's
    Topology for real would make another module's dry run of another Topology an (immutable) update. Skips
    without the Kubernetes binaries or Kueue's build (scripts/setup-k8s.sh)."""
    pytest.importorskip("kubernetes")
    from kueue_helpers import apply_crds

    from clusterforge.pulumi.kube.binaries import MissingBinaries, kubernetes_bin_dir, kueue_dir

    try:
        bin_dir, kueue = kubernetes_bin_dir(), kueue_dir()
    except MissingBinaries as exc:
        pytest.skip(str(exc))
    api = start(bin_dir, tmp_path_factory.mktemp("kueue-api"), cluster="kueue")
    api.kueue_dir = kueue  # type: ignore[attr-defined]
    try:
        apply_crds(api, kueue)
        yield api
    finally:
        api.stop()
