"""SONiC: ports named by lane (Ethernet<first lane>), or by the HWSKU's port_config.ini where the catalog
has the platform's port map; no VRRP model in sonic-yang-models (at 086b03bd70)."""

from __future__ import annotations

from clusterforge.nos.traits import NosTraits
from clusterforge.vocab import Nos

__all__ = ["SONIC"]


def _port_name(index: int, lanes_per_port: int) -> str:
    return f"Ethernet{index * lanes_per_port}"


SONIC = NosTraits(Nos.SONIC, Nos.label(Nos.SONIC), _port_name, platform_data=True, vrrp=False)
