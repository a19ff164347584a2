"""Which golden image each lab server boots: its software profile, named by what builds it.

A server's rendered host_vars are its identity (name, addresses, rack slot, mounts, RoCE interfaces)
plus its software profile (model, GPU, driver/CUDA versions, storage client kind). Servers with the
same profile boot the same image; the image's name is a hash of the profile, of what the image
playbook runs (its roles, playbook and variables files) and of the base rootfs it sits on, so a
changed role or version is a new image and an unchanged one is found in the cache.

A server that is a Slurm node also has slurmd's and MUNGE's packages in its image (``cf_image_slurm``);
its configuration and the cluster's key are written on each host by playbooks/slurm.yml.

The control nodes boot an image of their own (``ctl-<hash>``, `playbooks/image-control.yml`): the
Kubernetes control-plane binaries at their install paths, the Slurm controller's packages, and with
monitoring planned Debian's node_exporter, Prometheus and Alertmanager. Its profile is what of that the
plan runs (Kubernetes, Slurm, monitoring) and which binaries (their build directory, sizes and modification
times: a rebuilt binary is a new image); host configuration, certificates, kubeconfigs, keys and the scrape
configuration stay out of it and are written on each host.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clusterforge.pulumi._hashing import tree_hash
from clusterforge.render.yamltext import UnsafeTolerantLoader

__all__ = ["CONTROL_IMAGE_PLAYBOOK", "IDENTITY_KEYS", "IMAGE_PLAYBOOK", "ImageSpec", "binaries_stamp", "booting",
           "build_inputs_hash", "build_lab_images", "control_image", "host_images", "image_profile", "image_roles",
           "lab_images", "plan_images"]

IMAGE_PLAYBOOK = "image.yml"
CONTROL_IMAGE_PLAYBOOK = "image-control.yml"
# Per-host variables: the image never carries them (the builder runs without them).
IDENTITY_KEYS = ("ansible_host", "cf_name", "cf_su", "cf_rack", "cf_ru", "cf_asset_id", "cf_interfaces", "cf_bmc")


@dataclass(frozen=True)
class ImageSpec:
    name: str  # gpu-<hash>: a lab image name (clusterforge.lab.image)
    profile: Mapping[str, Any]  # the builder's host_vars
    hosts: tuple[str, ...]  # the servers that boot it
    playbook: str = IMAGE_PLAYBOOK  # what builds it (under playbooks/)
    extravars: Mapping[str, Any] = field(default_factory=dict)  # for the build, beside cf_lab (not in the name)


def image_profile(host_vars: Mapping[str, Any]) -> dict[str, Any]:
    """A server's host_vars without its identity: what every server of its profile shares."""
    profile = {k: v for k, v in host_vars.items() if k not in IDENTITY_KEYS}
    if isinstance(profile.get("cf_roce"), Mapping):
        profile["cf_roce"] = {**profile["cf_roce"], "interfaces": []}
    if isinstance(profile.get("cf_storage"), Mapping):
        profile["cf_storage"] = {**profile["cf_storage"], "mounts": []}
    return profile


def image_roles(playbook: Path) -> list[str]:
    """The roles the image playbook runs, in order (its plays' `roles:` entries)."""
    plays = yaml.safe_load(playbook.read_text()) or []
    roles: list[str] = []
    for play in plays:
        for entry in play.get("roles", []) if isinstance(play, Mapping) else []:
            name = entry.get("role") if isinstance(entry, Mapping) else entry
            if isinstance(name, str) and name not in roles:
                roles.append(name)
    return roles


def build_inputs_hash(playbooks_dir: Path, roles_dir: Path, base: Path, name: str = IMAGE_PLAYBOOK) -> str:
    """What an image playbook runs: its file, the variables it loads and its roles (relative to base)."""
    playbook = playbooks_dir / name
    roots = [playbook, playbooks_dir / "group_vars", playbooks_dir / "vars", playbooks_dir / "ansible.cfg",
             *(roles_dir / r for r in image_roles(playbook))]
    return tree_hash(roots, base)


def plan_images(host_vars_texts: Mapping[str, str], inputs_hash: str, rootfs_hash: str,
                slurm_nodes: frozenset[str] = frozenset(), k8s_nodes: frozenset[str] = frozenset(),
                bin_dir: Path | None = None) -> tuple[ImageSpec, ...]:
    """One ImageSpec per distinct profile among ``host_vars_texts`` ({host: rendered host_vars}); a host of
    ``slurm_nodes`` has slurmd's packages in its image (``cf_image_slurm``, playbooks/image.yml), one of
    ``k8s_nodes`` containerd, the CNI plugins, the kubelet and kube-proxy of ``bin_dir`` (``cf_image_k8s_node``)."""
    by_name: dict[str, tuple[dict[str, Any], list[str]]] = {}
    stamp = binaries_stamp(bin_dir) if bin_dir is not None and k8s_nodes else None
    for host in sorted(host_vars_texts):
        profile = image_profile(yaml.load(host_vars_texts[host], Loader=UnsafeTolerantLoader) or {})  # noqa: S506
        profile["cf_image_slurm"] = host in slurm_nodes
        profile["cf_image_k8s_node"] = stamp is not None and host in k8s_nodes
        if profile["cf_image_k8s_node"]:
            profile["cf_image_k8s_binaries"] = stamp
        key = json.dumps({"profile": profile, "inputs": inputs_hash, "rootfs": rootfs_hash}, sort_keys=True)
        name = "gpu-" + hashlib.sha256(key.encode()).hexdigest()[:16]
        by_name.setdefault(name, (profile, []))[1].append(host)
    extravars = {"cf_k8s_bin_dir": str(bin_dir)} if stamp is not None else {}
    return tuple(ImageSpec(name, profile, tuple(hosts), extravars=extravars if profile["cf_image_k8s_node"] else {})
                 for name, (profile, hosts) in sorted(by_name.items()))


def binaries_stamp(bin_dir: Path) -> dict[str, Any]:
    """What names a build of the Kubernetes binaries without reading them: the version directory and each
    binary's size and modification time."""
    stats = {p.name: p.stat() for p in sorted(bin_dir.iterdir()) if p.is_file()}
    return {"dir": bin_dir.parent.name, "files": {n: [st.st_size, st.st_mtime_ns] for n, st in stats.items()}}


def control_image(hosts: Sequence[str], *, kubernetes: bool, slurm: bool, bin_dir: Path | None, inputs_hash: str,
                  rootfs_hash: str, monitoring: bool = False) -> ImageSpec | None:
    """The image the control nodes boot: the control-plane binaries (with ``kubernetes`` and ``bin_dir``),
    the Slurm controller's packages (with ``slurm``) and node_exporter, Prometheus and Alertmanager (with
    ``monitoring``); None when there is none of them or no control node."""
    kubernetes = kubernetes and bin_dir is not None
    if not hosts or not (kubernetes or slurm or monitoring):
        return None
    profile: dict[str, Any] = {"cf_image_kubernetes": kubernetes, "cf_image_slurm": slurm}
    if monitoring:  # absent when off: the images of plans without monitoring keep their names
        profile["cf_image_monitoring"] = True
    if kubernetes:
        assert bin_dir is not None
        profile["cf_image_k8s_binaries"] = binaries_stamp(bin_dir)
    key = json.dumps({"profile": profile, "inputs": inputs_hash, "rootfs": rootfs_hash}, sort_keys=True)
    name = "ctl-" + hashlib.sha256(key.encode()).hexdigest()[:16]
    return ImageSpec(name, profile, tuple(sorted(hosts)), CONTROL_IMAGE_PLAYBOOK,
                     {"cf_k8s_bin_dir": str(bin_dir)} if kubernetes else {})


def lab_images(plan: Any, tree: Any) -> tuple[ImageSpec, ...]:
    """The images the lab's hosts boot: plan_images over the GPU servers' rendered host_vars, and the
    control nodes' control_image, with this checkout's image playbooks and roles and the lab's base rootfs."""
    from clusterforge import paths
    from clusterforge.lab.rootfs import wanted_stamp
    from clusterforge.pulumi.kube.binaries import MissingBinaries, kubernetes_bin_dir
    from clusterforge.vocab import DeviceKind

    rootfs = wanted_stamp()["hash"]
    servers = {d.name: tree.host_vars(d.name) for d in plan.devices if d.kind == DeviceKind.SERVER}
    inputs = build_inputs_hash(paths.playbooks_dir(), paths.roles_dir(), paths.data_root())
    slurm_nodes = frozenset(n.name for n in plan.slurm.nodes) if plan.slurm is not None else frozenset()
    controls = [d.name for d in plan.devices if d.kind == DeviceKind.CONTROL]
    bin_dir: Path | None = None
    if controls and "kubernetes" in plan.schedulers:
        try:
            bin_dir = kubernetes_bin_dir()
        except MissingBinaries:
            bin_dir = None  # the Kubernetes step refuses to run (pulumi.program)
    k8s_nodes = frozenset(n.name for n in plan.kubernetes.nodes) if plan.kubernetes is not None else frozenset()
    specs = plan_images(servers, inputs, rootfs, slurm_nodes, k8s_nodes if controls else frozenset(), bin_dir)
    control = control_image(controls, kubernetes="kubernetes" in plan.schedulers, slurm="slurm" in plan.schedulers,
                            bin_dir=bin_dir, rootfs_hash=rootfs, monitoring=plan.monitoring is not None,
                            inputs_hash=build_inputs_hash(paths.playbooks_dir(), paths.roles_dir(), paths.data_root(),
                                                          CONTROL_IMAGE_PLAYBOOK))
    return specs + ((control,) if control is not None else ())


def host_images(specs: Sequence[ImageSpec]) -> dict[str, str]:
    """host -> the image it boots."""
    return {host: spec.name for spec in specs for host in spec.hosts}


def booting(topology: Any, specs: Sequence[ImageSpec]) -> Any:
    """The lab topology with each server booting its image (a LabTopology, validated again)."""
    from clusterforge.lab.topology import LabTopology

    boots = host_images(specs)
    return LabTopology.model_validate({**topology.model_dump(), "hosts": [
        {**h.model_dump(), "image": boots.get(h.name, h.image)} for h in topology.hosts]})


def build_lab_images(plan: Any, prune: bool, say: Callable[[str], Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Build (or find cached) every golden image the lab of ``plan`` boots: one row per image (name, hosts,
    cached, seconds, MiB, layer), and the cached images removed when ``prune`` (those the plan does not use).
    Raises LabError or ImageBuildFailed (one line) when a build fails."""
    import time

    from clusterforge.lab import image as lab_image
    from clusterforge.paths import state_dir
    from clusterforge.pulumi.providers.host_image import build_image
    from clusterforge.render import render_tree

    specs = lab_images(plan, render_tree(plan))
    rows = []
    for spec in specs:
        started = time.monotonic()
        stamp = build_image(spec.name, spec.profile, state_dir() / "image" / spec.name,
                            {**spec.extravars, "cf_lab": True}, playbook=spec.playbook, say=say)
        rows.append({"image": spec.name, "hosts": list(spec.hosts), "cached": bool(stamp.get("cached")),
                     "seconds": round(time.monotonic() - started, 1), "mib": round((stamp.get("bytes") or 0) / 2**20),
                     "layer": str(lab_image.layer(spec.name))})
    return rows, lab_image.prune({spec.name for spec in specs}) if prune else []
