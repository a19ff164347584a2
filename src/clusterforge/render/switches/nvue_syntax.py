"""The two NVUE spellings clusterforge writes: Cumulus Linux 5.15 and later (default) and 5.14 and earlier.

Cumulus Linux 5.15 renamed many NVUE paths ("New and Changed NVUE Commands", CumulusNetworks/docs
content/cumulus-linux-515/Whats-New/New-and-Changed-NVUE-Commands.md at 07d58d4b). Of the paths
startup.yaml uses, these changed (5.14 -> 5.15):

    interface <id> ip address <prefix>              -> interface <id> ipv4 address <prefix>
    interface <id> ip gateway <address>             -> interface <id> ipv4 gateway <address>
    interface <id> ip vrf <vrf>                     -> interface <id> vrf <vrf>
    interface <id> ip vrr address / enable on / state up
                                                    -> interface <id> ipv4 vrr address / state enabled / vrr-state up
    interface <id> ip vrrp enable on / virtual-router ...
                                                    -> interface <id> ipv4 vrrp state enabled / virtual-router ...
    qos roce enable on                              -> qos roce state enabled
    router bgp enable on                            -> router bgp state enabled
    vrf <id> router bgp enable on                   -> vrf <id> router bgp state enabled
    vrf <id> router bgp address-family ipv4-unicast enable on
                                                    -> ... ipv4-unicast state enabled
    vrf <id> router bgp path-selection multipath aspath-ignore on
                                                    -> ... aspath-ignore enabled

`words` gives the templates the spelling; `model_for` turns the 5.14 object model
(schemas/nvue_object_model.json) into the 5.15 one by the same renames, so both are checked.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["SYNTAXES", "DEFAULT_SYNTAX", "words", "model_for", "header_comment"]

SYNTAXES = ("5.15", "5.14")
DEFAULT_SYNTAX = "5.15"


def words(syntax: str) -> dict[str, Any]:
    new = syntax == "5.15"
    return {
        "version": syntax,
        "ip": "ipv4" if new else "ip",         # the interface address family container
        "switch": "state" if new else "enable",  # the on/off leaf of a feature
        "on": "enabled" if new else "on",
        "vrr_state": "vrr-state" if new else "state",
        "vrf_at_interface": new,               # 5.15: `interface <id> vrf`, 5.14: `interface <id> ip vrf`
    }


def header_comment(syntax: str) -> str:
    return f"Cumulus Linux {syntax} and later NVUE syntax" if syntax == "5.15" else \
        f"Cumulus Linux {syntax} and earlier NVUE syntax"


def model_for(model_514: dict[str, Any], syntax: str) -> dict[str, Any]:
    """The object model of `syntax`, from the 5.14 one (the renames above)."""
    if syntax != "5.15":
        return model_514
    model = copy.deepcopy(model_514)
    top = model["set"]
    iface = top["interface"]["<interface-id>"]
    ip = iface.pop("ip", {})
    if "vrf" in ip:
        iface["vrf"] = ip.pop("vrf")
    if "vrr" in ip:  # `state <up|down>` becomes `vrr-state`, `enable on` becomes `state enabled`
        vrr = ip["vrr"]
        vrr["vrr-state"] = vrr.pop("state")
        vrr.pop("enable", None)
        vrr["state"] = {"type": "enabled-disabled"}
    if "vrrp" in ip:
        ip["vrrp"].pop("enable", None)
        ip["vrrp"]["state"] = {"type": "enabled-disabled"}
    iface["ipv4"] = ip
    top["qos"]["roce"].pop("enable", None)
    top["qos"]["roce"]["state"] = {"type": "enabled-disabled"}
    top["router"]["bgp"].pop("enable", None)
    top["router"]["bgp"]["state"] = {"type": "enabled-disabled"}
    bgp = top["vrf"]["<vrf-id>"]["router"]["bgp"]
    bgp.pop("enable", None)
    bgp["state"] = {"type": "enabled-disabled"}
    af = bgp["address-family"]["ipv4-unicast"]
    af.pop("enable", None)
    af["state"] = {"type": "enabled-disabled"}
    bgp["path-selection"]["multipath"]["aspath-ignore"] = {"type": "enabled-disabled"}
    return model
