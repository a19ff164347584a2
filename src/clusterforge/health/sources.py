"""Evidence from the checks that already exist, pure: the doctor's findings, the host checks' records
(clusterforge verify), the state of a node's daemons, and firing alerts.

The action each source's failures ask for:

* doctor (ops/doctor): GPUs missing from the bus or a driver that is not loaded -> reboot; NVLink down
  -> reset_gpu (the Xid catalog's RESET_GPU bucket for NVLink errors); nouveau loaded -> reboot (the
  blacklist takes effect at boot); anything else failing (a data link down or at the wrong MTU, an RDMA
  port not ACTIVE, a planned mount missing, a Slurm daemon stopped) -> drain: the node leaves the
  schedulers and its declared configuration is applied again. Warnings ask for no action.
* verify (verify/hosts): a failed host check -> drain (its configuration applied again); a host that did
  not answer -> unknown.
* services: a daemon the node's roles enabled (kubelet, slurmd, munge, the node exporter) that is not
  active -> drain.
* alerts (Alertmanager's /api/v2/alerts): a firing alert with ``severity: critical`` -> fail, drain;
  any other severity -> warn. An alert labelled ``simulated: "true"`` (the lab's SIMULATED dcgm-exporter) is
  marked simulated and says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clusterforge.health.evidence import Action, Evidence, Status
from clusterforge.ops.doctor.findings import Finding
from clusterforge.ops.doctor.findings import Status as DoctorStatus

__all__ = ["NODE_UNITS", "alert_evidence", "doctor_evidence", "service_evidence", "service_script",
           "unreachable_evidence", "verify_evidence"]

# doctor check -> the action its failure asks for (the rest: drain)
DOCTOR_FAIL_ACTIONS = {"gpu-visible": Action.reboot, "driver-version": Action.reboot, "nouveau": Action.reboot,
                       "nvlink": Action.reset_gpu}
# checks that read what a container is given none of (the lab's hosts): check -> (what the doctor's evidence
# says when it is absent, what the container lacks); there the check does not apply, and says so. A container
# runs on its machine's kernel: the NVIDIA kernel module is the machine's to load (the driver role installs
# only the user space in a container), so nvidia-smi there finds no module.
PASSTHROUGH_CHECKS = {
    "gpu-visible": ("PCI bus: 0 ", "no GPU passed through"),
    "ib-links": ("/sys/class/infiniband is empty", "no RDMA device passed through"),
    "driver-version": ("kernel module: not loaded", "the machine's kernel, without the NVIDIA module"),
}
_DOCTOR_STATUS = {DoctorStatus.ok: Status.ok, DoctorStatus.warn: Status.warn, DoctorStatus.fail: Status.fail,
                  DoctorStatus.skip: Status.skip}
# the daemons a GPU server's roles enable, checked when enabled
NODE_UNITS = ("kubelet", "slurmd", "munge", "prometheus-node-exporter")
# a SIMULATED check (the lab stood in for the part it needs) says nothing about the node: as a skip
_VERIFY_STATUS = {"passed": Status.ok, "failed": Status.fail, "skipped": Status.skip, "simulated": Status.skip}


def unreachable_evidence(node: str, source: str, why: str) -> Evidence:
    text = why if why.startswith(node) else f"{node} did not answer: {why}"
    return Evidence(node, f"{source}:reachable", Status.unknown, text)


def doctor_evidence(node: str, findings: Iterable[Finding], container: str | None) -> list[Evidence]:
    """The doctor's findings on `node`; `container`: the container technology the node runs in (the lab's
    nspawn hosts), None on a machine. GPUs or RDMA devices planned but absent in a container, and the NVIDIA
    kernel module it cannot load, are not checked (the lab passes no device through), and say so; on a
    machine their absence fails."""
    evidence = []
    for f in findings:
        if f.check == "reachable":
            evidence.append(unreachable_evidence(node, "doctor", f.summary))
            continue
        status = _DOCTOR_STATUS[f.status]
        summary = f.summary
        marker, lacking = PASSTHROUGH_CHECKS.get(f.check, ("", ""))
        if status is Status.fail and container and marker and marker in f.evidence:
            status = Status.skip
            summary = f"not checked: a {container} container ({lacking}): {summary}"
        if f.summary.startswith("the check could not run"):
            status = Status.unknown
        action = DOCTOR_FAIL_ACTIONS.get(f.check, Action.drain) if status is Status.fail else Action.none
        evidence.append(Evidence(node, f"doctor:{f.check}", status, summary, action, f.evidence[:800]))
    return evidence


def verify_evidence(records: Iterable[Mapping[str, Any]], nodes: Sequence[str]) -> dict[str, list[Evidence]]:
    """The host checks' records (clusterforge.verify.runner) by node: one evidence per check; a node with
    no record gets an unknown one (its checks did not run)."""
    found: dict[str, list[Evidence]] = {n: [] for n in nodes}
    unreachable: set[str] = set()
    for rec in records:
        node = rec.get("host")
        if node not in found:
            continue
        if rec.get("unreachable") is not None:
            if node not in unreachable:
                unreachable.add(node)
                found[node].append(unreachable_evidence(node, "verify", str(rec["unreachable"])))
            continue
        status = _VERIFY_STATUS.get(str(rec.get("outcome")), Status.unknown)
        test = str(rec.get("test", ""))
        found[node].append(Evidence(node, f"verify:{test}", status, str(rec.get("message", "")) or test,
                                    Action.drain if status is Status.fail else Action.none))
    for node, items in found.items():
        if not items:
            items.append(Evidence(node, "verify:records", Status.unknown, "the host checks reported nothing for"
                                  " this node"))
    return found


def service_script(units: Sequence[str]) -> str:
    """A shell line that prints `UNIT|ENABLED|ACTIVE` for each unit (empty states for a unit not installed)."""
    return ("for u in " + " ".join(units) + "; do echo \"$u|$(systemctl is-enabled $u 2>/dev/null)|"
            "$(systemctl is-active $u 2>/dev/null)\"; done")


def service_evidence(node: str, units: Sequence[str], output: str) -> list[Evidence]:
    """`service_script`'s output: a unit the node's roles enabled that is not active fails; a unit not
    enabled is not the node's (no Slurm here) and says nothing; a unit missing from the output is unknown."""
    states = {}
    for line in output.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3:
            states[parts[0]] = (parts[1].strip(), parts[2].strip())
    evidence = []
    for unit in units:
        if unit not in states:
            evidence.append(Evidence(node, f"services:{unit}", Status.unknown, f"no state read for {unit}"))
            continue
        enabled, active = states[unit]
        if enabled != "enabled":
            continue
        if active == "active":
            evidence.append(Evidence(node, f"services:{unit}", Status.ok, f"{unit} running"))
        else:
            evidence.append(Evidence(node, f"services:{unit}", Status.fail,
                                     f"{unit} is {active or 'not active'} (enabled by the node's roles)",
                                     Action.drain))
    return evidence


def _alert_node(labels: Mapping[str, Any], nodes: Iterable[str]) -> str | None:
    known = set(nodes)
    for key in ("host", "node", "nodename", "hostname", "instance"):
        value = str(labels.get(key, ""))
        host = value.rsplit(":", 1)[0] if value.count(":") == 1 else value
        if host in known:
            return host
    return None


def alert_evidence(alerts: Any, nodes: Sequence[str]) -> dict[str, list[Evidence]]:
    """Firing alerts (the JSON list of Alertmanager's GET /api/v2/alerts) by the node they name (a `host`
    label, the plan's identity on every scrape target, or a `node`, `nodename`, `hostname` or `instance`
    one). Raises ValueError naming what is wrong with the document."""
    if not isinstance(alerts, list):
        raise ValueError(f"expected a JSON list of alerts (Alertmanager's /api/v2/alerts), got {type(alerts).__name__}")
    found: dict[str, list[Evidence]] = {n: [] for n in nodes}
    for index, alert in enumerate(alerts):
        if not isinstance(alert, dict) or not isinstance(alert.get("labels"), dict):
            raise ValueError(f"alert [{index}]: expected an object with a `labels` object")
        state = (alert.get("status") or {}).get("state", "active") if isinstance(alert.get("status"), dict) \
            else "active"
        if state != "active":
            continue
        labels = alert["labels"]
        node = _alert_node(labels, nodes)
        if node is None:
            continue
        name = str(labels.get("alertname", "alert"))[:200]
        critical = str(labels.get("severity", "")).lower() == "critical"
        summary = str((alert.get("annotations") or {}).get("summary", "")) if isinstance(
            alert.get("annotations"), dict) else ""
        simulated = str(labels.get("simulated", "")).lower() == "true"  # a SIMULATED exporter's series (the lab)
        found[node].append(Evidence(node, f"alert:{name}", Status.fail if critical else Status.warn,
                                    f"{name} firing" + (f": {summary[:300]}" if summary else "")
                                    + (" (SIMULATED: the alert's series are simulated)" if simulated else ""),
                                    Action.drain if critical else Action.none, simulated=simulated))
    return found
