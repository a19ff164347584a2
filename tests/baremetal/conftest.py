"""A lab bare-metal server for the BMC tests: a real QEMU VM (OVMF, blank disk) behind sushy-tools' Redfish
emulator on an oob bridge of its own; brought up once per module, always taken down (also after a failure)."""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

LAB = "bmctest"
SUBNET = "198.19.247"  # inside 198.18.0.0/15; no other lab of the repository uses it


def skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "not root (the lab BMC needs network namespaces and a libvirtd)"
    for tool in ("qemu-system-x86_64", "qemu-img", "libvirtd", "unshare"):
        if shutil.which(tool) is None:
            return f"{tool} not found (scripts/setup.sh installs it)"
    if not Path("/usr/share/OVMF/OVMF_CODE_4M.fd").is_file():
        return "OVMF not installed (scripts/setup.sh installs ovmf)"
    try:
        import libvirt  # noqa: F401
        import sushy_tools  # noqa: F401
    except ImportError as exc:
        return f"the `lab` extra is not installed ({exc.name})"
    return None


@dataclass
class MetalLab:
    vm: object
    bmc: object
    bridge: str
    password: str
    address: str

    def endpoint(self, **changes):
        from clusterforge.baremetal.types import BmcEndpoint

        base = dict(server="gpu01", url=self.bmc.url, username="admin", password=self.password,
                    ca_file=self.bmc.ca_file, timeout_s=3.0)
        return BmcEndpoint(**{**base, **changes})


@pytest.fixture(scope="module")
def metal(request: pytest.FixtureRequest) -> MetalLab:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    from clusterforge.lab import metal_debris, names
    from clusterforge.lab.metal_server import start_metal_server
    from clusterforge.lab.util import run

    bridge = names.bridge_name(LAB, "oob")
    metal_debris.teardown_metal(LAB)  # what a killed earlier run left

    def teardown() -> None:
        metal_debris.teardown_metal(LAB)
        run(["ip", "link", "del", "dev", bridge], check=False)
        left = metal_debris.find_metal_debris(LAB)
        assert not left, f"the metal lab left {left.describe()} behind"

    request.addfinalizer(teardown)
    run(["ip", "link", "add", "name", bridge, "type", "bridge", "stp_state", "0", "forward_delay", "0"], check=False)
    run(["ip", "link", "set", "dev", bridge, "alias", names.alias(LAB, "segment=oob")])
    run(["ip", "link", "set", "dev", bridge, "up"])
    run(["ip", "addr", "replace", f"{SUBNET}.1/24", "dev", bridge])  # this machine on the oob plane
    password = secrets.token_urlsafe(18)
    vm, bmc = start_metal_server(LAB, "gpu01", nic_bridges=[bridge], oob_bridge=bridge, bmc_cidr=f"{SUBNET}.11/24",
                                 username="admin", password=password, memory_mib=1024, vcpus=1)
    return MetalLab(vm, bmc, bridge, password, f"{SUBNET}.11")
