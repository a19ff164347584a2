"""What `config replace` gets on a SONiC switch: its running CONFIG_DB with clusterforge's tables put in.

The buffer and QoS tables refer to each other (BUFFER_PG/QUEUE and the per-port profile lists name
BUFFER_PROFILEs, which name BUFFER_POOLs; PORT_QOS_MAP names the maps; QUEUE names SCHEDULER and
WRED_PROFILE entries). A switch holds upstream's set of them (after `config qos reload`: AZURE maps,
zero profiles for inactive ports, scheduler.0/1) or ours from a previous apply. Replacing only the
tables we render would leave the rest pointing at profiles and maps that are gone, which YANG
rejects. So where the rendered file carries any table of that family, it owns the whole family:
running's tables of it are dropped, ours go in. Where it carries none (a plane without RoCE), the
switch keeps its own consistent set. Other tables: ours replace theirs, except PORT and
DEVICE_METADATA, merged field by field so the platform's own fields (autoneg, mac, ...) stay.

`merge_config_db` must stay self-contained (stdlib only): its source is what the apply script runs
on the switch (`SONIC_MERGE`).
"""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["merge_config_db", "SONIC_MERGE", "QOS_FAMILY", "FIELD_MERGED"]

FIELD_MERGED = ("PORT", "DEVICE_METADATA")
QOS_FAMILY = (
    "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST", "CABLE_LENGTH", "DSCP_TO_TC_MAP", "DOT1P_TO_TC_MAP", "TC_TO_DSCP_MAP",
    "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "PORT_QOS_MAP", "SCHEDULER", "QUEUE", "WRED_PROFILE", "PFC_WD",
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "LOSSLESS_TRAFFIC_PATTERN",
)


def merge_config_db(running: dict[str, Any], new: dict[str, Any], family: tuple[str, ...] = QOS_FAMILY,
                    field_merged: tuple[str, ...] = FIELD_MERGED) -> dict[str, Any]:
    out = {table: dict(entries) for table, entries in running.items()}
    if any(table in family for table in new):
        for table in family:
            out.pop(table, None)
    for table, entries in new.items():
        if table in field_merged:
            have = out.setdefault(table, {})
            for key, fields in entries.items():
                have[key] = {**have.get(key, {}), **fields}
        else:
            out[table] = entries
    return out


# running.json new.json out.json: the function above, defaults bound, run by python3 on the switch
SONIC_MERGE = (
    "import json, sys\n"
    f"QOS_FAMILY = {QOS_FAMILY!r}\n"
    f"FIELD_MERGED = {FIELD_MERGED!r}\n"
    + inspect.getsource(merge_config_db).replace(": dict[str, Any]", "").replace(" -> dict[str, Any]", "")
    .replace(": tuple[str, ...]", "")
    + "running, new = (json.load(open(p)) for p in sys.argv[1:3])\n"
    "with open(sys.argv[3], 'w') as out:\n"
    "    json.dump(merge_config_db(running, new), out, indent=4, sort_keys=True)\n"
)
