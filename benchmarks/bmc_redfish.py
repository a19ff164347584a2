"""The lab bare-metal server and its BMC: start-up and Redfish call latencies, printed.

Starts a lab server (lab/metal_server.py: the VM on a private libvirtd, sushy-tools on an oob bridge of its own,
198.19.246.0/24) from nothing, times each step, then each Redfish call ROUNDS times (median and maximum), power
on to the VM's first DHCP discover on its bridge, and takes everything down. Run as root, under the lab lock:
  flock /work/lab.lock python benchmarks/bmc_redfish.py [--rounds N] [--no-boot]
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "baremetal"))

LAB = "bmcbench"
SUBNET = "198.19.246"


def _time(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--no-boot", action="store_true", help="skip the power-on-to-DHCP measurement")
    args = parser.parse_args()
    from test_redfish_lab import _dhcp_discover_from  # the raw-socket watcher the tests use

    from clusterforge.baremetal.redfish import connect
    from clusterforge.baremetal.types import BmcEndpoint
    from clusterforge.lab import bmc_emulator, libvirtd, metal_debris, metal_vm, names
    from clusterforge.lab.util import run

    bridge = names.bridge_name(LAB, "oob")
    metal_debris.teardown_metal(LAB)
    print(f"load average {os.getloadavg()[0]:.2f}; cores {os.cpu_count()}")
    try:
        run(["ip", "link", "add", "name", bridge, "type", "bridge", "stp_state", "0", "forward_delay", "0"])
        run(["ip", "link", "set", "dev", bridge, "up"])
        run(["ip", "addr", "add", f"{SUBNET}.1/24", "dev", bridge])
        t_daemon, _ = _time(lambda: libvirtd.ensure(LAB))
        t_vm, vm = _time(lambda: metal_vm.define_vm(LAB, "gpu01", [bridge], memory_mib=1024, vcpus=1))
        password = secrets.token_urlsafe(18)
        t_bmc, handle = _time(lambda: bmc_emulator.start_bmc(vm, address_cidr=f"{SUBNET}.11/24", bridge=bridge,
                                                             username="admin", password=password))
        print(f"start: libvirtd {t_daemon:.2f} s, VM defined {t_vm:.2f} s ({vm.accel}), BMC answering {t_bmc:.2f} s")
        endpoint = BmcEndpoint("gpu01", handle.url, "admin", password, handle.ca_file)
        bmc = connect(endpoint)
        calls = {
            "connect (login, find the system)": lambda: connect(endpoint).close(),
            "inventory": bmc.inventory,
            "power_state": bmc.power_state,
            "bios (current + pending)": bmc.bios,
            "apply_bios (already so: reads only)": lambda: bmc.apply_bios({"ProcTurboMode": "Disabled"}),
            "boot_once pxe": lambda: bmc.boot_once("pxe"),
            "event_log": bmc.event_log,
        }
        bmc.apply_bios({"ProcTurboMode": "Disabled"})
        for name, fn in calls.items():
            times = [_time(fn)[0] for _ in range(args.rounds)]
            print(f"{name:<38} median {statistics.median(times) * 1000:7.1f} ms  max {max(times) * 1000:7.1f} ms"
                  f"  ({args.rounds} calls)")
        t_on, _ = _time(lambda: bmc.power("on"))
        print(f"power on (QEMU started)                {t_on:.2f} s")
        if not args.no_boot:
            start = time.perf_counter()
            seen = _dhcp_discover_from(bridge, vm.nics[0].mac, timeout_s=300)
            print(f"power on -> first DHCP discover        {time.perf_counter() - start + t_on:.1f} s"
                  f" ({'seen' if seen else 'NOT seen in 300 s'})")
        t_off, _ = _time(lambda: bmc.power("off"))
        print(f"power off                              {t_off:.2f} s")
    finally:
        t_down, found = _time(lambda: metal_debris.teardown_metal(LAB))
        run(["ip", "link", "del", "dev", bridge], check=False)
        print(f"teardown {t_down:.2f} s ({found.describe()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
