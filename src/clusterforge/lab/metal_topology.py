"""Which lab hosts are bare-metal servers (VMs installed over the network), and how they are cabled.

Pure. ``split`` takes the lab's topology (``from_plan.lab_topology``) and the servers the declaration
manages through a BMC and returns:

* the topology without them (the container lab ``manager.up`` runs); every segment one of them is on
  becomes a ``bridge`` (a VM's NIC is a tap on a bridge: a p2p veth between two namespaces cannot
  take it), so each router keeps its planned interface, now a bridge port;
* per bare-metal server (``baremetal.host.MetalHost``), its planned NICs (name, segment's bridge, address,
  MTU, a MAC) and routes, exactly as a container host would have had them: the preseed writes them into the
  installed system.

MACs are the VM's own (``52:54:00`` QEMU prefix plus three bytes of a hash of lab, host and NIC), so a
re-created VM keeps them; the installer still names NICs by the MACs the BMC reports (as-built).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from clusterforge.baremetal.host import MetalHost, MetalNic, MetalRoute

from . import names
from .topology import LabHost, LabSegment, LabTopology

__all__ = ["split", "vm_mac"]


def vm_mac(lab: str, host: str, nic: str) -> str:
    digest = hashlib.sha256("\0".join(("vm-mac", lab, host, nic)).encode()).digest()
    return "52:54:00:" + ":".join(f"{b:02x}" for b in digest[:3])


def _metal_host(lab: str, host: LabHost) -> MetalHost:
    ordered = sorted(host.interfaces, key=lambda i: (i.segment != "mgmt", i.name))
    nics = tuple(MetalNic(i.name, names.bridge_name(lab, i.segment), vm_mac(lab, host.name, i.name), i.ip, i.mtu)
                 for i in ordered)
    return MetalHost(host.name, nics, tuple(MetalRoute(r.dst, r.via, r.dev, r.metric) for r in host.routes))


def split(topology: LabTopology, metal: Iterable[str]) -> tuple[LabTopology, tuple[MetalHost, ...]]:
    wanted = set(metal)
    known = {h.name for h in topology.hosts if h.kind == "server"}
    missing = sorted(wanted - known)
    if missing:
        raise ValueError(f"not servers of lab {topology.name}: {', '.join(missing)}")
    metal_hosts = [h for h in topology.hosts if h.name in wanted]
    bridged = {i.segment for h in metal_hosts for i in h.interfaces}
    if "mgmt" not in bridged and metal_hosts:
        raise ValueError(f"{metal_hosts[0].name}: no management interface; SSH could not reach it after the install")
    segments = [s if s.name not in bridged else LabSegment(name=s.name, kind="bridge", mtu=s.mtu)
                for s in topology.segments]
    data = topology.model_dump(mode="json")
    data["hosts"] = [h.model_dump(mode="json") for h in topology.hosts if h.name not in wanted]
    data["segments"] = [s.model_dump(mode="json") for s in segments]
    rest = LabTopology.model_validate(data)
    return rest, tuple(_metal_host(topology.name, h) for h in metal_hosts)
