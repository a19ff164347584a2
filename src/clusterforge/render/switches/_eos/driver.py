"""Arista EOS's record: one running-config."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from clusterforge.render.switches._eos import eos_structured_config
from clusterforge.render.switches.driver import NosDriver
from clusterforge.render.switches.templates import render_template
from clusterforge.vocab import Nos

__all__ = ["EOS"]


def _write(structured: dict[str, Any]) -> dict[str, str]:
    return {"running-config": render_template("switch/eos/running-config.j2", config=structured)}


# arista.eos over network_cli
EOS = NosDriver(
    nos=Nos.EOS, build=eos_structured_config, write=_write, file_names=("running-config",),
    ansible_vars=MappingProxyType({"ansible_network_os": "arista.eos.eos",
                                   "ansible_connection": "ansible.netcommon.network_cli"}),
    containerlab_kind="arista_ceos",
)
