"""What a switch whose NOS reads the switch model's platform data (NosTraits.platform_data: SONiC) would
refuse, found at declaration time so every command reports it with its file and line: a port speed the
HWSKU's breakout mode does not allow, lossless headroom that leaves a fully used switch no shared buffer
(plan/headroom.py). Pure functions of spec and plan; loading.py
runs them, so no renderer is needed to refuse a declaration."""

from __future__ import annotations

from collections.abc import Mapping

from clusterforge.model import ClusterSpec, SwitchModel
from clusterforge.model.sonic_ports import SonicPlatform, SonicPort
from clusterforge.nos import NOS_TRAITS, NosTraits, traits_for
from clusterforge.plan.headroom import lossless_budget_problems
from clusterforge.plan.objects import Device, Plan
from clusterforge.vocab import DeviceKind

__all__ = ["sonic_declaration_problems", "port_speed_problems"]

_SWITCH_KINDS = DeviceKind.SWITCHES


# the plane's model field a switch of each kind is first looked for in (a management ToR is its leaf_model)
_FIELDS_BY_KIND = {DeviceKind.LEAF: ("leaf_model", "spine_model", "core_model"),
                   DeviceKind.SPINE: ("spine_model", "leaf_model", "core_model"),
                   DeviceKind.CORE: ("core_model", "spine_model", "leaf_model")}


def _model_field(spec: ClusterSpec, device: Device) -> tuple[str, ...]:
    """The declared field that put this switch model on its plane (networks.PLANE.leaf_model, ...)."""
    plane_name = device.plane
    if plane_name is None:  # every switch has a plane; port_speed_problems checks only those
        return ("networks",)
    plane = spec.networks.plane(plane_name)
    for name in _FIELDS_BY_KIND.get(device.kind, ("leaf_model", "spine_model", "core_model")):
        if getattr(plane, name, None) == device.model:
            return ("networks", plane_name, name)
    return ("networks", plane_name)


def port_speed_problems(spec: ClusterSpec, plan: Plan,
                        nos_traits: Mapping[str, NosTraits] = NOS_TRAITS) -> list[tuple[tuple, str]]:
    # the switches a platform port map applies to (the others have nothing to check), with that map
    sonic: dict[str, tuple[Device, SwitchModel, SonicPlatform, dict[str, SonicPort]]] = {}
    for device in plan.devices:
        if device.kind not in _SWITCH_KINDS or device.plane is None:
            continue
        model = spec.catalog.switches.get(device.model)
        traits = traits_for(spec.networks.plane(device.plane).nos, nos_traits)
        if traits.platform_data and model is not None and model.sonic is not None:
            sonic[device.name] = (device, model, model.sonic, model.sonic.by_name)
    seen: set[tuple[str, int]] = set()
    out: list[tuple[tuple, str]] = []

    def check(device_name: str, port: str, speed: int | None) -> None:
        found = sonic.get(device_name)
        if found is None or not speed:
            return
        device, model, platform, by_name = found
        known = by_name.get(port)
        if known is None or speed in known.speeds_gbps or (device.model, speed) in seen:
            return
        seen.add((device.model, speed))
        allowed = ", ".join(f"{s}G" for s in known.speeds_gbps)
        out.append((_model_field(spec, device),
                    f"{device.name} {port}: a {speed}G link, but {platform.hwsku} ({device.model}) runs that"
                    f" port at {allowed} only"))

    for link in plan.links:
        check(link.a.device, link.a.port, link.speed_gbps)
        check(link.b.device, link.b.port, link.speed_gbps)
    for name, (device, _, _, _) in sonic.items():
        for iface in device.interfaces:
            check(name, iface.name, iface.speed_gbps)
    return out


def sonic_declaration_problems(spec: ClusterSpec, plan: Plan,
                               nos_traits: Mapping[str, NosTraits] = NOS_TRAITS) -> list[tuple[tuple, str]]:
    return lossless_budget_problems(spec, nos_traits) + port_speed_problems(spec, plan, nos_traits)
