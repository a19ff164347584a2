"""Device types in the NetBox/Nautobot device-type library YAML form: valid against a schema derived
from the library's own (schemas/netbox-devicetype.schema.json), laid out as the library is, and
complete: every planned device's physical ports exist on its type, so devices made from the type
carry the names the rendered configs use."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest
import yaml
from devicetype_library_rules import problems
from export_examples import REPO

from clusterforge.export.devicetype_library import LIBRARY
from clusterforge.export.devicetypes import _switch_type, device_types, export_device_types
from clusterforge.loading import load_and_plan
from clusterforge.render.switches.facts import fabric_facts

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "netbox-devicetype.schema.json").read_text())


def _multiple_of(validator, step, instance, schema):
    """multipleOf in decimal arithmetic: 130.45 kg is a multiple of 0.01 (binary floats say no)."""
    if validator.is_type(instance, "number") and Decimal(str(instance)) % Decimal(str(step)) != 0:
        yield jsonschema.ValidationError(f"{instance} is not a multiple of {step}")


Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"multipleOf": _multiple_of})
INVENTORIES = ("lab", "roce-128gpu", "superpod-4su")


@pytest.fixture(scope="module", params=INVENTORIES)
def planned(request):
    spec, plan, _ = load_and_plan(REPO / "inventory" / f"{request.param}.yaml")
    return spec, plan, device_types(spec, plan)


def test_every_device_type_validates_against_the_library_schema(planned) -> None:
    _, _, types = planned
    files = export_device_types(types)
    assert files
    for path, text in files.items():
        document = yaml.safe_load(text)
        Validator(SCHEMA).validate(document)
        assert path.startswith(f"device-types/{document['manufacturer']}/")


def test_every_file_passes_the_librarys_ci_rules(planned) -> None:
    """File name = model, slug = manufacturer + model, yamllint --strict with the library's rules, `---`,
    no empty strings, unique component names, a power source (devicetype_library_rules.py)."""
    _, _, types = planned
    broken = {path: found for path, text in export_device_types(types).items() if (found := problems(path, text))}
    assert broken == {}
    for text in export_device_types(types).values():
        assert text.startswith("---\n")


def test_the_rules_catch_what_the_library_refuses() -> None:
    """Guard: each rule fails the form the old export had."""
    good = "---\nmanufacturer: Nvidia\nmodel: SN5400-sonic\nslug: nvidia-sn5400-sonic\nu_height: 2\n" \
           "is_full_depth: true\npower-ports:\n  - name: psu1\n    type: iec-60320-c14\n"
    assert problems("device-types/Nvidia/SN5400-sonic.yaml", good) == []
    assert problems("device-types/Nvidia/nvidia-sn5400-sonic.yaml", good)  # file name is the slug
    unindented = good.replace("  - name: psu1\n    type", "- name: psu1\n  type")
    assert problems("device-types/Nvidia/SN5400-sonic.yaml", unindented)  # sequence not indented
    assert problems("device-types/Nvidia/SN5400-sonic.yaml", good.removeprefix("---\n"))  # no document start
    assert problems("device-types/Nvidia/SN5400-sonic.yaml", good + "comments: ''\n")  # empty string
    assert problems("device-types/Nvidia/SN5400-sonic.yaml", good.replace("nvidia-sn5400-sonic", "sn5400"))
    assert problems("device-types/Nvidia/SN5600.yaml", good.replace("model: SN5400-sonic", "model: SN5600")
                    .replace("nvidia-sn5400-sonic", "nvidia-sn4700"))


def test_models_the_library_has_keep_its_spelling() -> None:
    """A Cumulus SN5600 is the library's device-types/Nvidia/SN5600.yaml (slug nvidia-sn5600); the SONiC one,
    whose ports are named differently, is its own type beside it; vendors spelled as the library does."""
    spec, plan, _ = load_and_plan(REPO / "inventory" / "lab.yaml")
    model = spec.catalog.switches["sn5600"]
    cumulus, sonic = _switch_type("sn5600", model, "cumulus", 2), _switch_type("sn5600", model, "sonic", 2)
    assert (cumulus.path, cumulus.slug, cumulus.data["model"]) == \
        ("device-types/Nvidia/SN5600.yaml", "nvidia-sn5600", "SN5600")
    assert (sonic.path, sonic.slug) == ("device-types/Nvidia/SN5600-sonic.yaml", "nvidia-sn5600-sonic")
    assert cumulus.data["interfaces"][1]["name"] == "swp1"
    assert "part_number" not in cumulus.data  # the catalog declares none: no made-up one
    for entry in LIBRARY.values():
        assert entry.file.rsplit(".", 1)[0].casefold() == entry.model.casefold()


def test_a_declared_part_number_is_exported() -> None:
    spec, _, _ = load_and_plan(REPO / "inventory" / "lab.yaml")
    model = spec.catalog.switches["sn5600"].model_copy(update={"part_number": "MSN5600-TEST"})
    exported = _switch_type("sn5600", model, "sonic", 2)
    assert exported.data["part_number"] == "MSN5600-TEST"


def test_schema_is_strict() -> None:
    validator = Validator(SCHEMA)
    good = {"manufacturer": "N", "model": "m", "slug": "n-m", "u_height": 1, "is_full_depth": True}
    assert validator.is_valid(good)
    for bad in ({**good, "slug": "N M"}, {**good, "u_height": 1.25}, {**good, "weight": 3},
                {**good, "interfaces": [{"name": "e", "type": "400g"}]}, {**good, "height": 1}):
        assert not validator.is_valid(bad), bad


def test_every_planned_port_is_on_its_device_type(planned) -> None:
    spec, plan, types = planned
    by_key = {t.key: t for t in types}
    nos = {name: facts.nos for name, facts in fabric_facts(plan).items()}
    missing = []
    for device in plan.devices:
        device_type = by_key[(device.model, nos.get(device.name, ""))]
        names = {i["name"] for i in device_type.data.get("interfaces", [])}
        for iface in device.interfaces:
            if iface.name == "Loopback0" or iface.name.startswith("Vlan") or iface.members:
                continue  # virtual: created per device
            if iface.name not in names:
                missing.append(f"{device.name}:{iface.name}")
    assert missing == []
    for pdu in plan.pdus:
        (device_type,) = [t for t in types if t.key == (pdu.model, "")]
        assert len(device_type.data["power-outlets"]) == pdu.outlets


def test_power_ports_follow_the_catalog(planned) -> None:
    spec, plan, types = planned
    for device_type in types:
        model, _ = device_type.key
        if model in spec.catalog.servers:
            psu = spec.catalog.servers[model].psu
            ports = device_type.data["power-ports"]
            assert len(ports) == psu.count and {p["maximum_draw"] for p in ports} == {int(psu.rating_w)}
