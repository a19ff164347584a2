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
    lossless_notes=(
        "qos roce with every class written out: NVIDIA's RoCE profile folds switch priorities 0-2, 4, 5, 7 into"
        " TC 0, splits TC 0 / TC 3 50/50 and marks ECN on TC 0; rendered: priority N to TC N, the plan's eight"
        " shares, ECN on the RoCE class only",
        "trust DSCP only (l3), as SONiC and EOS; the RoCE profile would also trust PCP",
        "DCBX PFC/ETS and the RoCE application TLV come from qos roce itself, which advertises priority 3",
    ),
)
