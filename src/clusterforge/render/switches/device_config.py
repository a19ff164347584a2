"""Structured config -> file contents. Formatting only: every value is already decided."""

from __future__ import annotations

from json.encoder import encode_basestring_ascii
from typing import Any

from clusterforge.render.switches.templates import environment

__all__ = ["device_files", "fabric_files", "HEADER_TEXT", "to_json"]

HEADER_TEXT = "Rendered by clusterforge from the Plan. Do not edit: change the inventory declaration."


def to_json(data: Any) -> str:
    """Deterministic JSON: sorted keys, 4-space indent, trailing newline (sonic-cfggen's layout).

    Byte-identical to json.dumps(data, indent=4, sort_keys=True) + "\\n" for the str/int/bool/None,
    dict and list values configs hold; written out because json's indenting encoder is pure Python
    and was most of the render time at scale.
    """
    out: list[str] = []
    _emit(data, 0, out)
    out.append("\n")
    return "".join(out)


def _emit(value: Any, depth: int, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = "\n" + "    " * (depth + 1)
        out.append("{")
        for i, key in enumerate(sorted(value)):
            out.append(("," if i else "") + inner + encode_basestring_ascii(str(key)) + ": ")
            _emit(value[key], depth + 1, out)
        out.append("\n" + "    " * depth + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = "\n" + "    " * (depth + 1)
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + inner)
            _emit(item, depth + 1, out)
        out.append("\n" + "    " * depth + "]")
    elif isinstance(value, str):
        out.append(encode_basestring_ascii(value))
    elif value is True or value is False or value is None:
        out.append({True: "true", False: "false", None: "null"}[value])
    elif isinstance(value, int | float):
        out.append(repr(value) if isinstance(value, float) else str(value))
    else:
        raise TypeError(f"not JSON-serialisable: {value!r}")


def _template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(header=HEADER_TEXT, **context)


def device_files(nos: str, structured: dict[str, Any]) -> dict[str, str]:
    """File name -> content for one switch."""
    if nos == "sonic":
        files = {"config_db.json": to_json(structured["config_db"])}
        if "router_bgp" in structured["frr"]:
            files["frr.conf"] = _template("switch/frr/frr.conf.j2", **structured["frr"])
        return files
    if nos == "cumulus":
        return {"startup.yaml": _template("switch/cumulus/startup.yaml.j2", config=structured)}
    if nos == "eos":
        return {"running-config": _template("switch/eos/running-config.j2", config=structured)}
    if nos == "infiniband":
        return {"ib.json": to_json(structured["ib"])}
    raise ValueError(f"no renderer for NOS {nos!r}")


def fabric_files(partitions: dict[str, Any] | None) -> dict[str, str]:
    if partitions is None:
        return {}
    return {"opensm-partitions.conf": _template("switch/infiniband/opensm-partitions.conf.j2", **partitions)}
