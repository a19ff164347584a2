"""The CLI contract other tools rely on: plan JSON shape, render layout, atomic writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
EXAMPLES = ["lab", "roce-128gpu", "superpod-4su"]
KINDS = {"server", "leaf", "spine", "core", "storage", "mgmt-switch", "pdu", "control"}
PLANES = {"data", "storage", "management", "oob"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clusterforge.cli", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


@pytest.mark.parametrize("example", EXAMPLES)
def test_validate_examples(example):
    result = cli("validate", f"inventory/{example}.yaml")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("example", EXAMPLES)
def test_plan_json_contract(example):
    result = cli("plan", f"inventory/{example}.yaml", "--format", "json")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert set(plan["summary"]) >= {"gpus", "servers", "racks", "power_kw"}
    assert plan["summary"]["gpus"] == sum(d.get("gpus", 0) for d in plan["devices"])
    for device in plan["devices"]:
        assert set(device) >= {"name", "kind", "su", "rack", "ru", "power_w", "interfaces"}
        assert device["kind"] in KINDS
        for iface in device["interfaces"]:
            assert iface["plane"] in PLANES
            assert iface["ip"] is None or "/" in iface["ip"]
    for rack in plan["racks"]:
        assert set(rack) >= {"name", "su", "power_w", "capacity_w", "feeds"}
    assert set(plan) >= {"links", "fabric", "bom"}
    for link in plan["links"]:
        assert set(link) >= {"a", "b", "plane", "speed_gbps", "cable"}


def test_plan_table_default():
    result = cli("plan", "inventory/lab.yaml")
    assert result.returncode == 0
    assert "su01-r01-gpu01" in result.stdout and "Racks" in result.stdout


def test_render_layout(tmp_path: Path):
    result = cli("render", "inventory/lab.yaml", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    assert (out / "ansible" / "inventory.yml").is_file()
    assert (out / "ansible" / "host_vars" / "su01-r02-gpu02.yml").is_file()
    header = (out / "assets.csv").read_text().splitlines()[0]
    assert header.startswith("asset_id,name,kind,model,site,rack,u")


def test_failed_render_leaves_directory_as_it_was(tmp_path: Path):
    out = tmp_path / "out"
    assert cli("render", "inventory/lab.yaml", "--out", str(out)).returncode == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = ROOT / "tests" / "data" / "bad" / "impossible-power.yaml"
    result = cli("render", str(bad), "--out", str(out))
    assert result.returncode == 1
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert before == after
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.stage")]
