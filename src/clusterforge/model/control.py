"""Control/head nodes: the hosts that run the cluster's Kubernetes control plane."""

from typing import Annotated, Literal, Self

from pydantic import model_validator

from clusterforge.model.base import Declared
from clusterforge.model.grammar import ModelKey
from clusterforge.model.numbers import WHOLE

__all__ = ["Control", "CONTROL_NODE_COUNTS"]

# etcd needs a majority: one node (no redundancy) or three (survives one loss); two would halve
# availability, more than three is beyond what a GPU cluster's control plane needs.
CONTROL_NODE_COUNTS = (0, 1, 3)


class Control(Declared):
    nodes: Annotated[Literal[0, 1, 3], WHOLE] = 0
    server_model: ModelKey | None = None

    @model_validator(mode="after")
    def _model(self) -> Self:
        if self.nodes and not self.server_model:
            raise ValueError("control.nodes > 0 needs control.server_model")
        return self
