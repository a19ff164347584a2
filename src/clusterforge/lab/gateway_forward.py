"""The lab machine as the management and oob planes' router: IPv4 forwarding on its lab bridges only.

Lab declarations name the machine running the lab as those planes' external gateway (it holds each block's
.1). A host of one block reaches a host of another (a GPU server its control node: the API server, slurmctld)
through it, so it must forward between its own lab bridges. It forwards nothing else: forwarding is turned on
per bridge (net.ipv4.conf.<bridge>.forwarding; the machine's global setting is left as it is) and a rule in the
machine's FORWARD chain drops whatever arrives on a lab bridge for an address outside the lab's block
(198.18.0.0/15): no packet of the twin leaves for any other range. `down` removes the rules with the bridges.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path

__all__ = ["LAB_BLOCK", "CHAIN", "enable", "disable"]

LAB_BLOCK = "198.18.0.0/15"
CHAIN = "CLUSTERFORGE-LAB"


def _iptables(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["iptables", "-w", *args], capture_output=True, text=True)


def _rule(dev: str) -> list[str]:
    return ["-i", dev, "!", "-d", LAB_BLOCK, "-j", "DROP"]


def enable(bridges: Iterable[str]) -> bool:
    """Forward between the lab's bridges, and only into the lab's block; idempotent. True when anything changed."""
    changed = False
    if _iptables("-L", CHAIN, "-n").returncode != 0:
        _iptables("-N", CHAIN)
        changed = True
    if _iptables("-C", "FORWARD", "-j", CHAIN).returncode != 0:
        _iptables("-I", "FORWARD", "1", "-j", CHAIN)
        changed = True
    for dev in bridges:
        if _iptables("-C", CHAIN, *_rule(dev)).returncode != 0:
            result = _iptables("-A", CHAIN, *_rule(dev))
            if result.returncode != 0:
                raise OSError(f"iptables: cannot keep lab traffic in {LAB_BLOCK} on {dev}: {result.stderr.strip()}")
            changed = True
        knob = Path(f"/proc/sys/net/ipv4/conf/{dev}/forwarding")
        if knob.exists() and knob.read_text().strip() != "1":
            knob.write_text("1\n")
            changed = True
    return changed


def disable(bridges: Iterable[str]) -> None:
    """Remove the rules of these bridges (the bridges themselves, and their forwarding knobs, go with `down`)."""
    for dev in bridges:
        while _iptables("-D", CHAIN, *_rule(dev)).returncode == 0:
            pass
    listed = _iptables("-S", CHAIN)
    if listed.returncode == 0 and not any(line.startswith("-A ") for line in listed.stdout.splitlines()):
        while _iptables("-D", "FORWARD", "-j", CHAIN).returncode == 0:  # no lab left: the chain goes too
            pass
        _iptables("-X", CHAIN)
