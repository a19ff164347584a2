"""The bare-metal servers of a lab stack: which lab hosts they replace, and one MetalServer each.

A server the Plan gives a BMC (``Plan.bmcs``: its model or SU declares ``management``) is, in the lab, a VM
with a blank disk behind a Redfish BMC emulator instead of a container: ``metal_servers`` takes it out of
the container topology (``lab.metal_topology.split``) and declares its ``MetalServer`` (install through the
BMC), which the Lab precedes and the SU's provisioning follows. Its provisioning subnet is the highest
/24 of 198.18.0.0/15 that none of the Plan's pools touches, so adding it renumbers nothing planned.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import asdict

import netaddr
import pulumi

from clusterforge.lab.topology import LabTopology
from clusterforge.plan import Plan
from clusterforge.pulumi.providers.metal_server import MetalServerArgs

__all__ = ["metal_servers", "provisioning_subnet", "lab_bmc_password", "LAB_BLOCK"]

LAB_BLOCK = netaddr.IPNetwork("198.18.0.0/15")


def _pool_networks(pools: object) -> list[netaddr.IPNetwork]:
    out = []
    stack = [pools]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, str) and "/" in item:
            try:
                out.append(netaddr.IPNetwork(item))
            except (netaddr.AddrFormatError, ValueError):
                continue
    return out


def provisioning_subnet(plan: Plan) -> str:
    used = netaddr.IPSet(_pool_networks(plan.pools))
    for device in plan.devices:
        for iface in device.interfaces:
            if iface.ip:
                used.add(netaddr.IPNetwork(iface.ip).cidr)
    for subnet in reversed(list(LAB_BLOCK.subnet(24))):
        if not used & netaddr.IPSet([subnet]):
            return str(subnet)
    raise ValueError("no free /24 in 198.18.0.0/15 for the provisioning network")


def lab_bmc_password(lab: str) -> str:
    """The lab's emulated BMCs' password when the stack sets none: made once, kept 0600 in the lab home."""
    from clusterforge.hostio import write_atomic
    from clusterforge.paths import lab_home

    path = lab_home() / ".secrets" / f"{lab}-bmc-password"
    if not path.exists():
        write_atomic(path, secrets.token_urlsafe(18), 0o600)
    return path.read_text().strip()


def metal_servers(plan: Plan, topology: LabTopology, bmc_password: pulumi.Input[str] | None,
                  images: dict[str, str] | None = None) -> tuple[LabTopology, tuple[MetalServerArgs, ...]]:
    """The container topology without the bare-metal servers, and their MetalServer inputs (``images``: the
    golden image each server's software profile boots, by server: the image method deploys it)."""
    from clusterforge.lab import names, overlay
    from clusterforge.lab.aptproxy import PORT
    from clusterforge.lab.metal_topology import split

    bmcs = getattr(plan, "bmcs", {}) or {}
    if not bmcs:
        return topology, ()
    rest, hosts = split(topology, list(bmcs))
    lab = topology.name
    subnet = provisioning_subnet(plan)
    key_path, public_key = overlay.ensure_lab_key(lab)
    password = bmc_password if bmc_password is not None else pulumi.Output.secret(lab_bmc_password(lab))
    out = []
    for host in hosts:
        facts = bmcs[host.name]
        device = plan.device(host.name)
        request = {
            "lab": lab, "device": {**asdict(device), "interfaces": [asdict(i) for i in device.interfaces]},
            "host": {"name": host.name, "nics": [asdict(n) for n in host.nics],
                     "routes": [asdict(r) for r in host.routes]},
            "bmc_url": facts.url, "bmc_username": facts.username,
            "bmc_address_cidr": f"{facts.address}/{facts.prefix}", "bmc_gateway": facts.gateway,
            "oob_bridge": names.bridge_name(lab, "oob"), "bios": dict(facts.bios),
            "provisioning_subnet": subnet, "ssh_public_key": public_key.strip(), "ssh_identity": str(key_path),
            "host_proxy": [topology.control.address, PORT],
            # the declared NTP servers (site.time_servers; the lab examples name lab.timeserve's address)
            "time_servers": list(plan.site_info.time_servers),
            "method": facts.install, "image": (images or {}).get(host.name),
        }  # fmt: skip
        text = json.dumps(request, sort_keys=True, default=str)
        out.append(MetalServerArgs(lab=lab, server=host.name, request_json=text,
                                   request_hash=hashlib.sha256(text.encode()).hexdigest()[:16],
                                   bmc_password=password))
    return rest, tuple(out)
