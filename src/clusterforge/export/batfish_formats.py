"""What Batfish's parsers take, for the snapshot's copies of the switch files and its host files.

Facts from batfish/batfish (commit cba1873338):

* Host files (representation/host/HostConfiguration.java, HostInterface.java) are read by Jackson with
  BatfishObjectMapper, whose unknown-property failure stays on: a host file carrying any other property
  is rejected whole. HostConfiguration's JSON properties are `hostname`, `hostInterfaces`, `iptablesFile`
  and `overlay` (its static-route set has no JSON property); HostInterface's are `name`, `prefix`,
  `gateway`, `bandwidth`, `otherPrefixes`, `shared` and `vrf`. The host's only default route comes from
  the first interface, in name order (a TreeMap), that has a `gateway`.
* Batfish.processManagementInterfaces deactivates (IGNORE_MGMT) every interface whose name matches
  MANAGEMENT_INTERFACES below, unless the `ignoremanagementinterfaces` setting (default true) is off.
* SONiC config_db.json (vendor/sonic/representation/ConfigDb.java): a table whose entries carry a
  property the entry's class does not declare fails to deserialize and is dropped whole with a red flag.
  Port and DeviceMetadata ignore unknown properties; Vlan (`dhcp_servers`, `members`, `vlanid`),
  InterfaceKeyProperties (INTERFACE, LOOPBACK_INTERFACE, MGMT_INTERFACE, VLAN_INTERFACE: `forced_mgmt_routes`,
  `gwaddr`, `secondary`), VlanMember (`tagging_mode`) and MgmtVrf (`mgmtVrfEnabled`, `in_band_mgmt_enabled`)
  do not. SonicConversions.convertVlans takes a VLAN's ports from its `members` list and each member's
  tagging mode from VLAN_MEMBER `Vlan<id>|<port>`.
* EOS `speed` (vendor/arista/grammar/Legacy_interface.g4 eos_bandwidth_specifier, AristaLexer.g4): the
  values in EOS_SPEEDS, bare or after `forced` / `auto`.
"""

from __future__ import annotations

import re

__all__ = ["HOST_PROPERTIES", "HOST_INTERFACE_PROPERTIES", "MANAGEMENT_INTERFACES", "SONIC_STRICT_TABLES",
           "EOS_SPEEDS"]

HOST_PROPERTIES = frozenset({"hostname", "hostInterfaces", "iptablesFile", "overlay"})
HOST_INTERFACE_PROPERTIES = frozenset({"name", "prefix", "gateway", "bandwidth", "otherPrefixes", "shared", "vrf"})
MANAGEMENT_INTERFACES = re.compile(
    r"(\Amgmt)|(\Amanagement)|(\Afxp0)|(\Aem0)|(\Ame0)|(\Avme)|(\Awlan-ap)|(\Aeth\d+-mgmt\d+)", re.IGNORECASE)
_KEY_PROPERTIES = frozenset({"forced_mgmt_routes", "gwaddr", "secondary"})
# config_db table -> the properties its Batfish class declares (tables whose class ignores unknown ones are absent)
SONIC_STRICT_TABLES: dict[str, frozenset[str]] = {
    "VLAN": frozenset({"dhcp_servers", "members", "vlanid"}),
    "VLAN_MEMBER": frozenset({"tagging_mode"}),
    "INTERFACE": _KEY_PROPERTIES,
    "LOOPBACK_INTERFACE": _KEY_PROPERTIES,
    "MGMT_INTERFACE": _KEY_PROPERTIES,
    "VLAN_INTERFACE": _KEY_PROPERTIES,
    "MGMT_VRF_CONFIG": frozenset({"mgmtVrfEnabled", "in_band_mgmt_enabled"}),
}
EOS_SPEEDS = frozenset({"50gfull", "40gfull", "400g-4", "400gfull", "100g-1", "100gfull", "100full", "1000full",
                        "10000full", "25gfull", "200g-2"})
