"""HostImage: a golden image layer the lab's servers boot from, built once by the image playbook.

Create builds the image unless the lab's image cache already holds it (the name is content-addressed:
clusterforge.pulumi.images), by booting a builder host (clusterforge.lab.builder) and running
its image playbook there (`playbooks/image.yml` for the GPU servers, `image-control.yml` for the control
nodes) with ansible-runner, with the profile's host_vars. The Lab resource depends
on it and its hosts mount the layer. `diff` also reads the cache: an image removed from it is drift,
and the update builds it again. Delete leaves the cache alone (it is a cache: `lab down` keeps it).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from clusterforge.pulumi.images import IMAGE_PLAYBOOK
from clusterforge.pulumi.providers import _lifeline

__all__ = ["HostImage", "HostImageArgs", "HostImageProvider", "build_image"]

BUILDER_GROUP = "image_builders"


class ImageBuildFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class HostImageArgs:
    name: str
    profile: Mapping[str, Any]  # the builder's host_vars
    hosts: tuple[str, ...]  # who boots it (informational)
    work_dir: str  # ansible-runner's private data dir for the build
    extravars: Mapping[str, Any] = field(default_factory=dict)
    playbook: str = IMAGE_PLAYBOOK  # under playbooks/


def _inventory(work: Path, ssh_host: str, profile: Mapping[str, Any]) -> Path:
    from clusterforge.render.yamltext import to_ansible_yaml

    inventory = work / "inventory.yml"
    host_vars = work / "host_vars" / f"{ssh_host}.yml"
    host_vars.parent.mkdir(parents=True, exist_ok=True)
    host_vars.write_text(to_ansible_yaml({**dict(profile), "cf_name": ssh_host}))
    inventory.write_text(to_ansible_yaml({"all": {"children": {BUILDER_GROUP: {"hosts": {ssh_host: None}}}}}))
    return inventory


def build_image(name: str, profile: Mapping[str, Any], work_dir: Path, extravars: Mapping[str, Any] | None = None,
                say: Any = print, cancel: Any = None, playbook: str = IMAGE_PLAYBOOK) -> dict[str, Any]:
    """Image ``name`` in the lab's cache: found there, or built now. Returns its stamp."""
    from clusterforge.lab.builder import build_layer
    from clusterforge.provision.runner import run_site

    def converge(ssh_config: Path, host: str) -> dict[str, Any]:
        work = Path(work_dir)
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        inventory = _inventory(work, host, profile)
        result = run_site(inventory, work / "runner", limit=BUILDER_GROUP, extravars=dict(extravars or {}),
                          ssh_config=ssh_config, playbook=playbook,
                          progress=lambda line: say(f"image {name}: {line}"), cancel=cancel)
        if cancel is not None and cancel():
            raise ImageBuildFailed(f"image {name}: interrupted (the run stopped)")
        if not result.ok:
            why = "; ".join(f"{h}: {m}" for h, m in {**result.failed_hosts,
                                                     **result.unreachable_messages}.items())
            raise ImageBuildFailed(f"image {name}: the image playbook failed: {why or result.status}"
                                   f" (see {result.artifact_dir})")
        return {"playbook": playbook, "tasks": result.stats.get(host, {}),
                "playbook_seconds": round(result.duration_s, 1), "profile": json.loads(json.dumps(profile))}

    return build_layer(name, converge, progress=lambda host, line: say(f"image {name}: {line}"))


class HostImageProvider(ResourceProvider):
    serialize_as_secret_always = False

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        from clusterforge.lab import image

        if olds.get("name") != news.get("name"):
            return DiffResult(changes=True, replaces=["name"])
        if not image.is_built(news["name"]):
            _lifeline.say(f"drift: image {news['name']} is not in the lab's image cache; `up` builds it again")
            return DiffResult(changes=True, replaces=[])
        changed = any(olds.get(k) != news.get(k) for k in ("hosts", "work_dir"))
        return DiffResult(changes=changed, replaces=[])

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"image-{props['name']}", self._build(props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(self._build(news))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None  # the image stays in the cache; `clusterforge lab image --prune` removes unused ones

    @staticmethod
    def _build(props: dict[str, Any]) -> dict[str, Any]:
        from clusterforge.lab import image

        _lifeline.watch()
        stamp = build_image(props["name"], props["profile"], Path(props["work_dir"]), props.get("extravars"),
                            say=_lifeline.say, cancel=_lifeline.cancelled,
                            playbook=props.get("playbook") or IMAGE_PLAYBOOK)
        return {**props, "layer": str(image.layer(props["name"])), "bytes": stamp.get("bytes"),
                "cached": bool(stamp.get("cached"))}


class HostImage(Resource, module="clusterforge", name="HostImage"):
    """pulumi-python:dynamic/clusterforge:HostImage — outputs `layer` (its directory), `bytes`, `cached`."""

    layer: pulumi.Output[str]
    bytes: pulumi.Output[int]
    cached: pulumi.Output[bool]

    def __init__(self, name: str, args: HostImageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {"name": args.name, "profile": dict(args.profile), "hosts": list(args.hosts),
                 "work_dir": args.work_dir, "extravars": dict(args.extravars), "playbook": args.playbook,
                 "layer": None, "bytes": None, "cached": None}
        super().__init__(HostImageProvider(), name, props, opts)
