"""Bare metal in the lab: blank VM to installed (and how far it gets), for one server; the metal lab's `up`.

    python benchmarks/metal_install.py            # one server of inventory/lab-metal.yaml, no container lab:
                                                  # its VM, BMC, provisioning network and the install, timed
    python benchmarks/metal_install.py --up       # `clusterforge up inventory/lab-metal.yaml --stack metal --yes`
                                                  # under flock /work/lab.lock, timed, then `destroy`: prints
                                                  # blank to installed, installed to verified, blank VM to
                                                  # verified for the bare-metal server, and the whole run

Prints one line per step with the seconds since the start (BMC answering, inventory, BIOS, the OS and disk
images (image method), power on, iPXE, the deploy ramdisk's or the installer's steps, installed, SSH) and the
total, or the one-line error the bring-up stopped with. Root only. The first mode makes only what one server
needs (the lab's bridges for its NICs, the oob bridge with the BMC's gateway address, the management
bridge's gateway address so SSH reaches the installed server) under the lab name ``cfbench-metal`` and
removes it all at the end, also after a failure. ``--method debian-installer`` times the installer instead
of the image; ``--image NAME`` deploys that golden image (``.lab/images/NAME``) inside the disk image.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INVENTORY = ROOT / "inventory" / "lab-metal.yaml"
LAB = "cfbench-metal"


def one_server(timeout_s: float, method: str = "image", image: str | None = None) -> int:
    import netaddr

    from clusterforge.baremetal.install import InstallRequest, install, remove
    from clusterforge.lab import bootnet, links, names
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.lab.metal_site import LabSite
    from clusterforge.lab.metal_topology import split
    from clusterforge.lab.overlay import ensure_lab_key
    from clusterforge.lab.util import lab_dir
    from clusterforge.loading import load_and_plan
    from clusterforge.pulumi.metal import provisioning_subnet
    from clusterforge.render import render_tree
    from clusterforge.render.netboot_values import HttpEndpoint

    _, plan, _ = load_and_plan(INVENTORY)
    server = next(iter(plan.bmcs))
    topology = lab_topology(plan, render_tree(plan)).model_copy(update={"name": LAB})
    _, (host,) = split(topology, [server])
    facts = plan.bmcs[server]
    oob = names.bridge_name(LAB, "oob")
    t0 = time.monotonic()

    def say(who: str | None, msg: str) -> None:
        print(f"[{time.monotonic() - t0:7.1f} s] {who or ''}: {msg}", flush=True)

    try:
        for bridge in {oob, *(n.bridge for n in host.nics)}:
            subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], capture_output=True)
            subprocess.run(["ip", "link", "set", bridge, "up"], check=True)
        gateway = f"{facts.gateway}/{facts.prefix}" if facts.gateway else None
        if gateway:
            subprocess.run(["ip", "addr", "add", gateway, "dev", oob], capture_output=True)
        key, public_key = ensure_lab_key(LAB)
        mgmt = next(n for n in host.nics if n.name == "mgmt0")
        if mgmt.ip:
            net = netaddr.IPNetwork(mgmt.ip)
            subprocess.run(["ip", "addr", "add", f"{net[1]}/{net.prefixlen}", "dev", mgmt.bridge], capture_output=True)
        req = InstallRequest(
            lab=LAB, device=plan.device(server), host=host, bmc_url=facts.url, bmc_username=facts.username,
            bmc_password="benchmark-only", bmc_address_cidr=f"{facts.address}/{facts.prefix}",
            bmc_gateway=facts.gateway, oob_bridge=oob, bios=dict(facts.bios),
            provisioning=bootnet.ProvisioningNet(LAB, provisioning_subnet(plan)), ssh_public_key=public_key,
            ssh_identity=key, host_proxy=HttpEndpoint(str(netaddr.IPNetwork(mgmt.ip or "0.0.0.0/32")[1]), 3142),
            timeout_s=timeout_s, method=method, image=image,
        )  # fmt: skip
        try:
            record = install(req, LabSite(), progress=say)
            say(server, f"blank to installed {record['install_seconds']} s, reachable over SSH"
                        f" {record['reachable_seconds']} s")
            return 0
        except Exception as exc:  # noqa: BLE001 - the bring-up's one-line error is the result
            say(server, f"stopped: {exc}")
            return 1
    finally:
        remove(LAB, server, LabSite())
        bootnet.down(LAB)
        links.delete_lab_links(LAB)
        shutil.rmtree(lab_dir(LAB), ignore_errors=True)
        say(None, "removed the VM, its BMC, the provisioning network and the bridges")


# the moments of a bare-metal server's bring-up, as `up` prints them (one line each; first match counts)
MOMENTS = (("powered on, blank", re.compile(r": one-time UEFI network boot set; powered on")),
           ("image written and checked", re.compile(r": install: image written and checked")),
           ("installed, SSH answers", re.compile(r": install: sshd of the installed system answers")),
           ("roles done", re.compile(r"provision su\d+: .*: done, \d+ tasks")),
           ("verified", re.compile(r"Verification su\d+-verify created")))


def whole_up() -> int:
    """The whole `up`, its output passed through and timed line by line: blank to installed, installed to
    verified and blank to verified for the bare-metal server, then the whole run; `destroy` after it."""
    cf = [sys.executable, "-m", "clusterforge.cli"]
    t0 = time.monotonic()
    seen: dict[str, float] = {}
    proc = subprocess.Popen(["flock", "/work/lab.lock", *cf, "up", str(INVENTORY), "--stack", "metal", "--yes"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})  # each line as it happens
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        for name, pattern in MOMENTS:
            if name not in seen and pattern.search(line):
                seen[name] = time.monotonic() - t0
    rc = proc.wait()
    secs = time.monotonic() - t0
    print(f"clusterforge up inventory/lab-metal.yaml --stack metal: exit {rc} after {secs:.0f} s")
    for name, _ in MOMENTS:
        print(f"  {name:28} {seen[name]:6.0f} s" if name in seen else f"  {name:28}    (not seen)")
    spans = (("blank to installed", "powered on, blank", "installed, SSH answers"),
             ("installed to verified", "installed, SSH answers", "verified"),
             ("blank VM to verified", "powered on, blank", "verified"))
    for label, start, end in spans:
        if start in seen and end in seen:
            print(f"  {label:28} {seen[end] - seen[start]:6.0f} s")
    subprocess.run(["flock", "/work/lab.lock", *cf, "destroy", str(INVENTORY), "--stack", "metal", "--yes"])
    return rc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--up", action="store_true", help="time the whole `up` of the metal lab")
    parser.add_argument("--timeout", type=float, default=1800, help="install timeout, seconds")
    parser.add_argument("--method", choices=("image", "debian-installer"), default="image")
    parser.add_argument("--image", default=None, help="a golden image name to deploy (image method)")
    args = parser.parse_args()
    return whole_up() if args.up else one_server(args.timeout, args.method, args.image)


if __name__ == "__main__":
    sys.exit(main())
