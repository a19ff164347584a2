"""Each NOS's structured config is a typed record (render/switches/_<nos>/schema.py): frozen, built by the
NOS's driver, and for SONiC one field per CONFIG_DB table whose entry fields are the table's YANG leaves."""

from __future__ import annotations

import dataclasses
import typing
from importlib import import_module
from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.render.switches._sonic.schema import ConfigDb, SonicConfig
from clusterforge.render.switches.facts import fabric_facts
from clusterforge.render.switches.network_os import DRIVERS
from clusterforge.render.switches.sonic_yang import yang_facts

ROOT = Path(__file__).resolve().parents[2]
TOP = {"sonic": "SonicConfig", "cumulus": "CumulusConfig", "eos": "EosConfig", "infiniband": "IbConfig"}


def _schema(nos: str):
    return import_module(f"clusterforge.render.switches._{nos}.schema")


def _records() -> list[type]:
    found = [r for nos in DRIVERS for r in _schema(nos).RECORDS]
    return found + list(import_module("clusterforge.render.switches._frr.schema").RECORDS)


def test_every_nos_has_a_schema_with_its_top_record() -> None:
    assert set(TOP) == set(DRIVERS)
    for nos, name in TOP.items():
        assert getattr(_schema(nos), name) in _schema(nos).RECORDS


@pytest.mark.parametrize("record", [r for r in _records() if dataclasses.is_dataclass(r)], ids=lambda r: r.__name__)
def test_every_dataclass_record_is_frozen(record: type) -> None:
    assert record.__dataclass_params__.frozen  # type: ignore[attr-defined]  # every dataclass has them


@pytest.mark.parametrize("inventory", ["lab.yaml", "roce-128gpu.yaml", "superpod-4su.yaml"])
def test_each_driver_builds_its_nos_record(inventory: str) -> None:
    _, plan, _ = load_and_plan(ROOT / "inventory" / inventory)
    seen = set()
    for facts in fabric_facts(plan).values():
        config = DRIVERS[facts.nos].build(facts, plan.qos)
        assert type(config).__name__ == TOP[facts.nos], facts.name
        with pytest.raises(dataclasses.FrozenInstanceError):
            config.__setattr__(dataclasses.fields(config)[0].name, None)
        seen.add(facts.nos)
    assert seen


def _entry_type(hint: object) -> type | None:
    """dict[str, Entry] | None -> Entry (a TypedDict), else None (a map such as DSCP_TO_TC_MAP)."""
    table = hint if typing.get_origin(hint) is dict else next(a for a in typing.get_args(hint) if a is not type(None))
    entry = typing.get_args(table)[1]
    return entry if typing.is_typeddict(entry) else None


def _yang_fields(table: dict) -> set[str]:
    groups = [*table.get("lists", {}).values(), *table.get("containers", {}).values()]
    return {name for group in groups for name in group.get("fields", {})}


@pytest.mark.parametrize("table", [f.name for f in dataclasses.fields(ConfigDb)])
def test_each_config_db_table_and_its_fields_are_sonic_yangs(table: str) -> None:
    tables = yang_facts()["tables"]
    assert table in tables, f"{table} is no table of sonic-yang-models"
    entry = _entry_type(typing.get_type_hints(ConfigDb)[table])
    if entry is None:  # a Type-1 map: {key: value}, checked by the YANG walk (test_sonic_schema.py)
        assert any("map" in lst for lst in tables[table].get("lists", {}).values())
        return
    ours = set(entry.__required_keys__) | set(entry.__optional_keys__)  # type: ignore[attr-defined]
    assert ours <= _yang_fields(tables[table]), f"{table}: {sorted(ours - _yang_fields(tables[table]))}"


def test_the_config_db_dump_leaves_out_the_tables_that_do_not_apply() -> None:
    _, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    facts = fabric_facts(plan)["su01-leaf-rail0"]
    config = DRIVERS["sonic"].build(facts, plan.qos)
    assert isinstance(config, SonicConfig)
    tables = config.config_db.tables()
    assert "PORT" in tables and "BUFFER_PG" in tables  # a RoCE leaf
    assert all(tables.values()) and "SAG" not in tables and config.config_db.SAG is None
