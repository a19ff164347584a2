"""The Kubernetes control plane's members and the one address its clients use.

* Members: every control node (name, management address) runs etcd and an API server; etcd's initial
  cluster is all of them, so three control nodes keep a quorum of two with one stopped.
* One control node: clients name its address and the API server's own port (6443), as before.
* Three control nodes (``HA_MIN_MEMBERS``): a virtual address, ``API_VIP_OFFSET`` (.15) of the site
  management block, the last of the addresses kept below the first host (the control nodes hold .12-.14),
  so planning it moves no host. keepalived (VRRP, unicast to the other members) holds it on one control node
  at a time; HAProxy on every control node listens on ``HA_API_PORT`` and passes each connection to an API
  server that accepts TCP on 6443. Every kubeconfig (admin, controller-manager, scheduler, the kubelets',
  kube-proxy's, monitoring's, clusterforge's own) names ``https://VIP:8443``. HAProxy listens on its own port
  because each API server keeps 6443 on every address of its host (the components on it reach it on loopback).
* The VRRP router id, ``API_VRRP_ID``, is clear of the gateway switches' (plan/gateways.py numbers theirs up
  from 1) on the same management VLAN.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from clusterforge.plan.ipam import Block
from clusterforge.plan.numbering import API_VIP_OFFSET
from clusterforge.plan.objects import Device
from clusterforge.vocab import DeviceKind

__all__ = ["ControlPlanePlan", "plan_control_plane", "API_PORT", "HA_API_PORT", "HA_MIN_MEMBERS", "API_VRRP_ID"]

API_PORT = 6443  # every API server's own port
HA_API_PORT = 8443  # HAProxy's, behind the virtual address
HA_MIN_MEMBERS = 3
API_VRRP_ID = 251


@dataclass(frozen=True)
class ControlPlanePlan:
    members: tuple[tuple[str, str], ...]  # (control node, management address), in Plan order
    vip: str | None  # the API's virtual address with HA_MIN_MEMBERS or more members, else None
    prefixlen: int  # the management block's (keepalived adds the VIP with it)

    @property
    def ha(self) -> bool:
        return self.vip is not None

    @property
    def address(self) -> str:
        """What every client names: the virtual address, or the only control node's."""
        return self.vip if self.vip is not None else self.members[0][1]

    @property
    def port(self) -> int:
        return HA_API_PORT if self.ha else API_PORT

    @property
    def server(self) -> str:
        return f"https://{self.address}:{self.port}"

    def to_dict(self) -> dict[str, object]:
        return {"members": [{"name": n, "ip": ip} for n, ip in self.members], "ha": self.ha, "vip": self.vip,
                "prefixlen": self.prefixlen, "address": self.address, "port": self.port, "server": self.server,
                "api_port": API_PORT, "vrrp_id": API_VRRP_ID}


def plan_control_plane(site_management: Block, devices: Iterable[Device]) -> ControlPlanePlan | None:
    """The members and the clients' address, from the control nodes and the site management block; None
    without a control node with a management address."""
    members = tuple((d.name, d.management_ip) for d in devices if d.kind == DeviceKind.CONTROL and d.management_ip)
    if not members:
        return None
    vip = site_management.addr(API_VIP_OFFSET).split("/")[0] if len(members) >= HA_MIN_MEMBERS else None
    return ControlPlanePlan(members, vip, site_management.prefixlen)
