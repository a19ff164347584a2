"""Verification: run the testinfra host checks over one group after it was provisioned.

It runs on create and again whenever the group was re-provisioned (`provision_runs`, an output of
HostProvision), the checks changed (`suite_hash`) or the group's hosts changed. Failing checks fail
the update, naming each failed check, unless `allow_failures` is set (a known-bad host being
worked on); the counts are outputs either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

__all__ = ["Verification", "VerificationArgs", "VerificationProvider", "VerificationFailed"]

UPDATE_KEYS = ("hosts", "inventory_path", "ssh_config", "suite_hash", "provision_runs", "allow_failures")
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
    provision_runs: pulumi.Input[int] | None = None
    ssh_config: pulumi.Input[str] | None = None
    allow_failures: bool = False


def _get(result: Any, name: str, default: Any) -> Any:
    if isinstance(result, Mapping):
        return result.get(name, default)
    return getattr(result, name, default)


def _failure_lines(failures: Any) -> list[str]:
    if isinstance(failures, Mapping):
        return [f"{name}: {reason}" for name, reason in failures.items()]
    return [str(item) for item in failures or ()]


def _run(props: Mapping[str, Any]) -> dict[str, Any]:
    from clusterforge.verify.hosts import run_checks  # the verify module; imported when used

    result = run_checks(props["inventory_path"], limit=props["group"], ssh_config=props.get("ssh_config"))
    failures = _failure_lines(_get(result, "failures", ()))
    return {"passed": int(_get(result, "passed", 0)), "failed": int(_get(result, "failed", len(failures))),
            "failures": failures[:MAX_REPORTED_FAILURES]}


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
        counts = _run(props)
        if counts["failed"] and not props.get("allow_failures"):
            lines = "\n".join(f"  {line}" for line in counts["failures"])
            raise VerificationFailed(f"{counts['failed']} check(s) failed on {props['group']}"
                                     f" ({counts['passed']} passed):\n{lines}")
        return {**props, **counts}


class Verification(Resource, module="clusterforge", name="Verification"):
    """pulumi-python:dynamic/clusterforge:Verification — outputs `passed`, `failed`, `failures`."""

    passed: pulumi.Output[int]
    failed: pulumi.Output[int]

    def __init__(self, name: str, args: VerificationArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {
            "group": args.group, "hosts": list(args.hosts), "inventory_path": args.inventory_path,
            "suite_hash": args.suite_hash, "provision_runs": args.provision_runs, "ssh_config": args.ssh_config,
            "allow_failures": args.allow_failures, "passed": None, "failed": None, "failures": None,
        }
        super().__init__(VerificationProvider(), name, props, opts)
