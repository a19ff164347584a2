"""dnsmasq's configuration for a provisioning network: DHCP reservations only, TFTP for iPXE, no DNS upstream.

Pure. One ``dhcp-host`` per server being installed (its as-built boot MAC, the address reserved for it);
``dhcp-range ... static`` means an unknown MAC gets no address and no boot. A UEFI PXE client
(client-arch 7 or 9, RFC 4578) is given iPXE (``snponly.efi``: it drives the NIC through the firmware's
own network protocol) over TFTP; iPXE (user class ``iPXE``) is given the boot server's script URL, which
that server answers per source address. Option names and tags as dnsmasq 2.90's man page spells them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import netaddr

from .netboot_values import HttpEndpoint, NetbootValueError, hostname, ipv4, ipv4_cidr, mac

__all__ = ["Reservation", "BootNetwork", "render_dnsmasq", "IPXE_LOADER", "IPXE_SCRIPT_PATH"]

IPXE_LOADER = "snponly.efi"
IPXE_SCRIPT_PATH = ("ipxe", "boot.ipxe")
_PATH_PART = re.compile(r"[A-Za-z0-9._-]{1,64}")
_UEFI_ARCHES = (7, 9)  # EFI BC and EFI x86-64 (RFC 4578 client system architecture)


@dataclass(frozen=True)
class Reservation:
    host: str
    mac: str
    ip: str


@dataclass(frozen=True)
class BootNetwork:
    interface: str  # the boot namespace's interface dnsmasq binds to
    address: str  # the boot server's own address, CIDR
    tftp_root: str
    http: HttpEndpoint
    lease_s: int = 600


def _checked(net: BootNetwork, reservations: Sequence[Reservation]) -> list[Reservation]:
    if not net.interface.isalnum() or len(net.interface) > 15:
        raise NetbootValueError("interface", net.interface, "a Linux interface name of letters and digits")
    ip, prefix = ipv4_cidr("boot_network.address", net.address)
    subnet = netaddr.IPNetwork(f"{ip}/{prefix}")
    parts = net.tftp_root.split("/")[1:]
    if not net.tftp_root.startswith("/") or not all(_PATH_PART.fullmatch(p) and p not in (".", "..") for p in parts):
        # a comma would add tftp-root's interface argument, a newline another option
        raise NetbootValueError("tftp_root", net.tftp_root, "an absolute path of letters, digits, '.', '_' and '-'")
    seen_mac: set[str] = set()
    seen_ip: set[str] = {ip}
    out = []
    for r in reservations:
        host = hostname("reservation.host", r.host)
        m, a = mac(f"{host}.mac", r.mac), ipv4(f"{host}.ip", r.ip)
        if netaddr.IPAddress(a) not in subnet or netaddr.IPAddress(a) in (subnet.network, subnet.broadcast):
            raise NetbootValueError(f"{host}.ip", a, f"a host address of the provisioning subnet {subnet.cidr}")
        if m in seen_mac or a in seen_ip:
            raise NetbootValueError(f"{host}.mac", f"{m} {a}", "one reservation per MAC and per address")
        seen_mac.add(m)
        seen_ip.add(a)
        out.append(Reservation(host, m, a))
    return out


def render_dnsmasq(net: BootNetwork, reservations: Sequence[Reservation]) -> str:
    checked = _checked(net, reservations)
    subnet = netaddr.IPNetwork(net.address)
    lines = [
        "# clusterforge: provisioning network (generated)",
        f"interface={net.interface}",
        "bind-interfaces",
        # DNS for the installer's sake only (without a name server netcfg stops to ask for one): no
        # upstream, no /etc/hosts; the installer names nothing but addresses, its proxy resolves the mirror
        "no-resolv",
        "no-hosts",
        f"dhcp-range={subnet.network},static,{subnet.netmask},{int(net.lease_s)}s",
        # the boot server is the installer's default gateway so netcfg asks nothing, and it forwards
        # nothing (its namespace has one interface and no forwarding): the network still leads nowhere
        f"dhcp-option=option:router,{subnet.ip}",
        f"dhcp-option=option:dns-server,{subnet.ip}",
        *(f"dhcp-match=set:efi64,option:client-arch,{arch}" for arch in _UEFI_ARCHES),
        "dhcp-userclass=set:ipxe,iPXE",
        f"dhcp-boot=tag:efi64,tag:!ipxe,{IPXE_LOADER}",
        f"dhcp-boot=tag:ipxe,{net.http.url(*IPXE_SCRIPT_PATH)}",
        "enable-tftp",
        f"tftp-root={net.tftp_root}",
        "log-dhcp",
    ]
    lines += [f"dhcp-host={r.mac},{r.ip},{r.host}" for r in checked]
    return "\n".join(lines) + "\n"
