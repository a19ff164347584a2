"""The repair at each rung of the ladder, on one node that is out of service: the edge where remediate
changes a machine.

* drain: the node's declared configuration applied again (the site playbook on that node alone, as
  `clusterforge replace` runs it): a link set down, a stopped daemon, a missing mount come back;
* reset_gpu: ``nvidia-smi --gpu-reset`` on the node (every GPU; the node has no work left on it);
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
from clusterforge.ops.doctor import SshShell

__all__ = ["REBOOT_WAIT_S", "Repairs"]

REBOOT_WAIT_S = 900.0
BOOT_ID = "cat /proc/sys/kernel/random/boot_id"


@dataclass
class Repairs:
    reach: Reach
    say: Callable[[str], Any]

    def _shell(self, node: str) -> SshShell:
        config = self.reach.config
        return SshShell(node, str(config) if config else None)

    def __call__(self, node: str, action: Action) -> str | None:
        """Repair `node` at `action`'s rung; the problem, None when the step ran."""
        if action is Action.drain:
            return self._reprovision(node)
        if action is Action.reset_gpu:
            res = self._shell(node).run("nvidia-smi --gpu-reset")
            return None if res.ok else f"nvidia-smi --gpu-reset failed (exit {res.rc}): {(res.err or res.out)[:300]}"
        if action is Action.reboot:
            return self._reboot(node)
        return f"{action.value} is never run automatically: `clusterforge replace` after the operator's repair"

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
