"""Storage: parallel file system kind, tiers, storage servers."""

from typing import Literal, Self

from pydantic import Field, model_validator

from clusterforge.model.base import Declared
from clusterforge.model.grammar import Export, Label, ModelKey, MountOptions, MountPath
from clusterforge.model.numbers import Integer, Number

__all__ = ["FsKind", "Tier", "StorageTier", "Storage", "FS_KINDS"]

FsKind = Literal["lustre", "beegfs", "gpfs", "weka", "nfs", "glusterfs"]
FS_KINDS: tuple[str, ...] = ("lustre", "beegfs", "gpfs", "weka", "nfs", "glusterfs")
Tier = Literal["hot", "warm", "cold"]


class StorageTier(Declared):
    name: Tier
    capacity_tb: Number = Field(gt=0, le=10_000_000)
    media: Label = "nvme"
    mount: MountPath
    export: Export
    options: MountOptions = "rw"
    training_data: bool = False
    # GlusterFS layout: copies of every file (1 = distribute only) and bricks on each storage server
    # (whether they fit the servers is checked in model.checks, located per tier).
    replicas: Integer = Field(default=1, ge=1, le=3)
    bricks_per_server: Integer = Field(default=1, ge=1, le=16)
    # What one client should reach on this tier (sequential write, MB/s); the fio smoke checks it.
    throughput_mbps: Number | None = Field(default=None, gt=0, le=1_000_000)


class Storage(Declared):
    kind: FsKind = "lustre"
    servers: Integer = Field(default=0, ge=0, le=4096)
    server_model: ModelKey | None = None
    tiers: list[StorageTier] = Field(default=[], max_length=3)
    local_nvme_cache: bool = False

    @model_validator(mode="after")
    def _models(self) -> Self:
        if self.servers and not self.server_model:
            raise ValueError("storage.servers > 0 needs storage.server_model")
        return self  # duplicate tier names, mounts and exports: model.checks (located per tier)
