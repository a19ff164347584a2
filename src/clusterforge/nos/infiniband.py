"""InfiniBand switches: <cage>/<port>, two NDR ports per OSFP cage."""

from __future__ import annotations

from clusterforge.nos.traits import NosTraits
from clusterforge.vocab import Nos

__all__ = ["INFINIBAND"]


def _port_name(index: int, lanes_per_port: int) -> str:
    return f"{index // 2 + 1}/{index % 2 + 1}"


INFINIBAND = NosTraits(Nos.INFINIBAND, Nos.label(Nos.INFINIBAND), _port_name)
