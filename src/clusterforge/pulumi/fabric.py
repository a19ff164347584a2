"""Fabric component: one switch and the SwitchConfig that delivers its rendered NOS files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi

from clusterforge.plan import Device
from clusterforge.pulumi._hashing import files_hash
from clusterforge.pulumi.providers.switch_config import SwitchConfig, SwitchConfigArgs, SwitchTarget

__all__ = ["Switch", "SwitchArgs"]


@dataclass(frozen=True)
class SwitchArgs:
    device: Device
    files: Mapping[str, str] = field(default_factory=dict)  # rendered, relative to switches/<name>/
    target: SwitchTarget | None = None  # None: declare the switch, deliver nothing
    credential: pulumi.Input[str] | None = None
    nos: str | None = None  # the NOS that reads `files` (RenderedTree.nos): picks the apply step on the switch


class Switch(pulumi.ComponentResource):
    """clusterforge:fabric:Switch — a leaf/spine/core/management switch and its SwitchConfig.

    No outputs are registered (see Server): the SwitchConfig child carries the config's `content_hash`
    and the files `written`, and its diff is the one a preview shows when a switch's config changes.
    """

    def __init__(self, name: str, args: SwitchArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("clusterforge:fabric:Switch", name, None, opts)
        self.device = args.device
        self.config: SwitchConfig | None = None
        if args.files and args.target is not None:
            self.config = SwitchConfig(f"{name}-config", SwitchConfigArgs(
                device=args.device.name, files=args.files, content_hash=files_hash(args.files), target=args.target,
                credential=args.credential, nos=args.nos,
            ), pulumi.ResourceOptions(parent=self))  # fmt: skip
