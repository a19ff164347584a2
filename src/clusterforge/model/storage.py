"""Storage: parallel file system kind, tiers, storage servers."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from clusterforge.model.base import Declared

__all__ = ["FsKind", "Tier", "StorageTier", "Storage"]

FsKind = Literal["lustre", "beegfs", "gpfs", "weka", "nfs"]
Tier = Literal["hot", "warm", "cold"]


class StorageTier(Declared):
    name: Tier
    capacity_tb: float = Field(gt=0)
    media: str = "nvme"
    mount: str
    export: str
    options: str = "rw"
    training_data: bool = False


class Storage(Declared):
    kind: FsKind = "lustre"
    servers: int = Field(default=0, ge=0)
    server_model: str | None = None
    tiers: list[StorageTier] = []
    local_nvme_cache: bool = False

    @model_validator(mode="after")
    def _models(self) -> Storage:
        if self.servers and not self.server_model:
            raise ValueError("storage.servers > 0 needs storage.server_model")
        names = [t.name for t in self.tiers]
        if len(names) != len(set(names)):
            raise ValueError(f"tier names must be unique, got {names}")
        return self
