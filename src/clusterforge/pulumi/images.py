"""Which golden image each lab server boots: its software profile, named by what builds it.

A server's rendered host_vars are its identity (name, addresses, rack slot, mounts, RoCE interfaces)
plus its software profile (model, GPU, driver/CUDA versions, storage client kind). Servers with the
same profile boot the same image; the image's name is a hash of the profile, of what the image
playbook runs (its roles, playbook and variables files) and of the base rootfs it sits on, so a
changed role or version is a new image and an unchanged one is found in the cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from clusterforge.pulumi._hashing import tree_hash
from clusterforge.render.yamltext import UnsafeTolerantLoader

__all__ = ["IDENTITY_KEYS", "IMAGE_PLAYBOOK", "ImageSpec", "booting", "build_inputs_hash", "host_images",
           "image_profile", "image_roles", "lab_images", "plan_images"]

IMAGE_PLAYBOOK = "image.yml"
# Per-host variables: the image never carries them (the builder runs without them).
IDENTITY_KEYS = ("ansible_host", "cf_name", "cf_su", "cf_rack", "cf_ru", "cf_asset_id", "cf_interfaces", "cf_bmc")


@dataclass(frozen=True)
class ImageSpec:
    name: str  # gpu-<hash>: a lab image name (clusterforge.lab.image)
    profile: Mapping[str, Any]  # the builder's host_vars
    hosts: tuple[str, ...]  # the servers that boot it


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


def build_inputs_hash(playbooks_dir: Path, roles_dir: Path, base: Path) -> str:
    """What the image playbook runs: its file, the variables it loads and its roles (relative to base)."""
    playbook = playbooks_dir / IMAGE_PLAYBOOK
    roots = [playbook, playbooks_dir / "group_vars", playbooks_dir / "vars", playbooks_dir / "ansible.cfg",
             *(roles_dir / r for r in image_roles(playbook))]
    return tree_hash(roots, base)


def plan_images(host_vars_texts: Mapping[str, str], inputs_hash: str, rootfs_hash: str) -> tuple[ImageSpec, ...]:
    """One ImageSpec per distinct profile among ``host_vars_texts`` ({host: rendered host_vars})."""
    by_name: dict[str, tuple[dict[str, Any], list[str]]] = {}
    for host in sorted(host_vars_texts):
        profile = image_profile(yaml.load(host_vars_texts[host], Loader=UnsafeTolerantLoader) or {})  # noqa: S506
        key = json.dumps({"profile": profile, "inputs": inputs_hash, "rootfs": rootfs_hash}, sort_keys=True)
        name = "gpu-" + hashlib.sha256(key.encode()).hexdigest()[:16]
        by_name.setdefault(name, (profile, []))[1].append(host)
    return tuple(ImageSpec(name, profile, tuple(hosts)) for name, (profile, hosts) in sorted(by_name.items()))


def lab_images(plan: Any, tree: Any) -> tuple[ImageSpec, ...]:
    """The images the lab's GPU servers boot: plan_images over the rendered tree, with this checkout's
    image playbook and roles and the lab's base rootfs."""
    from clusterforge import paths
    from clusterforge.lab.rootfs import wanted_stamp
    from clusterforge.vocab import DeviceKind

    servers = {d.name: tree.host_vars(d.name) for d in plan.devices if d.kind == DeviceKind.SERVER}
    inputs = build_inputs_hash(paths.playbooks_dir(), paths.roles_dir(), paths.data_root())
    return plan_images(servers, inputs, wanted_stamp()["hash"])


def host_images(specs: Sequence[ImageSpec]) -> dict[str, str]:
    """host -> the image it boots."""
    return {host: spec.name for spec in specs for host in spec.hosts}


def booting(topology: Any, specs: Sequence[ImageSpec]) -> Any:
    """The lab topology with each server booting its image (a LabTopology, validated again)."""
    from clusterforge.lab.topology import LabTopology

    boots = host_images(specs)
    return LabTopology.model_validate({**topology.model_dump(), "hosts": [
        {**h.model_dump(), "image": boots.get(h.name, h.image)} for h in topology.hosts]})
