"""A bare-metal install for real, through its faults to the end: the VM and BMC of part A (lab.metal_server), the
provisioning network, iPXE, the deploy ramdisk writing the server's disk image (the image method), the first
boot of the installed disk through the BMC, SSH with the host key the image carries.

One module-scoped set-up (the server's lab bridges, the oob gateway and an address on the management bridge, so
this machine reaches the installed server as the lab's control host does; no container lab), used in order:
* the install timing out: one line naming the server, the VM powered off, the record left ``installing``
  (so MetalServer's diff installs it again: tests/unit/test_metal_server_diff.py);
* power lost mid-install (the VM's QEMU destroyed under the BMC once the first part is written): one line
  naming the server, found by the BMC's power state;
* an interrupt (Ctrl-C) during the wait: the VM powered off, the record ``installing``;
* a disk image part that is not the one its manifest names (replaced on the boot server once the server
  netboots): the ramdisk's SHA-256 check refuses it, one line naming the server and the part;
* then the next install, with no hand repair, takes the server from whatever those left to installed; it is
  interrupted once more just after the ramdisk wrote and checked the image, and the install after that boots
  that disk instead of writing it again: its hostname, NIC names, addresses and MTUs are the plan's, its root
  file system grew to the partition, its clock is synchronized by systemd-timesyncd from the lab's NTP server
  (lab.timeserve, started here on the management bridge's address), and a second look finds it installed
  (what MetalServer's diff asks).
The OS image here is the lab's rootfs plus the kernel (no golden layer: the whole `up` of inventory/lab-metal.yaml
deploys the GPU servers' golden image; README "Bare metal"). Teardown removes the VM, its BMC and libvirtd, the
provisioning network and the bridges, also on failure. About 8 min here (TCG).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time

import pytest

from clusterforge.baremetal import netinstall
from clusterforge.lab import bootnet, links, names, timeserve
from clusterforge.lab.metal_site import LabSite

LAB = "cfmetalit"
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("qemu-system-x86_64") or not shutil.which("sfdisk")
    or not shutil.which("grub-mkstandalone") or not shutil.which("mcopy"),
    reason="needs root, QEMU/OVMF, fdisk, grub-efi-amd64-bin and mtools (scripts/setup.sh)")


@pytest.fixture(scope="module")
def request_for():
    import netaddr

    from clusterforge.baremetal.install import InstallRequest, remove
    from clusterforge.lab.from_plan import lab_topology
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
    mgmt = host.nics[0]
    gateway = netaddr.IPNetwork(mgmt.ip)
    time_server = None
    try:
        for bridge in {oob, *(n.bridge for n in host.nics)}:
            subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], capture_output=True)
            subprocess.run(["ip", "link", "set", bridge, "up"], check=True)
        subprocess.run(["ip", "addr", "add", f"{facts.gateway}/{facts.prefix}", "dev", oob], capture_output=True)
        subprocess.run(["ip", "addr", "add", f"{gateway[1]}/{gateway.prefixlen}", "dev", mgmt.bridge],
                       capture_output=True)
        key, public_key = ensure_lab_key(LAB)
        time_server = timeserve.start(LAB, str(gateway[1]))  # the lab's NTP server, as `lab up` starts it

        def make(timeout_s: float) -> InstallRequest:
            return InstallRequest(
                lab=LAB, device=plan.device(server), host=host, bmc_url=facts.url, bmc_username=facts.username,
                bmc_password="lab-test-only", bmc_address_cidr=f"{facts.address}/{facts.prefix}",
                bmc_gateway=facts.gateway, oob_bridge=oob, bios=dict(facts.bios),
                provisioning=bootnet.ProvisioningNet(LAB, provisioning_subnet(plan)), ssh_public_key=public_key,
                ssh_identity=key, host_proxy=HttpEndpoint(str(gateway[1]), 3142), timeout_s=timeout_s,
                method="image", image=None, time_servers=(str(gateway[1]),))  # fmt: skip

        yield make
    finally:
        timeserve.stop(time_server)
        remove(LAB, server, LabSite())
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
    from clusterforge.baremetal.install import install, record

    req = request_for(timeout_s=20)
    with pytest.raises(netinstall.InstallError) as err:
        install(req, LabSite())
    assert str(err.value).startswith(f"{req.host.name}: the install did not finish within 20 s")
    assert "\n" not in str(err.value)
    assert record(LAB, req.host.name)["status"] == "installing"
    assert _power(req.host.name) != "running"


def test_power_lost_mid_install_is_found_through_the_bmc(request_for):
    import libvirt

    from clusterforge.baremetal.install import install, record
    from clusterforge.lab import libvirtd
    from clusterforge.lab.metal_vm import domain_name

    req = request_for(timeout_s=900)
    lines: list[str] = []

    def pull_the_plug() -> None:  # while the image's parts go onto the disk: QEMU dies, as in a power cut
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not any("install: wrote 1 of " in line for line in lines):
            time.sleep(1)
        libvirt.open(libvirtd.uri(LAB)).lookupByName(domain_name(LAB, req.host.name)).destroy()

    cutter = threading.Thread(target=pull_the_plug, daemon=True)
    cutter.start()
    with pytest.raises(netinstall.InstallError) as err:
        install(req, LabSite(), progress=lambda h, m: lines.append(m))
    cutter.join(5)
    assert str(err.value).startswith(f"{req.host.name}: powered off during the install (last step: wrote 1 of ")
    assert record(LAB, req.host.name)["status"] == "installing"


def test_an_interrupt_powers_the_server_off_and_leaves_it_for_the_next_up(request_for, monkeypatch):
    from clusterforge.baremetal import install as metal_install

    req = request_for(timeout_s=900)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C while waiting for the install

    monkeypatch.setattr(metal_install.netinstall, "wait_installed", interrupted)
    with pytest.raises(KeyboardInterrupt):
        metal_install.install(req, LabSite())
    assert metal_install.record(LAB, req.host.name)["status"] == "installing"
    assert _power(req.host.name) != "running"


def test_an_image_part_that_is_not_the_manifests_is_refused_by_the_ramdisk(request_for):
    from clusterforge.baremetal.install import install, record

    req = request_for(timeout_s=900)
    from clusterforge.baremetal.deploy_ramdisk import busybox
    from clusterforge.render.deploy import part_name

    root_part = part_name(1)  # the root file system's first part
    served = bootnet.boot_dir(LAB) / "image" / req.host.name / root_part
    other = subprocess.run([busybox(), "lzop", "-1", "-c"], input=b"\0" * (4 << 20), capture_output=True,
                           check=True).stdout  # a well-formed part, not the manifest's

    def swap(host: str | None, message: str) -> None:  # once the boot is armed: another file in its place
        if "network boot set" in message:
            tmp = served.with_name(".swap")
            tmp.write_bytes(other)
            os.replace(tmp, served)

    with pytest.raises(netinstall.InstallError) as err:
        install(req, LabSite(), progress=swap)
    message = str(err.value)
    assert message.startswith(f"{req.host.name}: the deploy ramdisk stopped: {root_part} arrived with SHA-256 ")
    assert "\n" not in message and "the next `up` installs it again" in message
    assert record(LAB, req.host.name)["status"] == "installing"


def test_the_next_install_takes_it_to_installed_as_the_plan_says(request_for):
    import json

    import netaddr

    from clusterforge.baremetal.install import install, is_installed, record

    req = request_for(timeout_s=1200)

    def interrupt_at_first_boot(host: str | None, message: str) -> None:
        if "booting the installed disk" in message:
            raise KeyboardInterrupt  # Ctrl-C just after the image was written and checked

    with pytest.raises(KeyboardInterrupt):
        install(req, LabSite(), progress=interrupt_at_first_boot)
    assert record(LAB, req.host.name)["status"] == "installing" and record(LAB, req.host.name)["written"]
    lines: list[str] = []
    # boots the written disk, does not write it again
    data = install(req, LabSite(), progress=lambda h, m: lines.append(m))
    assert data["status"] == "installed" and record(LAB, req.host.name)["status"] == "installed"
    assert any("the disk holds this image" in line for line in lines)
    assert not any("network boot set" in line for line in lines), lines
    conf = netinstall.ssh_conf_dir(LAB) / f"{req.host.name}.conf"

    def on_host(command: str) -> str:
        return subprocess.run(["ssh", "-F", str(conf), req.host.name, command], capture_output=True, text=True,
                              timeout=60, check=True).stdout

    assert on_host("hostname").strip() == req.host.name
    links_now = {i["ifname"]: i for i in json.loads(on_host("ip -json addr show"))}
    for nic in req.host.nics:  # every planned NIC, by its as-built MAC, under its planned name and address
        have = links_now.get(nic.name)
        assert have is not None, f"{nic.name} missing: {sorted(links_now)}"
        assert have["address"] == nic.mac and have["mtu"] == nic.mtu
        if nic.ip:
            ip = netaddr.IPNetwork(nic.ip)
            assert {(a["local"], a["prefixlen"]) for a in have["addr_info"] if a["family"] == "inet"} \
                == {(str(ip.ip), ip.prefixlen)}
    root_bytes = json.loads((bootnet.boot_dir(LAB).parent / "metal-install" / req.host.name / "image"
                             / "image.json").read_text())["root_bytes"]
    grown = int(on_host("findmnt -bno SIZE /").strip())
    assert grown > root_bytes * 2, f"the root file system did not grow to its partition ({grown} bytes)"
    assert "PRIVATE" not in on_host("cat /proc/cmdline")
    # its clock: systemd-timesyncd asks the lab's NTP server and the kernel reports the clock synchronized
    deadline = time.monotonic() + 90
    while on_host("timedatectl show -p NTPSynchronized --value").strip() != "yes":
        assert time.monotonic() < deadline, on_host("timedatectl timesync-status; systemctl status systemd-timesyncd")
        time.sleep(3)
    assert on_host("timedatectl show-timesync -p ServerAddress --value").strip() == req.time_servers[0]
    assert is_installed(LAB, req.host.name)  # what MetalServer's diff asks: a second `up` leaves it alone
