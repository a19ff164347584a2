"""Cumulus Linux's record: one NVUE startup.yaml."""

from __future__ import annotations

import shlex
from types import MappingProxyType

from clusterforge import nos
from clusterforge.render.switches._cumulus import cumulus_structured_config
from clusterforge.render.switches._cumulus.schema import CumulusConfig
from clusterforge.render.switches._cumulus.startup_yaml import startup_yaml
from clusterforge.render.switches.driver import NosDriver
from clusterforge.vocab import Nos

__all__ = ["CUMULUS"]


def _write(structured: CumulusConfig) -> dict[str, str]:
    return {"startup.yaml": startup_yaml(structured)}


def _apply(device_dir: str, _names: frozenset[str]) -> str:
    """`nv config replace` stages the file as the whole pending configuration, `nv config apply` applies it
    as one transaction, `nv config save` makes it the startup configuration."""
    d = shlex.quote(device_dir)
    return f"set -e; sudo nv config replace {d}/startup.yaml; sudo nv config apply --assume-yes; sudo nv config save"


# NVIDIA's nvue collection over httpapi (the NVUE REST API)
CUMULUS = NosDriver(
    nos=Nos.CUMULUS, traits=nos.CUMULUS, build=cumulus_structured_config, write=_write, file_names=("startup.yaml",),
    ansible_vars=MappingProxyType({"ansible_network_os": "nvidia.nvue",
                                   "ansible_connection": "ansible.netcommon.httpapi"}),
    containerlab_kind="nvidia_cumulusvx", apply=_apply,
)
