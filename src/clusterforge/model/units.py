"""Scalable units: the standard expansion block, identified by an explicit, never-reused id."""

from typing import Self

from pydantic import Field, model_validator

from clusterforge.model.base import Declared
from clusterforge.model.grammar import ModelKey
from clusterforge.model.management import Management
from clusterforge.model.numbers import Integer

__all__ = ["ScalableUnit", "Envelope"]


class ScalableUnit(Declared):
    id: Integer = Field(ge=1, le=999)
    server_model: ModelKey
    nodes: Integer = Field(ge=1, le=1024)
    racks: Integer = Field(ge=1, le=256)
    nodes_per_rack: Integer | None = Field(default=None, ge=1, le=64)
    rack_system: ModelKey | None = Field(default=None, description="catalog rack system (GB200/GB300 NVL72):"
                                         " every rack of the SU is one such rack, its compute trays the nodes")
    # A multi-node NVLink domain outside a catalog rack system: every N servers of a rack, bottom up, share one
    # NVLink fabric (their GPUs reach each other over it), so a fault on one takes the N out together
    # (`clusterforge remediate`) and the schedulers' topology places jobs within one. A rack system's rack is
    # its domain already.
    nvlink_domain_nodes: Integer | None = Field(default=None, ge=2, le=72)
    # Rolling changes (driver/CUDA): this many of the SU's servers change at once, each batch
    # verified before the next (`clusterforge roll`).
    rollout_batch: Integer = Field(default=1, ge=1, le=1024)
    # Bare metal: how this SU's servers are managed (replaces baremetal.models.<server_model> for them)
    management: Management | None = None

    @model_validator(mode="after")
    def _fits(self) -> Self:
        per_rack = self.nodes_per_rack
        if per_rack is not None and per_rack * self.racks < self.nodes:
            raise ValueError(
                f"{self.nodes} nodes do not fit {self.racks} racks x {per_rack} nodes_per_rack"
            )
        return self

    @property
    def rack_stride(self) -> int:
        """Nodes per rack: declared, or the even split."""
        return self.nodes_per_rack or -(-self.nodes // self.racks)


class Envelope(Declared):
    """The design envelope: explicit strides that address math depends on.

    Changing any of these renumbers the cluster, which is why they are declared, not derived.
    """

    max_sus: Integer = Field(default=8, ge=1, le=4096)
    max_nodes_per_su: Integer = Field(default=32, ge=1, le=1024)
    max_racks_per_su: Integer = Field(default=8, ge=1, le=256)
    max_rails: Integer = Field(default=8, ge=1, le=16)
    storage_servers_max: Integer = Field(default=16, ge=0, le=4096)
