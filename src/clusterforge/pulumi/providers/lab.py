"""Lab: the emulated cluster as a Pulumi resource — `clusterforge.lab.manager.up` on create, `down` on delete.

The input is the LabTopology (JSON, built from the Plan by clusterforge.lab.from_plan) and its hash.
A different topology replaces the lab (down first: both would use the same namespaces and names).
Outputs are what Ansible and testinfra need to reach the hosts: the ssh_config and known_hosts paths.
`diff` also reads the lab as it runs now: a host that is stopped, lost its container process, is
absent or does not answer SSH is drift (named on the run's output), and the update boots it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from clusterforge.pulumi.providers import _lifeline

__all__ = ["Lab", "LabArgs", "LabProvider"]

REPLACE_KEYS = ("lab", "topology_hash")
BOOT_TIMEOUT_S = 300


@dataclass(frozen=True)
class LabArgs:
    lab: str
    topology_json: str
    topology_hash: str


def _up(props: dict[str, Any]) -> dict[str, Any]:
    from clusterforge.lab import manager
    from clusterforge.lab.topology import LabTopology

    topology = LabTopology.model_validate_json(props["topology"])
    result = manager.up(topology, boot_timeout=BOOT_TIMEOUT_S)
    return {**props, "ssh_config": str(result.ssh_config), "known_hosts": str(result.known_hosts),
            "hosts": sorted(h.name for h in topology.hosts)}


def live_problems(lab: str, topology_json: str) -> dict[str, str]:
    """host -> why it is not serving (stopped, orphaned, absent, SSH silent), read from the machine now."""
    from clusterforge.lab import manager
    from clusterforge.lab.topology import LabTopology

    why = {"stopped": "is stopped (its container is not running)",
           "orphaned": "lost its container process (nspawn died; its systemd lives on)",
           "absent": "is absent (no network namespace: the lab is down)"}
    problems = {}
    for row in manager.status(LabTopology.model_validate_json(topology_json)):
        if row.state != "running":
            problems[row.host] = why.get(row.state, row.state)
        elif not row.sshd:
            problems[row.host] = "runs but its SSH server does not answer"
    return problems


def running_switch_drift(topology_json: str) -> dict[str, str]:
    """router -> why the frr.conf its FRR reads (inside the container) is not the rendered one."""
    from clusterforge.lab.running import frr_drift
    from clusterforge.lab.topology import LabTopology

    return frr_drift(LabTopology.model_validate_json(topology_json))


class LabProvider(ResourceProvider):
    serialize_as_secret_always = False

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        replaces = [key for key in REPLACE_KEYS if olds.get(key) != news.get(key)]
        if replaces:
            return DiffResult(changes=True, replaces=replaces, delete_before_replace=True)
        # Same declaration: is the lab still what the state says? (a host killed, the lab taken down)
        problems = live_problems(news["lab"], news["topology"])
        for host, why in sorted(problems.items()):
            _lifeline.say(f"drift: lab {news['lab']}: host {host} {why}; `up` boots it again")
        switches = running_switch_drift(news["topology"])  # what each router's FRR reads, not the delivered copy
        for host, why in sorted(switches.items()):
            _lifeline.say(f"drift: switch {host}: {why}; `up` writes the rendered frr.conf and restarts FRR")
        return DiffResult(changes=bool(problems or switches), replaces=[], delete_before_replace=True)

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"lab-{props['lab']}", _up(props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        from clusterforge.lab.running import repair_frr
        from clusterforge.lab.topology import LabTopology

        outputs = _up(news)  # the lab drifted (a host down): `up` is idempotent and boots what is missing
        drifted = sorted(running_switch_drift(news["topology"]))
        if drifted:
            _lifeline.say(f"lab {news['lab']}: frr.conf written again and FRR restarted on {', '.join(drifted)}")
            repair_frr(LabTopology.model_validate_json(news["topology"]), drifted)
        return UpdateResult(outputs)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        from clusterforge.lab import manager

        manager.down(props["lab"])


class Lab(Resource, module="clusterforge", name="Lab"):
    """pulumi-python:dynamic/clusterforge:Lab — outputs `ssh_config`, `known_hosts`, `hosts`."""

    ssh_config: pulumi.Output[str]
    known_hosts: pulumi.Output[str]
    hosts: pulumi.Output[list[str]]

    def __init__(self, name: str, args: LabArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {"lab": args.lab, "topology": args.topology_json, "topology_hash": args.topology_hash,
                 "ssh_config": None, "known_hosts": None, "hosts": None}
        super().__init__(LabProvider(), name, props, opts)
