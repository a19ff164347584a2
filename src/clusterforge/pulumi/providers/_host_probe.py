"""Read a group's hosts as they are now, over SSH: does each answer, and is it the machine we provisioned?

A host's identity is its /etc/machine-id (written once per installation): HostProvision records it
after a run, and a later `diff` that finds another one knows the host was re-imaged or swapped (RMA)
and needs provisioning again. Host keys are checked (the ssh_config's known_hosts); nothing is changed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

__all__ = ["drift", "inactive_units", "machine_ids", "unregistered_nodes"]

TIMEOUT_S = 20


def _one(host: str, ssh_config: str) -> tuple[str | None, str | None]:
    argv = ["ssh", "-F", ssh_config, "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", host, "cat /etc/machine-id"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"no answer within {TIMEOUT_S} s"
    if proc.returncode != 0:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        return None, (lines[-1] if lines else f"ssh exited {proc.returncode}")[:300]
    return proc.stdout.strip() or None, None


def machine_ids(hosts: Sequence[str], ssh_config: str) -> dict[str, tuple[str | None, str | None]]:
    """host -> (machine-id, None) or (None, why it did not answer)."""
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(hosts)))) as pool:
        return dict(zip(hosts, pool.map(lambda h: _one(h, ssh_config), hosts), strict=True))


def drift(recorded: dict[str, str], ssh_config: str) -> dict[str, str]:
    """host -> why it no longer matches what was provisioned (unreachable, another machine-id)."""
    problems = {}
    for host, (now, error) in machine_ids(sorted(recorded), ssh_config).items():
        if error is not None:
            problems[host] = f"unreachable: {error}"
        elif now != recorded[host]:
            problems[host] = (f"was re-imaged or replaced (machine-id {str(now)[:12]},"
                              f" provisioned {recorded[host][:12]})")
    return problems


def _inactive(host: str, ssh_config: str, units: Sequence[str]) -> list[str] | str:
    argv = ["ssh", "-F", ssh_config, "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", host,
            "systemctl is-active " + " ".join(units)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"no answer within {TIMEOUT_S} s"
    states = proc.stdout.split()
    if proc.returncode == 255 or len(states) != len(units):
        return (proc.stderr.strip().splitlines() or [f"ssh exited {proc.returncode}"])[-1][:300]
    return [unit for unit, state in zip(units, states, strict=True) if state != "active"]


def inactive_units(hosts: Sequence[str], ssh_config: str, units: Sequence[str]) -> dict[str, str]:
    """host -> what is wrong with the systemd `units` that must run there (inactive ones, or unreachable)."""
    if not units:
        return {}
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(hosts)))) as pool:
        found = dict(zip(hosts, pool.map(lambda h: _inactive(h, ssh_config, units), hosts), strict=True))
    return {host: (f"unreachable: {why}" if isinstance(why, str) else f"{', '.join(why)} not running")
            for host, why in found.items() if why}


# the admin kubeconfig and kubectl roles/k8s_control_plane installs on every control node
ADMIN_KUBECONFIG = "/etc/kubernetes/admin.conf"
KUBECTL = "/usr/local/bin/kubectl"


def unregistered_nodes(host: str, ssh_config: str, nodes: Sequence[str]) -> str | None:
    """Why the API server (asked on control node ``host``) does not list every one of ``nodes``, or None.

    Node names never reach the shell: the command is fixed, the comparison is made here."""
    argv = ["ssh", "-F", ssh_config, "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", host,
            f"{KUBECTL} --kubeconfig {ADMIN_KUBECONFIG} --request-timeout=10s get nodes -o name"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"the API server's node list: no answer within {TIMEOUT_S} s"
    if proc.returncode != 0:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        return f"the API server's node list could not be read ({(lines[-1] if lines else proc.returncode)})"[:300]
    listed = {line.strip().removeprefix("node/") for line in proc.stdout.splitlines() if line.strip()}
    missing = [node for node in nodes if node not in listed]
    return f"node(s) {', '.join(missing)} not registered with the API server" if missing else None
