"""MetalServer: a bare-metal server brought from blank to installed through its BMC (lab target).

Create runs ``clusterforge.baremetal.install.install`` in the lab's site (``lab.metal_site.LabSite``: the server
a VM behind a Redfish BMC emulator): inventory over Redfish into the as-built record,
BIOS attributes, one-time UEFI network boot, power on, the install (the server's disk image written by the
deploy ramdisk, or the Debian installer with the preseed rendered from the Plan), SSH on the management
address. The SU's HostProvision depends on it, so the roles and the host
checks reach the server only once it is installed. ``diff`` reads the server as it is now: an install
that did not finish (timeout, power lost, Ctrl-C: the record still says ``installing``) or a server that
no longer answers SSH with its install's host key is drift, and the update installs it again; an
installed, answering server with the same install inputs is left alone. Changed install inputs (an
address, the disk layout, the NICs) re-image it. Delete powers the VM off and removes it (``destroy``).
The BMC password is a secret input: never in state in plain text, never on the output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from clusterforge.pulumi.providers import _lifeline

__all__ = ["MetalServer", "MetalServerArgs", "MetalServerProvider", "install_request", "lab_site"]

REPLACE_KEYS = ("lab", "server")
REINSTALL_KEYS = ("request_hash",)


@dataclass(frozen=True)
class MetalServerArgs:
    lab: str
    server: str
    request_json: str  # clusterforge.baremetal.install.InstallRequest without the password (see _request)
    request_hash: str  # the install inputs: a change re-images the server
    bmc_password: pulumi.Input[str]


def install_request(request_json: str, password: str):
    """The InstallRequest a MetalServer's inputs describe (also `clusterforge replace` for a lab server)."""
    return _request({"request": request_json, "bmc_password": password})


def _request(props: dict[str, Any]):
    from pathlib import Path

    from clusterforge.baremetal.bootnet import ProvisioningNet
    from clusterforge.baremetal.host import MetalHost, MetalNic, MetalRoute
    from clusterforge.baremetal.install import InstallRequest
    from clusterforge.plan.objects import Device, Interface
    from clusterforge.render.netboot_values import HttpEndpoint

    r = json.loads(props["request"])
    dev = r["device"]
    interfaces = tuple(Interface(**{**i, "members": tuple(i.get("members") or ())}) for i in dev["interfaces"])
    device = Device(**{**dev, "psu_feeds": tuple(dev.get("psu_feeds") or ()), "interfaces": interfaces})
    host = MetalHost(r["host"]["name"], tuple(MetalNic(**n) for n in r["host"]["nics"]),
                     tuple(MetalRoute(**x) for x in r["host"]["routes"]))
    proxy = r.get("host_proxy")
    return InstallRequest(
        lab=r["lab"], device=device, host=host, bmc_url=r["bmc_url"], bmc_username=r["bmc_username"],
        bmc_password=props["bmc_password"], bmc_address_cidr=r["bmc_address_cidr"], bmc_gateway=r.get("bmc_gateway"),
        oob_bridge=r["oob_bridge"], bios=r.get("bios", {}),
        provisioning=ProvisioningNet(r["lab"], r["provisioning_subnet"]),
        ssh_public_key=r["ssh_public_key"], ssh_identity=Path(r["ssh_identity"]),
        host_proxy=HttpEndpoint(proxy[0], proxy[1]) if proxy else None,
        time_servers=tuple(r.get("time_servers") or ()),
        timeout_s=float(r.get("timeout_s", 1800)), method=r.get("method", "debian-installer"), image=r.get("image"),
    )  # fmt: skip


def lab_site():
    """Where a MetalServer stands: the lab target's servers are VMs behind emulated BMCs."""
    from clusterforge.lab.metal_site import LabSite

    return LabSite()


def _install(props: dict[str, Any]) -> dict[str, Any]:
    from clusterforge.baremetal.install import install

    _lifeline.watch()
    data = install(_request(props), lab_site(),
                   progress=lambda host, msg: _lifeline.say(f"{host or props['server']}: {msg}"))
    return {**props, "status": data.get("status"), "install_seconds": data.get("install_seconds"),
            "reachable_seconds": data.get("reachable_seconds"), "asbuilt": data.get("asbuilt")}


class MetalServerProvider(ResourceProvider):
    serialize_as_secret_always = False

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        from clusterforge.baremetal.install import is_installed, record

        replaces = [k for k in REPLACE_KEYS if olds.get(k) != news.get(k)]
        if replaces:
            return DiffResult(changes=True, replaces=replaces, delete_before_replace=True)
        changed = [k for k in REINSTALL_KEYS if olds.get(k) != news.get(k)]
        if changed:
            _lifeline.say(f"{news['server']}: its install inputs changed; `up` re-images it")
            return DiffResult(changes=True, replaces=[], delete_before_replace=True)
        status = record(news["lab"], news["server"]).get("status")
        if status != "installed":
            _lifeline.say(f"drift: {news['server']}: {'its install did not finish' if status else 'it is blank'};"
                          " `up` installs it again")
            return DiffResult(changes=True, replaces=[], delete_before_replace=True)
        if not is_installed(news["lab"], news["server"]):
            _lifeline.say(f"drift: {news['server']}: installed, but it does not answer SSH with its install's"
                          " host key; `up` installs it again")
            return DiffResult(changes=True, replaces=[], delete_before_replace=True)
        return DiffResult(changes=False, replaces=[], delete_before_replace=True)

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"metal-{props['lab']}-{props['server']}", _install(props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(_install(news))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        from clusterforge.baremetal.install import remove

        remove(props["lab"], props["server"], lab_site())


class MetalServer(Resource, module="clusterforge", name="MetalServer"):
    """pulumi-python:dynamic/clusterforge:MetalServer — outputs `status`, `install_seconds`, `asbuilt`."""

    status: pulumi.Output[str]
    install_seconds: pulumi.Output[float]
    asbuilt: pulumi.Output[dict]

    def __init__(self, name: str, args: MetalServerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {"lab": args.lab, "server": args.server, "request": args.request_json,
                 "request_hash": args.request_hash, "bmc_password": pulumi.Output.secret(args.bmc_password),
                 "status": None, "install_seconds": None, "reachable_seconds": None, "asbuilt": None}
        super().__init__(MetalServerProvider(), name, props, opts)
