"""Facts the Plan carries so renderers never read the declaration: plane attributes, server GPUs,
the switch models in use, the site's owner, facility and costs, the management VRF."""

from __future__ import annotations

from collections.abc import Iterable

from clusterforge.model import ClusterSpec, SwitchModel
from clusterforge.plan.objects import Device
from clusterforge.plan.records import DEFAULT_MGMT_VRF, PlaneAttrs, ServerFacts, SiteFacts
from clusterforge.vocab import Plane

__all__ = ["plane_attrs", "server_facts", "switch_models", "site_facts", "management_vrf"]


def plane_attrs(spec: ClusterSpec) -> dict[str, PlaneAttrs]:
    out = {}
    for name in Plane.values():
        decl = spec.networks.plane(name)
        out[name] = PlaneAttrs.of(name, decl.transport, decl.nos, decl.vlan, decl.mtu, decl.vrf, decl.nvue_syntax)
    return out


def management_vrf(spec: ClusterSpec) -> str:
    """The VRF switch management (eth0) lives in: the oob plane's, else SONiC's fixed name."""
    return spec.networks.oob.vrf or DEFAULT_MGMT_VRF


def server_facts(spec: ClusterSpec, devices: Iterable[Device]) -> dict[str, ServerFacts]:
    """Per server model in use (servers and storage servers): its GPU, as the hosts are checked against."""
    out: dict[str, ServerFacts] = {}
    for device in devices:
        model = spec.catalog.servers.get(device.model)
        if model is not None and device.model not in out:
            out[device.model] = ServerFacts(device.model, model.gpu.model, model.gpu.count, model.gpu.nvswitch)
    return out


def switch_models(spec: ClusterSpec, devices: Iterable[Device]) -> dict[str, SwitchModel]:
    """The catalog entry (ports, SONiC platform and buffers) of every switch model in use."""
    return {d.model: spec.catalog.switches[d.model] for d in devices if d.model in spec.catalog.switches}


def site_facts(spec: ClusterSpec) -> SiteFacts:
    site = spec.site
    return SiteFacts(site.name, site.owner, site.facility, site.costs, tuple(site.time_servers))
