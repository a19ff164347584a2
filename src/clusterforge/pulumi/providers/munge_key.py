"""MungeKey: the cluster's MUNGE key (Slurm's authentication between slurmctld, slurmdbd, slurmd and the
client commands), as a Pulumi secret.

Create generates it (1024 random bytes as 2048 hex characters: MUNGE hashes the file's bytes, and text
passes through Ansible's extra vars unchanged); it lives only in the stack's state, encrypted as a
secret output (`key`), and reaches the hosts through HostProvision's secret extra vars (written by
`no_log` tasks, 0400 munge:munge). Only a new cluster name replaces it; a second `up` keeps it.
Delete forgets it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider

__all__ = ["MungeKey", "MungeKeyArgs", "KEY_BYTES", "make_key"]

REPLACE_KEYS = ("cluster",)
KEY_BYTES = 1024  # mungekey(8)'s default size


@dataclass(frozen=True)
class MungeKeyArgs:
    cluster: str


def make_key() -> str:
    """A new MUNGE key's text: KEY_BYTES random bytes, hex."""
    return secrets.token_hex(KEY_BYTES)


class MungeKeyProvider(ResourceProvider):
    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in REPLACE_KEYS if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"munge-{props['cluster']}", {**props, "key": make_key()})

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None


class MungeKey(Resource, module="clusterforge", name="MungeKey"):
    """pulumi-python:dynamic/clusterforge:MungeKey — output `key` (secret): the key file's text."""

    key: pulumi.Output[str]

    def __init__(self, name: str, args: MungeKeyArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=["key"]))
        super().__init__(MungeKeyProvider(), name, {"cluster": args.cluster, "key": None}, opts)
