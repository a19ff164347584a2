"""What runs on a switch after its files have been swapped into place: the NOS's own atomic load.

The NOS is the one the Plan gives the switch's plane, carried with its rendered files
(render.tree.RenderedTree.nos, the `nos` input of SwitchConfig), never guessed from file names.
Each script stops at the first failing command (`set -e`), and the NOS step it relies on is
all-or-nothing on that NOS:

  SONiC   the running CONFIG_DB (`sonic-cfggen -d --print-data`) with clusterforge's tables put in
          (render/switches/sonic_merge.py: tables it renders replace theirs, the buffer/QoS family as a
          whole; PORT and DEVICE_METADATA entries are merged field by field, so the platform's own port
          and metadata fields stay) goes to `config replace`, which
          validates against SONiC's YANG models and applies as one patch, rolling back on failure;
          `config save` keeps it for the next boot. frr.conf (docker_routing_config_mode
          split-unified) is checked with `frr-reload.py --test` in the bgp container before it
          replaces /etc/sonic/frr/frr.conf, then `frr-reload.py --reload` applies the difference.
  Cumulus `nv config replace` stages the file as the whole pending configuration, `nv config apply`
          applies it as one transaction, `nv config save` makes it the startup configuration.
  EOS     `configure replace` (a configuration session under the hood: commit or nothing), then
          `copy running-config startup-config`. The SSH user's shell must be bash (EOS `username
          ... shell /bin/bash`), which is also what scp needs.

No NOS runs in this repository's tests: they run these scripts over real SSH with stand-ins for the
NOS commands, which checks the order, the arguments and that a failing step fails the push.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from clusterforge.render.switches.sonic_merge import SONIC_MERGE
from clusterforge.vocab import Nos

__all__ = ["apply_script", "SONIC_MERGE"]

SONIC_FRR = "/etc/sonic/frr/frr.conf"  # the bgp container sees /etc/sonic/frr as /etc/frr
FRR_RELOAD = "/usr/lib/frr/frr-reload.py"


def apply_script(nos: str | None, device_dir: str, relpaths: Iterable[str] = ()) -> str | None:
    """Shell run on the switch after the swap; None where the NOS has no apply step."""
    d = shlex.quote(device_dir)
    if nos == Nos.SONIC:
        steps = [  # scratch files in a private temporary directory, removed however the script ends
            "t=$(mktemp -d)", "trap 'rm -rf \"$t\"' EXIT",
            'sudo sonic-cfggen -d --print-data > "$t/running.json"',
            f'python3 -c {shlex.quote(SONIC_MERGE)} "$t/running.json" {d}/config_db.json "$t/target.json"',
            'sudo config replace "$t/target.json"',
            "sudo config save -y",
        ]
        if "frr.conf" in set(relpaths):
            steps += [
                f"sudo install -m 0644 {d}/frr.conf {SONIC_FRR}.cf-new",
                f"docker exec bgp {FRR_RELOAD} --test /etc/frr/frr.conf.cf-new",
                f"sudo mv {SONIC_FRR}.cf-new {SONIC_FRR}",
                f"docker exec bgp {FRR_RELOAD} --reload /etc/frr/frr.conf",
            ]
        return "set -e; " + "; ".join(steps)
    if nos == Nos.CUMULUS:
        return (f"set -e; sudo nv config replace {d}/startup.yaml; sudo nv config apply --assume-yes;"
                " sudo nv config save")
    if nos == Nos.EOS:
        replace = shlex.quote(f"configure replace file:{device_dir}/running-config")
        return f"set -e; FastCli -p 15 -c {replace}; FastCli -p 15 -c 'copy running-config startup-config'"
    return None
