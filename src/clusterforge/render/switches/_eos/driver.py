"""Arista EOS's record: one running-config."""

from __future__ import annotations

import shlex
from types import MappingProxyType

from clusterforge import nos
from clusterforge.render.switches._eos import eos_structured_config
from clusterforge.render.switches._eos.running_config import running_config
from clusterforge.render.switches._eos.schema import EosConfig
from clusterforge.render.switches.driver import NosDriver
from clusterforge.vocab import Nos

__all__ = ["EOS"]


def _write(structured: EosConfig) -> dict[str, str]:
    return {"running-config": running_config(structured)}


def _apply(device_dir: str, _names: frozenset[str]) -> str:
    """`configure replace` (a configuration session: commit or nothing), then save it for the next boot."""
    replace = shlex.quote(f"configure replace file:{device_dir}/running-config")
    return f"set -e; FastCli -p 15 -c {replace}; FastCli -p 15 -c 'copy running-config startup-config'"


# arista.eos over network_cli
EOS = NosDriver(
    nos=Nos.EOS, traits=nos.EOS, build=eos_structured_config, write=_write, file_names=("running-config",),
    ansible_vars=MappingProxyType({"ansible_network_os": "arista.eos.eos",
                                   "ansible_connection": "ansible.netcommon.network_cli"}),
    containerlab_kind="arista_ceos", apply=_apply,
    lossless_notes=(
        "all 64 DSCPs mapped: the DSCP policy, with only the CNP DSCP in the strict class",
        "PFC watchdog per port through qos profile ROCE (timeout = recovery = pfc_watchdog_ms, polling auto,"
        " drop), besides the global default",
        "dcbx mode ieee on every lossless port; no application-priority (RoCE UDP 4791) entry is written:"
        " hosts take the RoCE priority from their own settings",
    ),
)
