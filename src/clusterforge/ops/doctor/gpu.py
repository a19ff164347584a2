"""GPU checks: seen on the bus and by the driver, nouveau, driver versions, persistence, Xid, NVLink, clocks/power.

Xid meanings: NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors/); the codes below are the
ones an operator meets most, in our words, with the action the catalog's resolution buckets give.
Throttle (clock event) reasons: the nvidia-smi ``clocks_event_reasons.*`` query fields.
"""

from __future__ import annotations

import re

from clusterforge.ops.doctor.findings import Finding, Status
from clusterforge.ops.doctor.shell import Shell

NVIDIA_PCI_CLASSES = ("0x0300", "0x0302")  # VGA / 3D controller
# code -> (meaning, fix). Application-level codes are warnings; the rest mean the node needs work.
XID = {
    13: ("graphics engine exception (usually the application)",
         "restart the job; if it repeats on one GPU, run the GPU field diagnostics"),
    31: ("GPU memory page fault (usually the application)",
         "restart the job; check the application for illegal memory access"),
    43: ("GPU stopped processing (usually the application)", "restart the job"),
    45: ("preemptive cleanup after an earlier error", "look for the error before it in the log"),
    48: ("double-bit ECC error", "drain the node, reset the GPU; if it repeats, RMA the GPU"),
    63: ("ECC row remapping recorded", "drain and reset the GPU to activate the remap"),
    64: ("ECC row remapping failed", "drain the node; RMA the GPU"),
    74: ("NVLink error", "drain, reset the GPUs; check the NVLink/NVSwitch (fabric manager) and the baseboard"),
    79: ("GPU has fallen off the bus", "drain the node; power-cycle it; reseat/RMA the GPU if it repeats"),
    92: ("high single-bit ECC error rate", "watch it; drain and run field diagnostics if it grows"),
    94: ("contained ECC error", "restart the affected application; reset the GPU when convenient"),
    95: ("uncontained ECC error", "drain the node and reset the GPU"),
    119: ("GSP RPC timeout", "drain, reset the GPU; update the driver/firmware if it repeats"),
    120: ("GSP error", "drain, reset the GPU; update the driver/firmware if it repeats"),
}
APP_XIDS = {13, 31, 43, 45}
THROTTLE = {  # query field -> (name, bad)
    "clocks_event_reasons.hw_slowdown": ("hardware slowdown", Status.fail),
    "clocks_event_reasons.hw_thermal_slowdown": ("hardware thermal slowdown", Status.fail),
    "clocks_event_reasons.hw_power_brake_slowdown": ("hardware power brake", Status.fail),
    "clocks_event_reasons.sw_thermal_slowdown": ("software thermal slowdown", Status.warn),
    "clocks_event_reasons.sw_power_cap": ("software power cap", Status.warn),
}
NO_DRIVER = "no NVIDIA driver here (nvidia-smi missing)"


def _smi(shell: Shell, args: str):
    return shell.run(f"command -v nvidia-smi >/dev/null 2>&1 || exit 127; nvidia-smi {args}")


def _pci_gpus(shell: Shell) -> list[str]:
    script = ("for d in /sys/bus/pci/devices/*; do [ \"$(cat $d/vendor 2>/dev/null)\" = 0x10de ] || continue; "
              "echo \"${d##*/} $(cat $d/class)\"; done")
    return [line.split()[0] for line in shell.run(script).out.splitlines()
            if len(line.split()) == 2 and line.split()[1][:6] in NVIDIA_PCI_CLASSES]


def visible(shell: Shell, expect) -> list[Finding]:
    pci = _pci_gpus(shell)
    smi = _smi(shell, "-L")
    listed = [line for line in smi.out.splitlines() if line.startswith("GPU ")]
    evidence = f"PCI bus: {len(pci)} NVIDIA GPU(s) {' '.join(pci)}".rstrip() + "\n"
    evidence += f"nvidia-smi -L: {len(listed)} GPU(s)" if smi.rc != 127 else "nvidia-smi: not installed"
    if smi.rc not in (0, 127):
        evidence += f" (exit {smi.rc}: {(smi.err or smi.out).strip()[:200]})"
    planned = expect.gpus
    if planned is not None and len(pci) < planned:
        return [Finding("gpu-visible", Status.fail, f"{len(pci)} of {planned} planned GPUs on the PCI bus", evidence,
                        "a GPU missing on the bus is hardware: reseat it, check its power cables and the BIOS"
                        " (above-4G decoding, PCIe slot enabled); Xid 79 in the log says it fell off the bus")]
    if pci and len(listed) < len(pci):
        return [Finding("gpu-visible", Status.fail, f"the driver sees {len(listed)} of {len(pci)} GPUs on the bus",
                        evidence, "load the driver (modprobe nvidia) and read the kernel log for NVRM errors;"
                        " see the driver-version and xid findings")]
    if not pci and not listed:
        return [Finding("gpu-visible", Status.skip, "no NVIDIA GPU on this machine", evidence)]
    return [Finding("gpu-visible", Status.ok, f"{len(listed)} GPU(s) on the bus and seen by the driver", evidence)]


def nouveau(shell: Shell, expect) -> list[Finding]:
    loaded = shell.run("grep -qw '^nouveau' /proc/modules && echo loaded").out.strip() == "loaded"
    listed = shell.run("grep -rhs '^ *blacklist  *nouveau' /etc/modprobe.d /usr/lib/modprobe.d /lib/modprobe.d").out
    evidence = (f"/proc/modules: nouveau {'loaded' if loaded else 'not loaded'}\n"
                f"modprobe.d: {'blacklist nouveau' if listed.strip() else 'no blacklist entry for nouveau'}")
    fix = ("write 'blacklist nouveau' and 'options nouveau modeset=0' to /etc/modprobe.d/blacklist-nouveau.conf,"
           " run update-initramfs -u and reboot (the nouveau role does this)")
    if loaded:
        return [Finding("nouveau", Status.fail, "the nouveau driver is loaded: the NVIDIA driver cannot bind the GPUs",
                        evidence, fix)]
    if not listed.strip() and (expect.gpus or _pci_gpus(shell)):
        return [Finding("nouveau", Status.warn, "nouveau is not blacklisted: it can claim the GPUs at the next boot",
                        evidence, fix)]
    return [Finding("nouveau", Status.ok, "nouveau is not loaded" + (" and is blacklisted" if listed.strip() else ""),
                    evidence)]


def driver_version(shell: Shell, expect) -> list[Finding]:
    kernel = shell.run("cat /proc/driver/nvidia/version 2>/dev/null")
    match = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", kernel.out)
    smi = _smi(shell, "--query-gpu=driver_version --format=csv,noheader")
    if smi.rc == 127 and not match:
        return [Finding("driver-version", Status.skip, NO_DRIVER)]
    text = (smi.out + smi.err).strip()
    evidence = (f"kernel module: {match.group(1) if match else 'not loaded'}\n"
                f"nvidia-smi: {text.splitlines()[0] if text else ''}")
    if "mismatch" in text.lower():
        return [Finding("driver-version", Status.fail, "driver/library version mismatch: the loaded kernel module is"
                        " not the installed user-space driver", evidence,
                        "reboot (or unload and reload the nvidia modules with no GPU process running) after a"
                        " driver upgrade")]
    user = text.splitlines()[0].strip() if smi.ok and text else None
    if match and user and match.group(1) != user:
        return [Finding("driver-version", Status.fail, f"kernel module {match.group(1)} != user space {user}", evidence,
                        "reboot to load the installed driver")]
    if expect.driver_version and user and user != expect.driver_version:
        return [Finding("driver-version", Status.warn, f"driver {user} is not the planned {expect.driver_version}",
                        evidence, "run the driver role (clusterforge up) or change the declaration")]
    if not match:
        return [Finding("driver-version", Status.fail, "the nvidia kernel module is not loaded", evidence,
                        "modprobe nvidia; if it fails, read dmesg (secure boot signing, kernel headers/DKMS build)")]
    return [Finding("driver-version", Status.ok, f"driver {user or match.group(1)} loaded and consistent", evidence)]


def _rows(shell: Shell, fields: str) -> tuple[list[list[str]], str]:
    res = _smi(shell, f"--query-gpu={fields} --format=csv,noheader,nounits")
    if res.rc == 127:
        return [], NO_DRIVER
    if not res.ok:
        return [], f"nvidia-smi exited {res.rc}: {(res.err or res.out).strip()[:200]}"
    return [[c.strip() for c in line.split(",")] for line in res.out.strip().splitlines() if line.strip()], ""


def persistence(shell: Shell, expect) -> list[Finding]:
    rows, why = _rows(shell, "index,persistence_mode")
    if not rows:
        return [Finding("persistence-mode", Status.skip, why or "no GPU")]
    off = [r[0] for r in rows if r[1].lower() != "enabled"]
    evidence = "\n".join(f"GPU {r[0]}: persistence {r[1]}" for r in rows)
    if off:
        return [Finding("persistence-mode", Status.warn, f"persistence mode off on GPU {', '.join(off)}: every job"
                        " pays the driver's initialisation and GPU state can reset between jobs", evidence,
                        "systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1)")]
    return [Finding("persistence-mode", Status.ok, "persistence mode on for every GPU", evidence)]


XID_LINE = re.compile(r"NVRM: Xid \(([^)]*)\): (\d+)")


def parse_xids(log: str) -> list[tuple[str, int, str]]:
    """(PCI address, code, line) for every Xid line of a kernel log."""
    return [(m.group(1), int(m.group(2)), line.strip()) for line in log.splitlines() if (m := XID_LINE.search(line))]


def xid(shell: Shell, expect) -> list[Finding]:
    log = shell.run("journalctl -b --no-pager -q -o short-iso SYSLOG_IDENTIFIER=kernel 2>/dev/null"
                    " | grep 'NVRM: Xid' || dmesg 2>/dev/null | grep 'NVRM: Xid'; true")
    readable = shell.run("journalctl -b -q -n 1 --no-pager >/dev/null 2>&1 || dmesg >/dev/null 2>&1")
    if not readable.ok:
        return [Finding("xid", Status.skip, "the kernel log cannot be read here (no journal, dmesg refused)")]
    found = parse_xids(log.out)
    if not found:
        return [Finding("xid", Status.ok, "no Xid error in this boot's kernel log")]
    codes = sorted({code for _, code, _ in found})
    serious = [c for c in codes if c not in APP_XIDS]
    lines = [f"Xid {c}: {XID.get(c, ('see the Xid catalog', ''))[0]}" for c in codes]
    fixes = [f"Xid {c}: {XID[c][1]}" for c in codes if c in XID]
    evidence = "\n".join(lines + [line for _, _, line in found[-5:]])
    status = Status.fail if serious else Status.warn
    gpus = sorted({pci for pci, _, _ in found})
    return [Finding("xid", status, f"{len(found)} Xid error(s) this boot (codes {', '.join(map(str, codes))})"
                    f" on {', '.join(gpus)}", evidence, "\n".join(fixes) or "look the code up in NVIDIA's Xid catalog")]


def nvlink(shell: Shell, expect) -> list[Finding]:
    res = _smi(shell, "nvlink -s")
    if res.rc == 127:
        return [Finding("nvlink", Status.skip, NO_DRIVER)]
    links = re.findall(r"Link (\d+): (.+)", res.out)
    active = [n for n, state in links if "inactive" not in state.lower() and "GB/s" in state]
    inactive = [n for n, state in links if "inactive" in state.lower()]
    evidence = (res.out.strip() or res.err.strip() or "no NVLink reported")[:800]
    if not active:
        return [Finding("nvlink", Status.skip, "no active NVLink on this machine (PCIe-only or a single GPU)",
                        evidence)]
    if inactive:
        return [Finding("nvlink", Status.fail, f"{len(inactive)} NVLink link(s) down beside {len(active)} up", evidence,
                        "check nv-fabricmanager (NVSwitch systems) and the kernel log for Xid 74; reset the GPUs;"
                        " a link that stays down is a baseboard/GPU RMA")]
    return [Finding("nvlink", Status.ok, f"{len(active)} NVLink link(s) up", evidence)]


def throttle(shell: Shell, expect) -> list[Finding]:
    fields = ["index", *THROTTLE, "temperature.gpu", "power.draw", "power.limit", "clocks.sm", "clocks.max.sm"]
    rows, why = _rows(shell, ",".join(fields))
    if not rows:
        return [Finding("clocks-power", Status.skip, why or "no GPU")]
    findings = []
    for row in rows:
        values = dict(zip(fields, row, strict=False))
        active = [(name, bad) for key, (name, bad) in THROTTLE.items() if values.get(key, "").lower() == "active"]
        evidence = (f"GPU {values['index']}: {values['temperature.gpu']} C, {values['power.draw']} of"
                    f" {values['power.limit']} W, SM clock {values['clocks.sm']} of {values['clocks.max.sm']} MHz")
        if active:
            worst = Status.fail if any(bad is Status.fail for _, bad in active) else Status.warn
            findings.append(Finding("clocks-power", worst, f"GPU {values['index']} is throttled:"
                                    f" {', '.join(n for n, _ in active)}", evidence,
                                    "hardware slowdown/thermal: check cooling, fans, inlet temperature and PSUs;"
                                    " power cap: nvidia-smi -q -d POWER, raise the limit or accept the cap"))
    return findings or [Finding("clocks-power", Status.ok, f"no clock throttling on {len(rows)} GPU(s)",
                                "\n".join(f"GPU {r[0]}: {r[len(THROTTLE) + 1]} C" for r in rows))]
