"""Plan -> LabTopology: the cluster as the lab emulates it.

Every address is the planned one. Emulation choices (the only ones made here):
* servers and storage servers are `server` hosts; data- and storage-plane switches are FRR `router`
  hosts running their rendered frr.conf; management/oob switches are plain Linux bridges (L2 ToRs).
* management and oob are one bridge each (their per-SU blocks share it); the control endpoint holds
  every block's gateway address, so the machine running the lab is the in-band gateway.
* switch-to-switch and host data NICs are p2p veths; the storage node subnet of each SU is a bridge
  joining the servers' bond0 and the leaf pair's SVIs (the shared gateway VIP sits on the first leaf).
* an InfiniBand data plane has no routers to emulate: each SU rail is one bridge (IPoIB's L2).
* hosts install packages through a caching apt proxy on the control address (they have no route out).
"""

from __future__ import annotations

import re
from typing import Literal

from clusterforge.lab.kubelet_host import CONTAINERD_DIR
from clusterforge.lab.topology import LabHost, LabInterface, LabRoute, LabSegment, LabTopology
from clusterforge.plan import Device, Interface, Plan
from clusterforge.plan.naming import su_label
from clusterforge.plan.volumes import BRICK_ROOT
from clusterforge.render.tree import RenderedTree
from clusterforge.vocab import DeviceKind, LinkTier, Plane

__all__ = ["lab_topology", "segment_name"]

ROUTED_KINDS = DeviceKind.FABRIC_SWITCHES


def segment_name(*parts: str) -> str:
    name = "-".join(re.sub(r"[^a-z0-9]+", "-", p.lower()).strip("-") for p in parts)
    return name[:63].strip("-")


def _gateways(plan: Plan, plane: str) -> list[str]:
    out = []
    for device in plan.devices:
        for iface in device.interfaces:
            if iface.plane == plane and iface.gateway and iface.ip and device.kind in DeviceKind.HOSTS:
                prefix = iface.ip.split("/")[1]
                cidr = f"{iface.gateway}/{prefix}"
                if cidr not in out:
                    out.append(cidr)
    return out


def _addr(device: Device, iface: Interface) -> str:
    """A planned host interface's address; the planner gives every lab-emulated one an address."""
    if not iface.ip:
        raise ValueError(f"{device.name}: interface {iface.name} has no planned address to emulate")
    return iface.ip


def _server(device: Device, plan: Plan) -> LabHost:
    interfaces, routes = [], []
    data_supernet = plan.pools[Plane.DATA]["pool"]
    for iface in device.interfaces:
        if iface.plane == Plane.MANAGEMENT:
            interfaces.append(LabInterface(name=iface.name, segment="mgmt", ip=_addr(device, iface), mtu=iface.mtu))
            routes.append(LabRoute(dst="default", via=iface.gateway, dev=iface.name))
        elif iface.plane == Plane.OOB:
            continue  # the BMC is another device; it is not emulated
        elif iface.plane == Plane.STORAGE:
            seg = segment_name("stor", su_label(device.su) if device.su else "site")
            interfaces.append(LabInterface(name="bond0", segment=seg, ip=_addr(device, iface), mtu=iface.mtu))
            routes.append(LabRoute(dst=plan.pools[Plane.STORAGE]["pool"], via=iface.gateway, dev="bond0"))
        elif iface.plane == Plane.DATA and not iface.peer_ip:  # InfiniBand: IPoIB, one L2 segment per SU rail
            seg = segment_name("ib", su_label(device.su) if device.su else "site", f"rail{iface.rail}")
            interfaces.append(LabInterface(name=iface.name, segment=seg, ip=_addr(device, iface), mtu=iface.mtu))
        elif iface.plane == Plane.DATA:
            link = f"{device.name}-{iface.name}"
            interfaces.append(
                LabInterface(name=iface.name, segment=segment_name("d", link), ip=_addr(device, iface), mtu=iface.mtu)
            )
            routes.append(
                LabRoute(dst=data_supernet, via=iface.peer_ip, dev=iface.name, metric=100 + (iface.rail or 0))
            )
    # Storage servers keep their bricks on this machine's file system (trusted.* xattrs, a mount of
    # their own); every server gets /dev/fuse (GlusterFS clients, and the servers' own mounts).
    data_dirs: tuple[str, ...] = (BRICK_ROOT,) if device.kind == DeviceKind.STORAGE else ()
    # Kubernetes nodes (the plan's: GPU servers of a cluster with Kubernetes) run containerd and a real kubelet
    kubelet = plan.kubernetes is not None and any(n.name == device.name for n in plan.kubernetes.nodes)
    if kubelet:
        data_dirs += (CONTAINERD_DIR,)
    return LabHost(name=device.name, kind="server", interfaces=tuple(interfaces), routes=tuple(routes),
                   data_dirs=data_dirs, fuse=True, kubelet=kubelet)


def lab_topology(plan: Plan, rendered: RenderedTree | None = None) -> LabTopology:
    """The lab for a plan; the rendered tree supplies each router's frr.conf (by switch name)."""
    hosts: list[LabHost] = []
    segments: dict[str, LabSegment] = {}
    mgmt_mtu = plan.plane(Plane.MANAGEMENT).mtu
    segments["mgmt"] = LabSegment(name="mgmt", kind="bridge", mtu=mgmt_mtu)
    segments[Plane.OOB] = LabSegment(name=Plane.OOB, kind="bridge", mtu=plan.plane(Plane.OOB).mtu)
    host_side: dict[tuple[str, str], str] = {}  # (switch, port) -> p2p segment of the server NIC behind it
    for link in plan.links:
        if link.plane == Plane.DATA and link.tier == LinkTier.NODE_LEAF:
            host_side[(link.b.device, link.b.port)] = segment_name("d", f"{link.a.device}-{link.a.port}")
    for device in plan.devices:
        if device.kind in DeviceKind.HOSTS:
            host = _server(device, plan)
            hosts.append(host)
            for lab_iface in host.interfaces:
                if lab_iface.segment not in segments:
                    shared = lab_iface.segment.startswith(("stor-", "ib-"))
                    kind: Literal["bridge", "p2p"] = "bridge" if shared else "p2p"
                    segments[lab_iface.segment] = LabSegment(name=lab_iface.segment, kind=kind, mtu=lab_iface.mtu)
    fabric_peer: dict[tuple[str, str], str] = {}
    for link in plan.links:
        if link.a_ip and link.tier not in (LinkTier.NODE_LEAF,):
            seg = segment_name("f", f"{link.a.device}-{link.a.port}")
            fabric_peer[(link.a.device, link.a.port)] = seg
            fabric_peer[(link.b.device, link.b.port)] = seg
            segments[seg] = LabSegment(name=seg, kind="p2p", mtu=link.mtu)
    for device in plan.devices:
        if device.kind not in ROUTED_KINDS or device.plane not in (Plane.DATA, Plane.STORAGE) or not device.loopback:
            continue
        interfaces = []
        for iface in device.interfaces:
            if iface.plane == Plane.OOB:
                interfaces.append(LabInterface(name="eth0", segment=Plane.OOB, ip=_addr(device, iface), mtu=iface.mtu))
            elif iface.name.startswith("Vlan"):
                seg = segment_name("stor", su_label(device.su) if device.su else "site")
                segments.setdefault(seg, LabSegment(name=seg, kind="bridge", mtu=iface.mtu))
                interfaces.append(LabInterface(name=iface.name, segment=seg, ip=_addr(device, iface), mtu=iface.mtu))
                if _first_of_pair(device):
                    prefix = _addr(device, iface).split("/")[1]
                    interfaces.append(
                        LabInterface(name=f"{iface.name}v", segment=seg, ip=f"{iface.gateway}/{prefix}", mtu=iface.mtu)
                    )
            elif iface.name == "Loopback0":
                continue  # FRR puts it on lo from frr.conf
            elif (device.name, iface.name) in host_side:
                interfaces.append(
                    LabInterface(name=iface.name, segment=host_side[(device.name, iface.name)],
                                 ip=_addr(device, iface), mtu=iface.mtu)
                )
            elif (device.name, iface.name) in fabric_peer:
                interfaces.append(
                    LabInterface(name=iface.name, segment=fabric_peer[(device.name, iface.name)],
                                 ip=_addr(device, iface), mtu=iface.mtu)
                )
        frr = rendered.switch(device.name).get("frr.conf") if rendered is not None else None
        hosts.append(LabHost(name=device.name, kind="router", interfaces=tuple(interfaces), frr_conf=frr))
    gateways = _gateways(plan, Plane.MANAGEMENT)
    oob_gateways = [
        f"{i.gateway}/{i.ip.split('/')[1]}"
        for d in plan.devices
        for i in d.interfaces
        if i.plane == Plane.OOB and i.gateway and i.ip
    ]
    extra = tuple(dict.fromkeys(gateways[1:] + oob_gateways))
    control = LabInterface(name="ctl0", segment="mgmt", ip=gateways[0], mtu=mgmt_mtu)
    return LabTopology(
        name=plan.cluster, hosts=tuple(hosts), segments=tuple(segments.values()), control=control, control_extra=extra,
        apt_proxy=True,
    )


def _first_of_pair(device: Device) -> bool:
    return device.name.endswith("-1") or device.name.endswith("-01")
