"""SONiC's record: config_db.json (sorted-key dump of the tables) plus frr.conf where the switch runs BGP."""

from __future__ import annotations

import shlex
from types import MappingProxyType

from clusterforge import nos
from clusterforge.render.jsontext import to_json
from clusterforge.render.switches._sonic import sonic_structured_config
from clusterforge.render.switches._sonic.schema import SonicConfig
from clusterforge.render.switches.driver import NosDriver
from clusterforge.render.switches.sonic_merge import SONIC_MERGE
from clusterforge.render.switches.templates import render_template
from clusterforge.vocab import Nos

__all__ = ["SONIC"]

SONIC_FRR = "/etc/sonic/frr/frr.conf"  # the bgp container sees /etc/sonic/frr as /etc/frr
FRR_RELOAD = "/usr/lib/frr/frr-reload.py"
BUFFER_MODEL = "sonic-cfggen -v DEVICE_METADATA.localhost.buffer_model -j"  # a config file's buffer model


def _write(structured: SonicConfig) -> dict[str, str]:
    files = {"config_db.json": to_json(structured.config_db.tables())}
    frr = structured.frr
    if frr.router_bgp is not None:
        files["frr.conf"] = render_template("switch/frr/frr.conf.j2", hostname=frr.hostname, router_bgp=frr.router_bgp)
    return files


def _apply(device_dir: str, names: frozenset[str]) -> str:
    """The running CONFIG_DB with our tables merged in (sonic_merge.py) -> `config replace` (YANG-validated,
    one patch, rolled back on failure) -> `config save`; where that changed DEVICE_METADATA's buffer_model,
    `config reload` (buffermgrd.sh picks the traditional or the dynamic buffer manager when swss starts);
    frr.conf checked by `frr-reload.py --test`, then swapped in and reloaded."""
    d = shlex.quote(device_dir)
    steps = [  # scratch files in a private temporary directory, removed however the script ends
        "t=$(mktemp -d)", "trap 'rm -rf \"$t\"' EXIT",
        'sudo sonic-cfggen -d --print-data > "$t/running.json"',
        f'python3 -c {shlex.quote(SONIC_MERGE)} "$t/running.json" {d}/config_db.json "$t/target.json"',
        'sudo config replace "$t/target.json"',
        "sudo config save -y",
        f"if [ \"$({BUFFER_MODEL} \"$t/running.json\")\" != \"$({BUFFER_MODEL} \"$t/target.json\")\" ];"
        " then sudo config reload -y; fi",
    ]
    if "frr.conf" in names:
        steps += [
            f"sudo install -m 0644 {d}/frr.conf {SONIC_FRR}.cf-new",
            f"docker exec bgp {FRR_RELOAD} --test /etc/frr/frr.conf.cf-new",
            f"sudo mv {SONIC_FRR}.cf-new {SONIC_FRR}",
            f"docker exec bgp {FRR_RELOAD} --reload /etc/frr/frr.conf",
        ]
    return "set -e; " + "; ".join(steps)


# Dell's enterprise_sonic collection over network_cli (SONiC's CLI over SSH)
SONIC = NosDriver(
    nos=Nos.SONIC, traits=nos.SONIC, build=sonic_structured_config, write=_write,
    file_names=("config_db.json", "frr.conf"),
    ansible_vars=MappingProxyType({"ansible_network_os": "dellemc.enterprise_sonic.sonic",
                                   "ansible_connection": "ansible.netcommon.network_cli"}),
    containerlab_kind="sonic-vs", apply=_apply,
    lossless_notes=(
        "own DSCP_TO_TC_MAP, one lossless priority: upstream's AZURE map sends DSCP 26 to lossy TC 1 and makes"
        " TC 3 and 4 lossless",
        "no DCBX and no RoCE application TLV: a NOS limit (community SONiC's LLDP is lldpd, which has no DCBX);"
        " hosts take PFC and the RoCE priority from their own settings",
    ),
)
