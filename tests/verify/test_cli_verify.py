"""`clusterforge verify` and `clusterforge accept`: arguments, exit codes, the GPU spec handed over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from clusterforge.cli import _tables
from clusterforge.cli import accept as cli_accept
from clusterforge.cli import verify as cli_verify
from clusterforge.loading import load_and_plan
from clusterforge.plan.acceptance import gpu_spec_for

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "inventory" / "lab.yaml"


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()
    cli_verify.register(app)
    cli_accept.register(app)
    return app


@pytest.fixture(scope="module")
def lab_plan():
    spec, plan, _ = load_and_plan(LAB)
    return spec, plan


def invoke(app, *args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_gpu_spec_for_host_uses_its_catalog_model(lab_plan):
    spec, plan = lab_plan
    model, spec_dict = gpu_spec_for(spec, plan, host="su01-r01-gpu01")
    gpu = spec.catalog.servers[model].gpu
    assert model == "hgx-h200-2gpu"
    assert spec_dict["gpu"]["model"] == gpu.model and spec_dict["gpu"]["count"] == gpu.count
    dense = spec_dict["gpu"]["tflops_dense"]
    assert {p: dense[p] for p in ("fp16", "bf16", "fp32", "tf32")} == {
        "fp16": gpu.tflops_dense.fp16, "bf16": gpu.tflops_dense.bf16,
        "fp32": gpu.tflops_dense.fp32, "tf32": gpu.tflops_dense.tf32}
    # the catalog's acceptance floors travel with the spec (they gate accept)
    assert spec_dict["gpu"]["acceptance"] == gpu.acceptance.model_dump(mode="json")
    assert spec_dict["gpu"]["acceptance"]["sustained_tflops"]["bf16"] > 0


def test_gpu_spec_for_model(lab_plan):
    spec, plan = lab_plan
    model, spec_dict = gpu_spec_for(spec, plan, model="hgx-h200-8gpu")
    assert model == "hgx-h200-8gpu" and spec_dict["gpu"]["count"] == 8


def test_gpu_spec_is_accepted_by_the_acceptance_suite(lab_plan):
    from clusterforge.verify.gpu.spec import AcceptanceSpec

    spec, plan = lab_plan
    _, spec_dict = gpu_spec_for(spec, plan, host="su01-r01-gpu01")
    parsed = AcceptanceSpec.from_dict(spec_dict)
    assert parsed.gpu_count == 2 and parsed.tflops_dense.bf16 > 0


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"host": "stor-001"}, "no GPU server"),
    ({"host": "nope"}, "no GPU server"),
    ({"model": "nope"}, "no server model"),
])  # fmt: skip
def test_gpu_spec_for_unknown(lab_plan, kwargs, match):
    spec, plan = lab_plan
    with pytest.raises(LookupError, match=match):
        gpu_spec_for(spec, plan, **kwargs)


def test_accept_needs_host_or_model(app):
    assert invoke(app, "accept", LAB).exit_code == 2
    assert invoke(app, "accept", LAB, "--host", "su01-r01-gpu01", "--model", "hgx-h200-2gpu").exit_code == 2


def test_accept_unknown_host_is_a_usage_error(app):
    result = invoke(app, "accept", LAB, "--host", "nope")
    assert result.exit_code == 2 and "no GPU server" in result.output


def test_accept_without_torch_exits_3(app, monkeypatch, tmp_path):
    real = cli_accept.importlib.util.find_spec
    monkeypatch.setattr(cli_accept.importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    result = invoke(app, "accept", LAB, "--host", "su01-r01-gpu01", "--out", tmp_path / "acc")
    assert result.exit_code == 3
    assert "torch is not installed" in result.output and "Traceback" not in result.output


def test_accept_without_the_suite_exits_3(app, monkeypatch, tmp_path):
    monkeypatch.setattr(cli_accept, "_accept_main", lambda: (None, "the GPU acceptance suite cannot be imported: x"))
    result = invoke(app, "accept", LAB, "--model", "hgx-h200-2gpu", "--out", tmp_path / "acc")
    assert result.exit_code == 3 and "cannot be imported" in result.output


def test_accept_hands_the_catalog_spec_and_options_over(app, monkeypatch, tmp_path):
    seen = {}

    def fake_accept_main(spec_dict, out_dir, **opts):
        seen.update(spec=spec_dict, out=out_dir, opts=opts)
        return 1

    monkeypatch.setattr(cli_accept, "_accept_main", lambda: (fake_accept_main, ""))
    result = invoke(app, "accept", LAB, "--host", "su01-r01-gpu01", "--out", tmp_path / "acc",
                    "--sustained-seconds", "7", "--no-scaling", "--sizes", "128M,256M", "--thresholds",
                    '{"matmul_fraction": 0.5}')
    assert result.exit_code == 1  # the suite's own verdict passes through
    assert seen["spec"]["gpu"]["count"] == 2 and seen["out"] == tmp_path / "acc"
    assert seen["opts"]["sustained_s"] == 7 and seen["opts"]["scaling_enabled"] is False
    assert seen["opts"]["sizes"] == [128 * 2**20, 256 * 2**20]
    assert seen["opts"]["thresholds"] == {"matmul_fraction": 0.5}


def test_verify_local_needs_one_host(app):
    result = invoke(app, "verify", LAB, "--target", "local")
    assert result.exit_code == 2 and "--host" in result.output


def test_verify_unknown_check_is_a_usage_error(app):
    assert invoke(app, "verify", LAB, "--target", "local", "--host", "su01-r01-gpu01", "-k", "bogus").exit_code == 2


def test_verify_unknown_host_is_a_usage_error(app):
    assert invoke(app, "verify", LAB, "--host", "nope").exit_code == 2


def test_verify_local_fails_on_this_machine_and_writes_json(app, tmp_path):
    """This machine is not su01-r01-gpu01 (no mgmt0): verify must say so with exit 1."""
    report = tmp_path / "verify.json"
    result = invoke(app, "verify", LAB, "--target", "local", "--host", "su01-r01-gpu01", "-k", "network",
                    "--json", report)
    assert result.exit_code == 1, result.output
    assert "FAIL su01-r01-gpu01 network::test_interface_exists[su01-r01-gpu01/mgmt0]" in result.output
    data = json.loads(report.read_text())
    assert data["hosts"]["su01-r01-gpu01"]["failed"] > 0


def test_verify_with_a_missing_ssh_config_exits_3(app, tmp_path):
    result = invoke(app, "verify", LAB, "--target", "ssh", "--ssh-config", tmp_path / "missing")
    assert result.exit_code == 3 and "does not exist" in result.output


def test_throughput_table_lists_each_tier_against_its_declaration():
    from rich.console import Console

    from clusterforge.verify.runner import aggregate

    records = [
        {"host": "h1", "test": "tiers::test_tier_throughput[h1//mnt/hot]", "outcome": "failed", "message": "slow",
         "figures": {"tier": "hot", "throughput_mbps": 9.6, "expected_mbps": 40.0}},
        {"host": "h1", "test": "tiers::test_tier_throughput[h1//mnt/cold]", "outcome": "passed", "message": "",
         "figures": {"tier": "cold", "throughput_mbps": 181.0, "expected_mbps": None}},
        {"host": "h1", "test": "network::test_interface_up[h1/bond0]", "outcome": "passed", "message": ""},
    ]
    table = _tables.throughput_table(aggregate(records, ["h1"]))
    console = Console(width=200, record=True)
    console.print(table)
    lines = [" ".join(line.replace("│", " ").split()) for line in console.export_text().splitlines()]
    assert "h1 hot 10 >= 40 failed" in lines and "h1 cold 181 - passed" in lines
    assert _tables.throughput_table(aggregate(records[2:], ["h1"])) is None
