"""How Ansible reaches a switch of each NOS: the collection's network OS and its connection plugin.

SONiC: Dell's enterprise_sonic collection over network_cli (SONiC's CLI over SSH); Cumulus
Linux 5: NVIDIA's nvue collection over httpapi (the NVUE REST API); EOS: arista.eos over
network_cli. InfiniBand switches are managed through the subnet manager, not Ansible: none.
"""

from __future__ import annotations

__all__ = ["ansible_network_vars"]

_BY_NOS: dict[str, dict[str, str]] = {
    "sonic": {"ansible_network_os": "dellemc.enterprise_sonic.sonic",
              "ansible_connection": "ansible.netcommon.network_cli"},
    "cumulus": {"ansible_network_os": "nvidia.nvue", "ansible_connection": "ansible.netcommon.httpapi"},
    "eos": {"ansible_network_os": "arista.eos.eos", "ansible_connection": "ansible.netcommon.network_cli"},
}


def ansible_network_vars(nos: str) -> dict[str, str]:
    return dict(_BY_NOS.get(nos, {}))
