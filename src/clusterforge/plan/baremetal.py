"""Which servers are managed through a BMC, and where and how: one ``BmcFacts`` per bare-metal server.

A server is bare metal when its server model has ``baremetal.models.<model>`` or its SU declares
``management``; the SU's wins. The BMC's address is the server's planned oob interface (the one rule for
it: ``bmc_address``). Credentials stay references (``SecretRef``): the plan never holds a secret.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.model import ClusterSpec
from clusterforge.model.management import Management, SecretRef
from clusterforge.plan.objects import Device
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["BmcFacts", "bmc_address", "bmc_facts"]


@dataclass(frozen=True)
class BmcFacts:
    """A server's BMC as planned: reach it at https://address:port, check TLS against ``ca``."""

    server: str
    address: str  # the oob address, no prefix
    prefix: int  # the oob subnet's prefix length (a lab BMC's interface gets address/prefix)
    gateway: str | None
    kind: str  # redfish
    port: int
    username: str
    password: SecretRef
    ca: str | None  # repository path of the PEM CA, or None: the system trust store
    verify_tls: bool
    boot_mode: str  # uefi
    boot_target: str  # pxe | uefi_http
    bios: tuple[tuple[str, str | int | bool], ...]  # declared attributes, sorted by name
    install: str = "image"  # image | debian-installer

    @property
    def url(self) -> str:
        return f"https://{self.address}:{self.port}" if self.port != 443 else f"https://{self.address}"


def bmc_address(device: Device) -> tuple[str, int, str | None] | None:
    """(address, prefix length, gateway) of the device's oob interface, or None when it has none."""
    for iface in device.interfaces:
        if iface.plane == Plane.OOB and iface.ip:
            address, _, prefix = iface.ip.partition("/")
            return address, int(prefix or 32), iface.gateway
    return None


def _management(spec: ClusterSpec, device: Device) -> Management | None:
    if device.su is not None:
        for unit in spec.scalable_units:
            if unit.id == device.su and unit.management is not None:
                return unit.management
    return spec.baremetal.models.get(device.model)


def bmc_facts(spec: ClusterSpec, devices: list[Device] | tuple[Device, ...]) -> dict[str, BmcFacts]:
    """Every bare-metal server's BMC, by server name, in plan order."""
    out: dict[str, BmcFacts] = {}
    for device in devices:
        if device.kind != DeviceKind.SERVER:
            continue
        management = _management(spec, device)
        where = bmc_address(device)
        if management is None or where is None:
            continue
        address, prefix, gateway = where
        out[device.name] = BmcFacts(
            server=device.name, address=address, prefix=prefix, gateway=gateway, kind=management.kind,
            port=management.port, username=management.credentials.username,
            password=management.credentials.password, ca=management.ca, verify_tls=management.verify_tls,
            boot_mode=management.boot_mode, boot_target=management.boot_target,
            bios=tuple(sorted(management.bios.items())), install=management.install,
        )  # fmt: skip
    return out
