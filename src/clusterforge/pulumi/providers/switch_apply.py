"""What runs on a switch after its files have been swapped into place: the NOS's own atomic load.

The NOS is the one the Plan gives the switch's plane, carried with its rendered files
(render.tree.RenderedTree.nos, the `nos` input of SwitchConfig), never guessed from file names.
The scripts are the NOS drivers' `apply` (render/switches/_<nos>/driver.py). Each stops at the
first failing command (`set -e`), and the NOS step it relies on is all-or-nothing on that NOS:

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

from collections.abc import Iterable

from clusterforge.render.switches.network_os import DRIVERS
from clusterforge.render.switches.sonic_merge import SONIC_MERGE

__all__ = ["apply_script", "SONIC_MERGE"]


def apply_script(nos: str | None, device_dir: str, relpaths: Iterable[str] = ()) -> str | None:
    """Shell run on the switch after the swap; None where the NOS has no apply step (its driver's `apply`)."""
    driver = DRIVERS.get(nos) if nos else None
    if driver is None or driver.apply is None:
        return None
    return driver.apply(device_dir, frozenset(relpaths))
