"""The health of the GPU servers as read from the live machines: the edge where health does I/O.

Per node, over SSH (the doctor's shell: the lab's ssh_config on the lab, the operator's on real hosts,
host keys checked): the doctor's checks with the node's planned state from its rendered host_vars
(GPUs on the bus and seen by the driver, driver, NVLink, data links and their MTU, RDMA ports, PFC,
NCCL settings, mounts), this boot's kernel log (Xid and EDAC lines), the daemons its roles enable. For
all nodes at once, the host checks of `clusterforge verify` for the network and RoCE (testinfra through
the same SSH config). Firing alerts come from the declaration's Alertmanager (plan.monitoring; `Reach.alertmanager`,
clusterforge.health.alertmanager), or from a file when one is given (offline). Every source that cannot run
gives `unknown` evidence, never none: an Alertmanager that cannot be read too.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from clusterforge import paths
from clusterforge.health.alertmanager import AlertsUnavailable, fetch_alerts
from clusterforge.health.evidence import Evidence, Status
from clusterforge.health.ladder import NodeHealth, judge
from clusterforge.health.sources import (
    NODE_UNITS,
    alert_evidence,
    doctor_evidence,
    service_evidence,
    service_script,
    verify_evidence,
)
from clusterforge.health.xid import RESET_MARK, SIMULATED_KERNEL_LOG, SIMULATED_MARK, kernel_log_evidence
from clusterforge.ops.doctor import Expect, Shell, SshShell, diagnose
from clusterforge.ops.doctor.run import CHECKS
from clusterforge.plan import Plan
from clusterforge.targets import Reach as HostReach
from clusterforge.vocab import DeviceKind

__all__ = ["DOCTOR_CHECKS", "VERIFY_CONCERNS", "Reach", "alert_findings", "gather", "gpu_servers", "node_evidence"]

# the doctor's checks health runs: its xid and slurm checks are read here in more detail (kernel_log_evidence,
# service_evidence)
DOCTOR_CHECKS = tuple(name for name, _ in CHECKS if name not in ("xid", "slurm"))
VERIFY_CONCERNS = ("network", "roce")
_KERNEL_LINES = f"grep -E 'NVRM: Xid|EDAC MC[0-9]+: [0-9]+ (CE|UE)|{RESET_MARK}'"
# the journal's kernel lines of this boot; the ring buffer when the journal has none (a container's journal)
KERNEL_LOG = (f"out=$(journalctl -k -b --no-pager -q -o short-iso 2>/dev/null | {_KERNEL_LINES});"
              f" [ -n \"$out\" ] || out=$(dmesg 2>/dev/null | {_KERNEL_LINES}); printf '%s\\n' \"$out\"")
# SIMULATED, the lab only: the host's drill log after its kernel lines, every line marked simulated
SIMULATED_KERNEL_LINES = (f"[ ! -r {SIMULATED_KERNEL_LOG} ] || {_KERNEL_LINES} {SIMULATED_KERNEL_LOG}"
                          f" | sed 's/$/ [{SIMULATED_MARK}]/'")
KERNEL_LOG_READABLE = "journalctl -k -b -q -n 1 --no-pager >/dev/null 2>&1 || dmesg >/dev/null 2>&1"
PARALLEL = 16


@dataclass(frozen=True)
class Reach:
    """How the nodes are reached: `target` lab (the lab's ssh_config by host name) or ssh (`ssh_config`, or
    the operator's own); `alertmanager`: the base URL of the Alertmanager whose firing alerts are read (None:
    none is read)."""

    plan: Plan
    target: HostReach
    ssh_config: Path | None = None
    use_verify: bool = True
    alertmanager: str | None = None

    @property
    def config(self) -> Path | None:
        if self.ssh_config is None and self.target.lab:
            return paths.lab_ssh_config(self.plan.cluster)
        return self.ssh_config


def gpu_servers(plan: Plan) -> tuple[str, ...]:
    return tuple(d.name for d in plan.devices if d.kind == DeviceKind.SERVER)


def node_evidence(shell: Shell, expect: Expect, lab: bool = False) -> list[Evidence]:
    """What one node's shell tells: the doctor's checks, the kernel log, the daemons. `lab`: the node is a
    lab host, whose SIMULATED drill log (xid.SIMULATED_KERNEL_LOG) is read after its kernel log."""
    node = shell.name
    findings = diagnose(shell, expect, only=DOCTOR_CHECKS)
    if any(f.check == "reachable" for f in findings):
        return doctor_evidence(node, findings, None)
    virt = shell.run("systemd-detect-virt --container 2>/dev/null")
    container = virt.out.strip() if virt.ok and virt.out.strip() not in ("", "none") else None
    evidence = doctor_evidence(node, findings, container)
    if shell.run(KERNEL_LOG_READABLE).ok:
        command = KERNEL_LOG + (f"; {SIMULATED_KERNEL_LINES}" if lab else "")
        evidence += kernel_log_evidence(node, shell.run(command).out)
    else:
        evidence.append(Evidence(node, "kernel:xid", Status.unknown, "this boot's kernel log cannot be read (no"
                                 " journal, dmesg refused)"))
    services = shell.run(service_script(NODE_UNITS))
    evidence += service_evidence(node, NODE_UNITS, services.out)
    return evidence


def _verify(reach: Reach, nodes: Sequence[str], files: Mapping[str, str]) -> dict[str, list[Evidence]]:
    from clusterforge.render import write_tree
    from clusterforge.verify.runner import VerifyError, run_checks

    with tempfile.TemporaryDirectory(prefix="cf-health-") as tmp:
        rendered = Path(tmp) / "rendered"
        write_tree(rendered, files)
        try:
            result = run_checks(rendered, reach.target.name, list(nodes), reach.config, None,
                                concerns=VERIFY_CONCERNS)
        except VerifyError as exc:
            why = str(exc).splitlines()[0][:300]
            return {n: [Evidence(n, "verify:run", Status.unknown, f"the host checks could not run: {why}")]
                    for n in nodes}
    return verify_evidence(result.records, nodes)


def alert_findings(reach: Reach, names: Sequence[str], alerts: Any = None,
                   say: Callable[[str], Any] = lambda _: None) -> dict[str, list[Evidence]]:
    """The firing alerts by node: from `alerts` (a list already read from a file: alert_evidence raises
    ValueError on a malformed one), else from `reach.alertmanager`, else none. An Alertmanager that cannot be
    read, or answers with something that is not the alert list, gives every node `unknown` evidence saying so;
    one that was read gives every node an `ok` evidence saying how many alerts named it."""
    if alerts is not None:
        return alert_evidence(alerts, names)
    if reach.alertmanager is None:
        return {}
    say(f"health: firing alerts from {reach.alertmanager}")
    try:
        found = alert_evidence(fetch_alerts(reach.alertmanager), names)
    except (AlertsUnavailable, ValueError) as exc:
        why = f"the firing alerts could not be read from Alertmanager: {str(exc)[:400]}"
        say(f"health: {why}")
        return {n: [Evidence(n, "alert:alertmanager", Status.unknown, why)] for n in names}
    return {n: [Evidence(n, "alert:alertmanager", Status.ok, f"{len(found[n])} firing alert(s) name this node"
                         f" ({reach.alertmanager})"), *found[n]] for n in names}


def gather(reach: Reach, nodes: Sequence[str] | None = None, alerts: Any = None,
           say: Callable[[str], Any] = lambda _: None) -> tuple[NodeHealth, ...]:
    """The verdict of each GPU server (or of `nodes`), in plan order. `alerts`: Alertmanager's alert list,
    already read from a file (alert_evidence raises ValueError on a malformed one); without it, the alerts of
    `reach.alertmanager` (alert_findings)."""
    from clusterforge.render import render_all

    names = tuple(nodes) if nodes else gpu_servers(reach.plan)
    config = reach.config
    if config is not None and not config.is_file():
        hint = " (is the lab up? `clusterforge lab up`)" if reach.target.lab else ""
        evidence = {n: [Evidence(n, "ssh:config", Status.unknown, f"ssh config {config} does not exist{hint}")]
                    for n in names}
        # a lab that is not up runs no Alertmanager either: only a file's alerts are read
        by_alert = alert_findings(reach, names, alerts, say) if alerts is not None or not reach.target.lab else {}
        return tuple(judge(n, evidence[n] + by_alert.get(n, [])) for n in names)
    by_alert = alert_findings(reach, names, alerts, say)
    files = render_all(reach.plan)

    def one(node: str) -> list[Evidence]:
        host_vars = yaml.safe_load(files.get(f"ansible/host_vars/{node}.yml", "") or "{}") or {}
        return node_evidence(SshShell(node, str(config) if config else None), Expect.from_host_vars(host_vars),
                             lab=reach.target.lab)

    say(f"health: {len(names)} node(s) over SSH" + (f" ({config})" if config else ""))
    with ThreadPoolExecutor(max_workers=min(PARALLEL, max(1, len(names)))) as pool:
        per_node = dict(zip(names, pool.map(one, names), strict=True))
    if reach.use_verify:
        say(f"health: host checks ({', '.join(VERIFY_CONCERNS)})")
        for node, items in _verify(reach, names, files).items():
            per_node[node] += items
    return tuple(judge(n, per_node[n] + by_alert.get(n, [])) for n in names)


def read_alerts(path: Path) -> Any:
    """The alert list in `path` (JSON). Raises ValueError with the reason."""
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
