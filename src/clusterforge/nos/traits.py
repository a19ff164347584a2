"""NosTraits: the facts about a network OS that the planners need, as a typed record.

The planners (plan/) read these and never compare NOS names: a NOS's port spelling, whether it
has a VRRP model, the anycast-gateway MAC it insists on and whether the switch model's platform
data (catalog `sonic:` port map and buffers) applies are all here, one record per NOS in this
package. How a NOS is rendered, applied and exported is its driver's (render/switches/_<nos>/).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["NosTraits", "PortNamer"]

PortNamer = Callable[[int, int], str]  # (zero-based front-panel port index, lanes per port) -> port name


@dataclass(frozen=True, slots=True)
class NosTraits:
    nos: str  # a vocab.Nos value
    label: str  # how people write it (messages): vocab.Nos.CHOICES
    port_name: PortNamer
    # the switch model's platform data (catalog `sonic:`: port_config.ini names, lanes and speeds, buffer
    # pools) names the ports and bounds their speeds and lossless headroom; else port_name does
    platform_data: bool = False
    # a VRRP model: without one, an L2 plane's gateway sits on one switch (GatewayMethod.SINGLE)
    vrrp: bool = True
    # the anycast gateway MAC the NOS uses whatever is configured; None: a locally administered one per VLAN
    anycast_mac: str | None = None
