"""The NOS table: one NosDriver per vocab.Nos value (each defined in its own `_<nos>/driver.py`).

Renderers, exports and apply paths look a NOS up here instead of keeping their own if/elif chains.
How Ansible reaches a switch: SONiC via Dell's enterprise_sonic collection over network_cli,
Cumulus Linux 5 via NVIDIA's nvue collection over httpapi, EOS via arista.eos over network_cli;
InfiniBand switches are managed through the subnet manager, not Ansible.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from clusterforge.render.switches._cumulus.driver import CUMULUS
from clusterforge.render.switches._eos.driver import EOS
from clusterforge.render.switches._infiniband.driver import INFINIBAND
from clusterforge.render.switches._sonic.driver import SONIC
from clusterforge.render.switches.driver import NosDriver

__all__ = ["DRIVERS", "driver_for", "ansible_network_vars"]

DRIVERS: MappingProxyType[str, NosDriver[Any]] = MappingProxyType({d.nos: d for d in (SONIC, CUMULUS, EOS, INFINIBAND)})


def driver_for(nos: str) -> NosDriver[Any]:
    try:
        return DRIVERS[nos]
    except KeyError:
        raise ValueError(f"no driver for NOS {nos!r} (known: {', '.join(DRIVERS)})") from None


def ansible_network_vars(nos: str) -> dict[str, str]:
    driver = DRIVERS.get(nos)
    return dict(driver.ansible_vars) if driver else {}
