"""Where scripts/setup-k8s.sh put the Kubernetes binaries: a machine-wide cache keyed by the versions
pinned in tools/k8s-build/*/go.mod (the same rule as the script)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from clusterforge import paths

__all__ = ["BINARIES", "kubernetes_bin_dir", "kueue_dir", "images_dir", "kube_extravars", "pinned_versions",
           "coredns_version", "MissingBinaries"]

BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok", "kubelet",
            "kube-proxy", "cf-pause", "cf-sim-gpu-plugin", "cf-sim-dra-driver", "cf-gpu-probe")
DEFAULT_CACHE = "/var/cache/clusterforge/k8s"
_MODULES = {"kubernetes": "k8s.io/kubernetes", "etcd": "go.etcd.io/etcd/server/v3", "kwok": "sigs.k8s.io/kwok"}


class MissingBinaries(RuntimeError):
    pass


def _pinned(go_mod: Path, module: str) -> str:
    for line in go_mod.read_text().splitlines():
        words = line.split()
        if words[:1] == ["require"] and words[1:2] == [module]:
            return words[2]
        if words[:1] == [module] and len(words) > 1 and words[1].startswith("v"):
            return words[1]
    raise MissingBinaries(f"{go_mod}: no requirement of {module}")


def setup_script() -> str:
    """How to run the set-up step, from a checkout or the wheel (which carries tools/k8s-build and the script)."""
    return f"bash {paths.data_root() / 'scripts' / 'setup-k8s.sh'}"


def kubernetes_bin_dir(check: bool = True) -> Path:
    """The bin directory of the pinned versions; with `check`, MissingBinaries names the set-up step when a
    binary is absent (previews only name the directory)."""
    build = paths.data_root() / "tools" / "k8s-build"
    if not build.is_dir():
        raise MissingBinaries(f"{build} is missing: reinstall clusterforge (the wheel carries it) or use a checkout")
    versions = {name: _pinned(build / name / "go.mod", module) for name, module in _MODULES.items()}
    root = Path(os.environ.get("CLUSTERFORGE_K8S_CACHE") or DEFAULT_CACHE)
    bin_dir = root / f"{versions['kubernetes']}-etcd{versions['etcd']}-kwok{versions['kwok']}" / "bin"
    missing = [b for b in BINARIES if not (bin_dir / b).is_file()]
    tags = _layout_tags(images_dir(bin_dir))
    if tags is None:
        missing.append("the cluster's images (images/oci)")
    elif f"coredns-{coredns_version()}" not in tags:
        missing.append(f"the CoreDNS image coredns-{coredns_version()} (images/oci)")
    if check and missing:
        raise MissingBinaries(f"{bin_dir}: {', '.join(missing)} not built; run {setup_script()}"
                              " (needs Go; in a checkout make up and make setup run it)")
    return bin_dir


def kueue_dir(check: bool = True) -> Path:
    """Kueue's own cache directory (bin/kueue, crds/), keyed by its pinned version alone; with `check`,
    MissingBinaries names the set-up step when the binary or the CRDs are absent."""
    build = paths.data_root() / "tools" / "k8s-build"
    if not build.is_dir():
        raise MissingBinaries(f"{build} is missing: reinstall clusterforge (the wheel carries it) or use a checkout")
    version = _pinned(build / "kueue" / "go.mod", "sigs.k8s.io/kueue")
    root = Path(os.environ.get("CLUSTERFORGE_K8S_CACHE") or DEFAULT_CACHE)
    directory = root / f"kueue-{version}"
    if check and not ((directory / "bin" / "kueue").is_file() and (directory / "crds").is_dir()):
        raise MissingBinaries(f"{directory}: kueue or its CRDs not built; run {setup_script()}")
    return directory


def images_dir(bin_dir: Path) -> Path:
    """The OCI layout of the cluster's images beside the binaries (pause, cf-gpu-probe, coredns)."""
    return bin_dir.parent / "images" / "oci"


def _layout_tags(layout: Path) -> set[str] | None:
    """The tags of an OCI layout's index; None without a readable index."""
    try:
        index = json.loads((layout / "index.json").read_text())
    except (OSError, ValueError):
        return None
    return {m.get("annotations", {}).get("org.opencontainers.image.ref.name", "") for m in index.get("manifests", [])}


def coredns_version() -> str:
    """The pinned CoreDNS (tools/k8s-build/coredns/go.mod) as its image is tagged: 1.14.7."""
    go_mod = paths.data_root() / "tools" / "k8s-build" / "coredns" / "go.mod"
    if not go_mod.is_file():
        raise MissingBinaries(f"{go_mod} is missing: reinstall clusterforge (the wheel carries it) or use a checkout")
    return _pinned(go_mod, "github.com/coredns/coredns").removeprefix("v")


def kube_extravars(lab: bool, bin_dir: Path, kueue: bool) -> dict[str, Any]:
    """The extra vars of both Kubernetes playbooks (playbooks/kubernetes.yml, k8s-nodes.yml), the same for `up`
    (clusterforge.pulumi.program) and the tests' kube_cluster fixture; the PKI bundle is passed apart, as a
    secret. `kueue`: the plan runs Kueue (cf_kubernetes.queueing.enabled), so its cache must be built."""
    return {"cf_lab": lab, "cf_k8s_bin_dir": str(bin_dir), "cf_k8s_images": str(images_dir(bin_dir)),
            "cf_kueue_dir": str(kueue_dir(check=kueue)), "cf_k8s_coredns_version": coredns_version()}


def pinned_versions() -> dict[str, str]:
    """{"kubelet": v1.36.3, ...}: what `verify` expects the nodes to report; {} outside a checkout."""
    build = paths.data_root() / "tools" / "k8s-build"
    try:
        kubernetes = _pinned(build / "kubernetes" / "go.mod", _MODULES["kubernetes"])
    except (OSError, MissingBinaries):
        return {}
    return {"kubelet": kubernetes, "kube-proxy": kubernetes}
