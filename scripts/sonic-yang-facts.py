#!/usr/bin/env python3
"""Derive src/clusterforge/render/switches/schemas/sonic_yang_facts.json from SONiC's YANG models.

    python scripts/sonic-yang-facts.py YANG_DIR COMMIT > src/clusterforge/render/switches/schemas/sonic_yang_facts.json

YANG_DIR: sonic-net/sonic-buildimage src/sonic-yang-models/yang-models with the yang-templates
rendered (yang_model_type="py") next to them; COMMIT: the sonic-buildimage commit it came from.
Needs the libyang Python bindings (PyPI `libyang`, a 2.x release for libyang 2.1; not a project
dependency: only this script uses them). For each table clusterforge emits it records facts only:
the module, each list's keys and fields, each field's base type, integer ranges, string patterns,
enum values, whether it is mandatory, and the table a leafref points into. The repository's
checker (render/switches/sonic_yang.py) validates rendered config_db.json files against these facts.
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys

import cffi
import libyang as ly

TABLES = (
    "DEVICE_METADATA", "MGMT_VRF_CONFIG", "MGMT_PORT", "MGMT_INTERFACE", "PORT", "LOOPBACK_INTERFACE", "INTERFACE",
    "VLAN", "VLAN_MEMBER", "VLAN_INTERFACE", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE", "CABLE_LENGTH", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE",
    "PORT_QOS_MAP", "PFC_WD", "WRED_PROFILE", "SCHEDULER", "QUEUE", "SAG",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST",
    # tables a switch's own config holds (factory default, `config qos reload`) that the apply merge keeps
    "BREAKOUT_CFG", "FLEX_COUNTER_TABLE", "BGP_NEIGHBOR", "DEVICE_NEIGHBOR", "LOSSLESS_TRAFFIC_PATTERN",
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "TC_TO_DSCP_MAP", "DOT1P_TO_TC_MAP",
)
INTS = {"int8", "int16", "int32", "uint8", "uint16", "uint32", "int64", "uint64"}
_LEAFREF = re.compile(r"^/[\w-]+:[\w-]+/[\w-]+:(?P<table>[A-Z0-9_]+)"
                      r"/[\w-]+:(?P<list>[A-Z0-9_]+)/[\w-]+:(?P<field>[\w-]+)$")


# the bindings declare struct lysc_pattern opaque; its leading fields, from libyang 2.1 tree_schema.h
_OWN = cffi.FFI()
_OWN.cdef("struct pat { const char *expr; void *code; const char *dsc; const char *ref; const char *emsg;"
          " const char *eapptag; void *exts; uint32_t inverted : 1; uint32_t refcount : 31; };"
          "struct part_s { int64_t min; int64_t max; }; struct part_u { uint64_t min; uint64_t max; };"
          "struct rng { void *parts; };")


def _ranges(t, base: str) -> list[list[int]] | None:
    from libyang.util import ffi  # noqa: PLC0415
    num = ffi.cast("struct lysc_type_num *", t.cdata)
    if num.range == ffi.NULL:
        return None
    rng = _OWN.cast("struct rng *", int(ffi.cast("uintptr_t", num.range)))
    count = _count(rng.parts)
    signed = not base.startswith("u")
    parts = _OWN.cast("struct part_s *" if signed else "struct part_u *", rng.parts)
    return [[parts[i].min, parts[i].max] for i in range(count)]


def _count(array) -> int:
    from libyang.util import ffi  # noqa: PLC0415
    if array == ffi.NULL or array == _OWN.NULL:
        return 0
    # libyang sized arrays keep their length in the word before the first item
    return int(_OWN.cast("uint64_t *", int(ffi.cast("uintptr_t", array)) if isinstance(array, ffi.CData)
                         else array)[-1])


def _patterns(t) -> list[dict]:
    from libyang.util import ffi  # noqa: PLC0415
    st = ffi.cast("struct lysc_type_str *", t.cdata)
    out = []
    for i in range(_count(st.patterns)):
        p = _OWN.cast("struct pat *", int(ffi.cast("uintptr_t", st.patterns[i])))
        out.append({"regex": _OWN.string(p.expr).decode(), "invert": bool(p.inverted)})
    return out


def type_facts(t) -> dict:
    base = t.basename()
    if base == "leafref":
        facts = type_facts(t.leafref_type())
        m = _LEAFREF.match(t.leafref_path() or "")
        if m:
            facts["leafref"] = {"table": m["table"], "list": m["list"], "field": m["field"]}
        return facts
    if base == "union":
        return {"union": [type_facts(u) for u in t.union_types()]}
    if base in INTS:
        facts = {"type": base}
        if (r := _ranges(t, base)) is not None:
            facts["range"] = r
        return facts
    if base == "enumeration":
        return {"type": "enumeration", "enum": [e.name() for e in t.enums()]}
    if base == "string":
        facts = {"type": "string"}
        if pats := _patterns(t):
            facts["patterns"] = pats
        return facts
    return {"type": base}  # boolean, decimal64, identityref, ...: base type only


def list_facts(lst) -> dict:
    keys = [k.name() for k in lst.keys()] if lst.nodetype() == ly.SNode.LIST else []  # noqa: SIM118 - SList.keys()
    fields = {}
    inner = None
    for c in lst.children():
        if c.nodetype() == ly.SNode.LIST:
            inner = list_facts(c)
            inner["name"] = c.name()
        elif c.nodetype() in (ly.SNode.LEAF, ly.SNode.LEAFLIST):
            f = type_facts(c.type())
            if c.nodetype() == ly.SNode.LEAFLIST:
                f["leaf_list"] = True
            if c.nodetype() == ly.SNode.LEAF and c.mandatory():
                f["mandatory"] = True
            fields[c.name()] = f
    out = {"keys": keys, "fields": fields}
    if inner is not None:  # Type-1 map: config_db writes the inner list as {key: value}
        value = [n for n in inner["fields"] if n not in inner["keys"]][0]
        out["map"] = {"key": inner["fields"][inner["keys"][0]], "value": inner["fields"][value]}
    return out


def main(yang_dir: str, commit: str) -> int:
    ctx = ly.Context(yang_dir)
    names = [os.path.basename(p)[:-5] for p in sorted(glob.glob(os.path.join(yang_dir, "*.yang")))]
    for name in names:
        ctx.load_module(name)
    tables: dict[str, dict] = {}
    for name in names:
        mod = ctx.get_module(name)
        top = next((c for c in mod.children() if c.nodetype() == ly.SNode.CONTAINER), None)
        if top is None:
            continue
        for table in top.children():
            if table.nodetype() != ly.SNode.CONTAINER or table.name() not in TABLES:
                continue
            entry: dict = {"module": mod.name(), "lists": {}, "containers": {}}
            for c in table.children():
                if c.nodetype() == ly.SNode.LIST:
                    entry["lists"][c.name()] = list_facts(c)
                elif c.nodetype() == ly.SNode.CONTAINER:  # DEVICE_METADATA|localhost and the like
                    entry["containers"][c.name()] = list_facts(c)
            tables[table.name()] = entry
    missing = sorted(set(TABLES) - set(tables))
    if missing:
        print(f"no YANG model for: {', '.join(missing)}", file=sys.stderr)
        return 1
    doc = {
        "source": f"sonic-net/sonic-buildimage {commit} src/sonic-yang-models/yang-models (facts only)",
        "generator": "scripts/sonic-yang-facts.py",
        "tables": dict(sorted(tables.items())),
    }
    json.dump(doc, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
