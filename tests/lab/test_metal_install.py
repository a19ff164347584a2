"""A bare-metal install for real, stopped by its faults: the VM and BMC of part A (lab.metal_server), the
provisioning network, the preseed of inventory/lab-metal.yaml's server, iPXE, the Debian installer.

One module-scoped set-up (the server's lab bridges and the oob gateway, no container lab) shared by:
* the install timing out: one line naming the server, the VM powered off, the record left ``installing``
  (so MetalServer's diff installs it again: tests/unit/test_metal_server_diff.py);
* power lost mid-install (the VM's QEMU destroyed under the BMC once the installer kernel was fetched): one
  line naming the server, found by the BMC's power state;
* an interrupt (Ctrl-C) during the wait: the VM powered off, the record ``installing``.
Teardown removes the VM, its BMC and libvirtd, the provisioning network and the bridges, also on failure.
About 3 min here (TCG: three power-ons to iPXE). A whole install is not run: this machine's Debian mirror
serves no udebs (README, "Bare metal").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time

import pytest

from clusterforge.lab import bootnet, links, names, netinstall

LAB = "cfmetalit"
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("qemu-system-x86_64") or not os.path.exists(bootnet.NETBOOT_DIR / "linux"),
    reason="needs root, QEMU/OVMF and debian-installer-12-netboot-amd64 (scripts/setup.sh)")


@pytest.fixture(scope="module")
def request_for():
    import netaddr

    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.lab.metal_install import InstallRequest, remove
    from clusterforge.lab.metal_topology import split
    from clusterforge.lab.overlay import ensure_lab_key
    from clusterforge.lab.util import lab_dir
    from clusterforge.loading import load_and_plan
    from clusterforge.pulumi.metal import provisioning_subnet
    from clusterforge.render import render_tree
    from clusterforge.render.netboot_values import HttpEndpoint

    _, plan, _ = load_and_plan("inventory/lab-metal.yaml")
    server = next(iter(plan.bmcs))
    topology = lab_topology(plan, render_tree(plan)).model_copy(update={"name": LAB})
    _, (host,) = split(topology, [server])
    facts = plan.bmcs[server]
    oob = names.bridge_name(LAB, "oob")
    try:
        for bridge in {oob, *(n.bridge for n in host.nics)}:
            subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], capture_output=True)
            subprocess.run(["ip", "link", "set", bridge, "up"], check=True)
        subprocess.run(["ip", "addr", "add", f"{facts.gateway}/{facts.prefix}", "dev", oob], capture_output=True)
        key, public_key = ensure_lab_key(LAB)
        mgmt = host.nics[0]

        def make(timeout_s: float) -> InstallRequest:
            return InstallRequest(
                lab=LAB, device=plan.device(server), host=host, bmc_url=facts.url, bmc_username=facts.username,
                bmc_password="lab-test-only", bmc_address_cidr=f"{facts.address}/{facts.prefix}",
                bmc_gateway=facts.gateway, oob_bridge=oob, bios=dict(facts.bios),
                provisioning=bootnet.ProvisioningNet(LAB, provisioning_subnet(plan)), ssh_public_key=public_key,
                ssh_identity=key, host_proxy=HttpEndpoint(str(netaddr.IPNetwork(mgmt.ip)[1]), 3142),
                timeout_s=timeout_s)  # fmt: skip

        yield make
    finally:
        remove(LAB, server)
        bootnet.down(LAB)
        links.delete_lab_links(LAB)
        shutil.rmtree(lab_dir(LAB), ignore_errors=True)
        left = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        assert names.link_prefix(LAB) not in left
        assert not [n for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
                    if n.startswith(f"cf-{LAB}.")]


def _power(server: str) -> str:
    from clusterforge.lab.metal_vm import vm_state

    return vm_state(LAB, server)


def test_an_install_that_times_out_is_one_line_and_left_for_the_next_up(request_for):
    from clusterforge.lab.metal_install import install, record

    req = request_for(timeout_s=20)
    with pytest.raises(netinstall.InstallError) as err:
        install(req)
    assert str(err.value).startswith(f"{req.host.name}: the install did not finish within 20 s")
    assert "\n" not in str(err.value)
    assert record(LAB, req.host.name)["status"] == "installing"
    assert _power(req.host.name) != "running"


def test_power_lost_mid_install_is_found_through_the_bmc(request_for):
    import libvirt

    from clusterforge.lab import libvirtd
    from clusterforge.lab.metal_install import install, record
    from clusterforge.lab.metal_vm import domain_name

    req = request_for(timeout_s=900)
    lines: list[str] = []

    def pull_the_plug() -> None:  # once the installer kernel is on its way: QEMU dies, as with a power cut
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not any("installer kernel" in line for line in lines):
            time.sleep(1)
        libvirt.open(libvirtd.uri(LAB)).lookupByName(domain_name(LAB, req.host.name)).destroy()

    cutter = threading.Thread(target=pull_the_plug, daemon=True)
    cutter.start()
    with pytest.raises(netinstall.InstallError) as err:
        install(req, progress=lambda h, m: lines.append(m))
    cutter.join(5)
    assert str(err.value).startswith(f"{req.host.name}: powered off during the install (last step: loading the")
    assert record(LAB, req.host.name)["status"] == "installing"


def test_an_interrupt_powers_the_server_off_and_leaves_it_for_the_next_up(request_for, monkeypatch):
    from clusterforge.lab import metal_install

    req = request_for(timeout_s=900)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C while waiting for the installer

    monkeypatch.setattr(metal_install.netinstall, "wait_installed", interrupted)
    with pytest.raises(KeyboardInterrupt):
        metal_install.install(req)
    assert metal_install.record(LAB, req.host.name)["status"] == "installing"
    assert _power(req.host.name) != "running"
