"""The repair at each rung of the ladder, on one node that is out of service: the edge where remediate
changes a machine.

* drain: the node's declared configuration applied again (the site playbook on that node alone, as
  `clusterforge replace` runs it): a link set down, a stopped daemon, a missing mount come back;
* reset_gpu: ``nvidia-smi --gpu-reset`` on the node (every GPU; the node has no work left on it), then
  xid.RESET_MARK written into its kernel log (/dev/kmsg), so the Xid lines the reset answered stop counting.
  SIMULATED on the lab (its hosts have no GPU): nothing is reset; the mark goes into the host's simulated
  kernel log (xid.SIMULATED_KERNEL_LOG) and the output and the journal say SIMULATED;
* reboot: ``systemctl reboot`` over SSH, then the node must answer with a new boot id within
  REBOOT_WAIT_S;
* reimage and rma are never run here: the node stays out for the operator (`clusterforge replace`).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterforge.health.evidence import Action
from clusterforge.health.gather import Reach
from clusterforge.health.xid import RESET_MARK, SIMULATED_KERNEL_LOG, SIMULATED_MARK
from clusterforge.ops.doctor import SshShell

__all__ = ["REBOOT_WAIT_S", "Repaired", "Repairs"]

REBOOT_WAIT_S = 900.0
BOOT_ID = "cat /proc/sys/kernel/random/boot_id"


# after a reset that succeeded: the mark in the kernel log (priority 5, notice), as a line the driver would log
KMSG_MARK = f"printf '<5>{RESET_MARK} (nvidia-smi --gpu-reset)\\n' > /dev/kmsg"
SIMULATED_RESET_NOTE = "SIMULATED: the lab has no GPU, nvidia-smi --gpu-reset was not run"
SIMULATED_RESET = (f"mkdir -p {Path(SIMULATED_KERNEL_LOG).parent} && printf '%s\\n'"
                   f" \"$(date -Is) $(hostname) kernel: {RESET_MARK} ({SIMULATED_RESET_NOTE}) {SIMULATED_MARK}\""
                   f" >> {SIMULATED_KERNEL_LOG}")


@dataclass(frozen=True, slots=True)
class Repaired:
    """How a repair went: `problem` None when the step ran; `simulated` says what the lab stood in for."""

    problem: str | None = None
    simulated: str = ""


@dataclass
class Repairs:
    reach: Reach
    say: Callable[[str], Any]

    def _shell(self, node: str) -> SshShell:
        config = self.reach.config
        return SshShell(node, str(config) if config else None)

    def __call__(self, node: str, action: Action) -> Repaired:
        """Repair `node` at `action`'s rung."""
        if action is Action.drain:
            return Repaired(self._reprovision(node))
        if action is Action.reset_gpu:
            return self._reset_gpu(node)
        if action is Action.reboot:
            return Repaired(self._reboot(node))
        return Repaired(f"{action.value} is never run automatically: `clusterforge replace` after the operator's"
                        " repair")

    def _reset_gpu(self, node: str) -> Repaired:
        shell = self._shell(node)
        if self.reach.target.lab:
            res = shell.run(SIMULATED_RESET)
            self.say(f"remediate {node}: reset_gpu {SIMULATED_RESET_NOTE}; the reset is marked in"
                     f" {SIMULATED_KERNEL_LOG}")
            problem = None if res.ok else f"the simulated reset could not be marked: {(res.err or res.out)[:300]}"
            return Repaired(problem, SIMULATED_RESET_NOTE)
        res = shell.run("nvidia-smi --gpu-reset")
        if not res.ok:
            return Repaired(f"nvidia-smi --gpu-reset failed (exit {res.rc}): {(res.err or res.out)[:300]}")
        if not shell.run(KMSG_MARK).ok:  # the reset ran: without the mark its Xid lines count again (reboot next)
            self.say(f"remediate {node}: the GPU reset could not be marked in /dev/kmsg")
        return Repaired()

    def _reprovision(self, node: str) -> str | None:
        from clusterforge.provision import run_site
        from clusterforge.render import render_all, write_tree

        with tempfile.TemporaryDirectory(prefix="cf-remediate-") as tmp:
            rendered = Path(tmp) / "rendered"
            write_tree(rendered, render_all(self.reach.plan))
            result = run_site(rendered / "ansible" / "inventory.yml", Path(tmp) / "runner", limit=node,
                              extravars={"cf_lab": True} if self.reach.target.lab else None,
                              ssh_config=self.reach.config, progress=lambda line: self.say(f"provision {line}"))
        if result.ok:
            return None
        failed = {**result.failed_hosts, **result.unreachable_messages}
        return f"the site playbook failed ({result.status}): " + "; ".join(f"{h}: {w}" for h, w in failed.items())

    def _reboot(self, node: str) -> str | None:
        shell = self._shell(node)
        before = shell.run(BOOT_ID)
        if not before.ok:
            return f"the node does not answer before the reboot: {(before.err or before.out).strip()[:300]}"
        shell.run("systemctl reboot")  # the connection drops as the node goes down: its exit says nothing
        deadline = time.monotonic() + REBOOT_WAIT_S
        while time.monotonic() < deadline:
            time.sleep(5)
            now = shell.run(BOOT_ID)
            if now.ok and now.out.strip() and now.out.strip() != before.out.strip():
                return None
        return f"the node did not come back with a new boot id within {REBOOT_WAIT_S:.0f} s"
