"""SONiC's record: config_db.json (sorted-key dump of the tables) plus frr.conf where the switch runs BGP."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from clusterforge.render.jsontext import to_json
from clusterforge.render.switches._sonic import sonic_structured_config
from clusterforge.render.switches.driver import NosDriver
from clusterforge.render.switches.templates import render_template
from clusterforge.vocab import Nos

__all__ = ["SONIC"]


def _write(structured: dict[str, Any]) -> dict[str, str]:
    files = {"config_db.json": to_json(structured["config_db"])}
    if "router_bgp" in structured["frr"]:
        files["frr.conf"] = render_template("switch/frr/frr.conf.j2", **structured["frr"])
    return files


# Dell's enterprise_sonic collection over network_cli (SONiC's CLI over SSH)
SONIC = NosDriver(
    nos=Nos.SONIC, build=sonic_structured_config, write=_write, file_names=("config_db.json", "frr.conf"),
    ansible_vars=MappingProxyType({"ansible_network_os": "dellemc.enterprise_sonic.sonic",
                                   "ansible_connection": "ansible.netcommon.network_cli"}),
    containerlab_kind="sonic-vs",
)
