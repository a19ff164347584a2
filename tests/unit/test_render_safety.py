"""The second wall behind the grammars: what reaches Ansible is never templated, CSV cells are never formulas.

The hostile plans here skip validation on purpose (dataclasses.replace does not validate), to show
the renderers stay safe even if a value got past the declaration's grammars.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.render.ansible_inventory import render_ansible
from clusterforge.render.assets import render_assets
from clusterforge.render.csvcell import cell
from clusterforge.render.yamltext import to_ansible_yaml

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = "{{ 6 * 7 }}"


def _ansible_value(path: Path, key: str):
    """key of a vars file as Ansible's host_vars loading reads it (trusted as template), then templated."""
    pytest.importorskip("ansible")
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    loader = DataLoader()
    data = loader.load_from_file(str(path), trusted_as_template=True)
    return Templar(loader=loader, variables=data).template(trust_as_template("{{ " + key + " }}"))


def test_ansible_never_templates_a_rendered_string(tmp_path: Path):
    path = tmp_path / "vars.yml"
    path.write_text(to_ansible_yaml({"rendered": PAYLOAD}) + "control: '" + PAYLOAD + "'\n")
    assert "rendered: !unsafe '{{ 6 * 7 }}'" in path.read_text()
    assert _ansible_value(path, "control") == 42  # the same text without the tag: Ansible evaluates it
    assert _ansible_value(path, "rendered") == PAYLOAD


def test_host_vars_stay_literal_even_past_the_grammar(tmp_path: Path):
    _, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    model_name = plan.devices[0].model if plan.devices[0].kind == "server" else "hgx-h200-2gpu"
    facts = dataclasses.replace(plan.servers[model_name], gpu_model=PAYLOAD)
    hostile = dataclasses.replace(plan, servers={**plan.servers, model_name: facts})
    files = render_ansible(hostile)
    name, text = next((n, t) for n, t in files.items() if n.startswith("ansible/host_vars/") and PAYLOAD in t)
    path = tmp_path / "host.yml"
    path.write_text(text)
    assert _ansible_value(path, "cf_gpu_model") == PAYLOAD, name


def test_valid_declarations_carry_no_unsafe_tag():
    """Goldens stay byte-identical: valid values hold no '{', so no tag is written."""
    spec, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    assert not [name for name, text in render_ansible(plan).items() if "!unsafe" in text]


def test_verify_reads_unsafe_tagged_inventories(tmp_path: Path):
    from clusterforge.verify.hosts._inventory import load_inventory

    (tmp_path / "inventory.yml").write_text(to_ansible_yaml(
        {"all": {"vars": {"cf_cluster": PAYLOAD}, "hosts": {"h1": None}}}))
    assert load_inventory(tmp_path).host_vars("h1")["cf_cluster"] == PAYLOAD


@pytest.mark.parametrize(("value", "expected"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1", "'+1"), ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("platform-team", "platform-team"), (-3, -3), (0, 0), ("", ""),
])
def test_csv_cell(value, expected):
    assert cell(value) == expected


def test_asset_register_cells_are_never_formulas():
    _, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    hostile = dataclasses.replace(plan, site_facts=dataclasses.replace(plan.site_facts, owner="=cmd|' /C calc'!A0"))
    rows = list(csv.reader(io.StringIO(render_assets(hostile)["assets.csv"])))
    assert all(not value.startswith(("=", "+", "-", "@")) for row in rows for value in row)
    assert rows[1][-1] == "'=cmd|' /C calc'!A0"
