"""Verification: run the testinfra host checks (clusterforge.verify.runner) over one group after it was provisioned.

It runs on create and again whenever the group was re-provisioned (`provision_runs`, an output of
HostProvision), the checks changed (`suite_hash`), the group's hosts changed, or `run` changed:
`clusterforge up` sets a new one on every run (config `clusterforge:verifyRun`), so every `up`
checks the hosts as they are now, while a preview (which leaves it alone) shows no change. Failing checks fail
the update, naming each failed check, unless `allow_failures` is set (a known-bad host being
worked on); the counts are outputs either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from clusterforge.pulumi.providers import _lifeline

__all__ = ["Verification", "VerificationArgs", "VerificationProvider", "VerificationFailed"]

UPDATE_KEYS = ("hosts", "inventory_path", "target", "ssh_config", "report_path", "suite_hash", "provision_runs",
               "allow_failures", "run")
REPLACE_KEYS = ("group",)
MAX_REPORTED_FAILURES = 50


class VerificationFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class VerificationArgs:
    group: str
    hosts: Sequence[str]
    inventory_path: str
    suite_hash: str
    target: str = "ssh"  # how hosts are reached: lab (the lab's ssh_config) | ssh
    report_path: str | None = None  # JSON report of every check
    provision_runs: pulumi.Input[int] | None = None
    ssh_config: pulumi.Input[str] | None = None
    allow_failures: bool = False
    run: str | None = None  # `clusterforge up` sets a new value on every run: the checks run every `up`


def _run(props: Mapping[str, Any]) -> dict[str, Any]:
    from clusterforge.verify.runner import run_checks  # the verify module; imported when used

    ssh_config = props.get("ssh_config")
    report = props.get("report_path")
    result = run_checks(Path(props["inventory_path"]), props.get("target") or "ssh", list(props["hosts"]),
                        Path(ssh_config) if ssh_config else None, Path(report) if report else None)
    failures = [f"{host} unreachable: {why}" for host, why in sorted(result.unreachable.items())]
    failures += [f"{host}: {failure.get('test')}: {failure.get('message')}"
                 for host, per_host in sorted(result.per_host.items()) for failure in per_host.failures]
    failures += [f"error: {error}" for error in result.errors]  # e.g. nothing was collected
    return {"passed": int(result.passed), "failed": int(result.failed) + len(result.errors),
            "skipped": int(result.skipped), "simulated": int(result.simulated),
            "failures": failures[:MAX_REPORTED_FAILURES]}


def failure_line(group: str, counts: Mapping[str, Any]) -> str:
    """One line: the group, the counts, and per failing host the checks it failed, each with the start of its
    message (the JSON report and `clusterforge verify` have them whole)."""
    per_host: dict[str, list[str]] = {}
    for failure in counts["failures"]:
        host, _, rest = str(failure).partition(": ")
        if host.endswith(" unreachable"):
            host, rest = host[: -len(" unreachable")], "unreachable"
        test, _, message = rest.partition(": ")
        message = " ".join(message.split())
        per_host.setdefault(host, []).append(f"{test} ({message[:100]})" if message else test)
    hosts = "; ".join(f"{host} failed {', '.join(tests)}" for host, tests in sorted(per_host.items()))
    return (f"{counts['failed']} check(s) failed on {group} ({counts['passed']} passed): {hosts};"
            " `clusterforge verify` shows each message")


class VerificationProvider(ResourceProvider):
    serialize_as_secret_always = False

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in (*REPLACE_KEYS, *UPDATE_KEYS) if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=[k for k in REPLACE_KEYS if k in changed])

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"verify-{props['group']}", self._verify(props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(self._verify(news))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None

    @staticmethod
    def _verify(props: dict[str, Any]) -> dict[str, Any]:
        _lifeline.watch()
        counts = _run(props)
        if counts["failed"] and not props.get("allow_failures"):
            raise VerificationFailed(failure_line(props["group"], counts))
        return {**props, **counts}


class Verification(Resource, module="clusterforge", name="Verification"):
    """pulumi-python:dynamic/clusterforge:Verification — outputs `passed`, `failed`, `failures`."""

    passed: pulumi.Output[int]
    failed: pulumi.Output[int]

    def __init__(self, name: str, args: VerificationArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {
            "group": args.group, "hosts": list(args.hosts), "inventory_path": args.inventory_path,
            "target": args.target, "report_path": args.report_path, "suite_hash": args.suite_hash,
            "provision_runs": args.provision_runs, "ssh_config": args.ssh_config,
            "allow_failures": args.allow_failures, "run": args.run,
            "passed": None, "failed": None, "skipped": None, "simulated": None, "failures": None,
        }
        super().__init__(VerificationProvider(), name, props, opts)
