"""Fabric checks: planned interfaces up with their MTU, InfiniBand/RoCE port state and error counters, PFC pauses.

Counter names: the InfiniBand sysfs port counters (/sys/class/infiniband/<dev>/ports/<n>/counters)
and mlx5's ethtool statistics (rx_prio<N>_pause / tx_prio<N>_pause).
"""

from __future__ import annotations

import json
import re

from clusterforge.ops.doctor.findings import Finding, Status
from clusterforge.ops.doctor.shell import Shell

IB_ERRORS = ("symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors", "local_link_integrity_errors",
             "excessive_buffer_overrun_errors")
PAUSE = re.compile(r"^\s*([rt]x_prio(\d)_pause):\s*(\d+)", re.M)


def data_links(shell: Shell, expect) -> list[Finding]:
    if not expect.interfaces:
        return [Finding("data-links", Status.skip, "no planned interfaces (run with an inventory and --host)")]
    res = shell.run("ip -j link show")
    try:
        links = {link["ifname"]: link for link in json.loads(res.out or "[]")}
    except ValueError:
        return [Finding("data-links", Status.warn, "`ip -j link show` gave no JSON", (res.err or res.out)[:300])]
    problems, lines = [], []
    for name, mtu in sorted(expect.interfaces.items()):
        link = links.get(name)
        if link is None:
            problems.append(f"{name} is missing")
            lines.append(f"{name}: absent")
            continue
        state = "UP" if "UP" in link.get("flags", []) and link.get("operstate") in ("UP", "UNKNOWN") else "DOWN"
        lines.append(f"{name}: {state} (operstate {link.get('operstate')}), mtu {link.get('mtu')} (planned {mtu})")
        if state != "UP":
            problems.append(f"{name} is down")
        if int(link.get("mtu") or 0) != mtu:
            problems.append(f"{name} MTU {link.get('mtu')} (planned {mtu})")
    if problems:
        return [Finding("data-links", Status.fail, "; ".join(problems), "\n".join(lines),
                        "ip link set DEV up / mtu N now; make it stick with the network role (clusterforge up);"
                        " a link that will not come up: cable, transceiver or the switch port")]
    return [Finding("data-links", Status.ok, f"{len(expect.interfaces)} planned interface(s) up with their MTU",
                    "\n".join(lines))]


def ib_links(shell: Shell, expect) -> list[Finding]:
    script = ("for p in /sys/class/infiniband/*/ports/*; do [ -d \"$p\" ] || continue; "
              "echo \"port ${p#/sys/class/infiniband/} $(cat $p/state) | $(cat $p/phys_state) | $(cat $p/rate)"
              " | $(cat $p/link_layer 2>/dev/null)\"; "
              f"for c in {' '.join(IB_ERRORS)}; do echo \"counter ${{p#/sys/class/infiniband/}} $c"
              " $(cat $p/counters/$c 2>/dev/null)\"; done; done")
    out = shell.run(script).out
    ports = re.findall(r"^port (\S+) (.+)$", out, re.M)
    if not ports:
        status = Status.fail if expect.infiniband or expect.roce_interfaces else Status.skip
        return [Finding("ib-links", status, "no RDMA (InfiniBand/RoCE) device", "/sys/class/infiniband is empty",
                        "install/load the HCA driver (mlx5_core, mlx5_ib) and the rdma-core packages"
                        if status is Status.fail else "")]
    down = [p for p, s in ports if "ACTIVE" not in s.split("|")[0]]
    errors = [(p, c, int(v)) for p, c, v in re.findall(r"^counter (\S+) (\S+) (\d+)$", out, re.M) if int(v)]
    evidence = "\n".join(f"{p}: {s}" for p, s in ports) + "".join(f"\n{p} {c} = {v}" for p, c, v in errors)
    findings = []
    if down:
        findings.append(Finding("ib-links", Status.fail, f"RDMA port(s) not ACTIVE: {', '.join(down)}", evidence,
                                "InfiniBand: is a subnet manager running (sminfo)? RoCE: is the Ethernet link up?"
                                " then cable/transceiver/switch port"))
    if errors:
        findings.append(Finding("ib-links", Status.warn, f"{len(errors)} error counter(s) non-zero", evidence,
                                "symbol errors/link downed that grow: reseat or replace the cable or transceiver"))
    return findings or [Finding("ib-links", Status.ok, f"{len(ports)} RDMA port(s) ACTIVE, no errors", evidence)]


def pfc(shell: Shell, expect) -> list[Finding]:
    names = list(expect.roce_interfaces)
    if not names:
        return [Finding("pfc", Status.skip, "no RoCE interfaces planned")]
    findings, evidence = [], []
    for name in names:
        res = shell.run(f"ethtool -S {name} 2>&1")
        counters = {(n, int(p)): int(v) for n, p, v in PAUSE.findall(res.out)}
        if not counters:
            first = res.out.strip().splitlines()[0][:120] if res.out.strip() else "ethtool -S gave nothing"
            evidence.append(f"{name}: no per-priority pause counters ({first})")
            continue
        paused = {k: v for k, v in counters.items() if v}
        evidence.append(f"{name}: " + (", ".join(f"{n}={v}" for (n, _), v in sorted(paused.items())) or "no pauses"))
        rx = sum(v for (n, _), v in paused.items() if n.startswith("rx"))
        if rx:
            findings.append(Finding("pfc", Status.warn, f"{name} received {rx} PFC pause frame(s): the fabric is"
                                    " congested towards this host", "\n".join(evidence),
                                    "expected in bursts; if it grows steadily check ECN/DCQCN marking and the"
                                    " switch's buffer and PFC watchdog settings"))
    if not findings and all("no per-priority" in line for line in evidence):
        return [Finding("pfc", Status.skip, "no PFC counters on these interfaces (not mlx5)", "\n".join(evidence))]
    return findings or [Finding("pfc", Status.ok, "no PFC pauses received", "\n".join(evidence))]
