"""`clusterforge diff`: growth lists only additions and exits 0; renumbering is an error and exits 1.

Golden Markdown under golden/; regenerate with CF_REGEN_GOLDENS=1 pytest tests/report and review the diff.
The goldens cover the plan diff; rendered files (owned by every renderer) are checked by property instead.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from clusterforge.cli.report import register
from clusterforge.loading import load_and_plan
from clusterforge.plan.diff import diff_plans, to_dict, to_markdown
from clusterforge.render import render_all
from clusterforge.vocab import DeviceKind

ROOT = Path(__file__).parents[2]
GOLDEN = Path(__file__).parent / "golden"
SU2 = "  - {id: 2, server_model: hgx-h200-2gpu, nodes: 4, racks: 2}\n"
MGMT_OLD, MGMT_NEW = "supernet: 198.18.8.0/24", "supernet: 198.18.9.0/24"


def _lab_copy(directory: Path, edit=None) -> Path:
    """inventory/lab.yaml and its catalog under directory, with an optional edit of the YAML text."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "inventory" / "catalog", directory / "catalog", dirs_exist_ok=True)
    text = (ROOT / "inventory" / "lab.yaml").read_text()
    (directory / "lab.yaml").write_text(edit(text) if edit else text)
    return directory / "lab.yaml"


def _add_su(text: str) -> str:
    marker = "\nnetworks:"
    assert marker in text
    head, tail = text.split(marker, 1)
    return head.rstrip("\n") + "\n" + SU2 + "\n" + marker.lstrip("\n") + tail


def _renumber(text: str) -> str:
    assert MGMT_OLD in text
    return text.replace(MGMT_OLD, MGMT_NEW)


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def _check_golden(name: str, actual: str) -> None:
    golden = GOLDEN / name
    if os.environ.get("CF_REGEN_GOLDENS"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual)
    assert golden.is_file(), f"no golden {name}; run with CF_REGEN_GOLDENS=1"
    expected = golden.read_text()
    if expected != actual:
        patch = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                             f"golden/{name}", "actual"))
        pytest.fail(f"diff Markdown differs from the golden file:\n{patch}")


@pytest.fixture(scope="module")
def lab():
    spec, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    return spec, plan


@pytest.fixture(scope="module")
def grown(tmp_path_factory, lab):
    path = _lab_copy(tmp_path_factory.mktemp("grown"), _add_su)
    spec, plan, _ = load_and_plan(path)
    old_spec, old_plan = lab
    before, after = render_all(old_plan), render_all(plan)
    return path, diff_plans(old_plan, plan, before, after), before, after


@pytest.fixture(scope="module")
def renumbered(tmp_path_factory, lab):
    path = _lab_copy(tmp_path_factory.mktemp("renumbered"), _renumber)
    spec, plan, _ = load_and_plan(path)
    return path, diff_plans(lab[1], plan)


def test_adding_an_su_matches_golden(grown):
    _check_golden("lab-add-su2.md", to_markdown(grown[1], "inventory/lab.yaml", "lab.yaml + SU 2"))


def test_adding_an_su_adds_racks_devices_pdus_links_and_addresses(grown):
    diff = grown[1]
    assert len(diff.racks_added) == 3 and len(diff.devices_added) == 12 and len(diff.pdus_added) == 6
    assert diff.links_added and diff.addresses_added


@pytest.mark.parametrize("field", ["racks_removed", "racks_changed", "devices_removed", "devices_changed",
                                   "pdus_removed", "pdus_changed", "links_removed", "links_changed",
                                   "addresses_removed", "renumbered", "files_removed"])
def test_adding_an_su_removes_or_changes_nothing(grown, field: str):
    assert getattr(grown[1], field) == ()


# Control-node values that are totals of the cluster (Kueue's cohort and flavor GPUs, a team's ceiling and what it
# may borrow: the cluster's GPUs less its own, also as the devices of its DRA class (dra_devices, keyed by the
# class name); Prometheus's disk from the series estimate): growing the cluster changes them, and nothing else of a
# control node's host_vars may change or go.
CLUSTER_TOTALS = {"h200", "h200.gpu.clusterforge.io", "gpus", "ceiling_gpus", "borrowing_limit_gpus",
                  "retention_size_mb"}


def test_adding_an_su_leaves_existing_host_vars_byte_identical(grown, lab):
    """Every existing server's host_vars stay as they were; a control node's gain the new SU's nodes (it registers
    and labels every GPU node of the cluster) and change only the cluster's totals, never lose a line."""
    _, diff, before, after = grown
    control = {f"ansible/host_vars/{d.name}.yml" for d in lab[1].devices if d.kind == DeviceKind.CONTROL}
    assert control, "the lab declares a control node"
    changed = {f.path: f for f in diff.files_changed if f.path.startswith("ansible/host_vars/")}
    assert set(changed) <= control and changed
    for path in changed:
        lines = list(difflib.unified_diff(before[path].splitlines(), after[path].splitlines(), lineterm="", n=0))
        removed = [line[1:] for line in lines if line.startswith("-") and not line.startswith("---")]
        added = [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")]
        assert len(added) > len(removed), path
        keys = {line.strip().lstrip("- ").split(":")[0] for line in removed}
        assert keys <= CLUSTER_TOTALS, f"{path}: {sorted(keys - CLUSTER_TOTALS)} changed or went"


def test_cli_diff_adding_an_su_exits_0(grown):
    result = CliRunner().invoke(_app(), ["diff", str(ROOT / "inventory" / "lab.yaml"), str(grown[0])])
    assert result.exit_code == 0, result.output
    assert "**OK:** no existing device is renumbered or moved." in result.output
    assert "### Rendered files:" in result.output


def test_changing_the_management_pool_matches_golden(renumbered):
    _check_golden("lab-renumber-management.md",
                  to_markdown(renumbered[1], "inventory/lab.yaml", "lab.yaml with management 198.18.9.0/24"))


def test_changing_the_management_pool_flags_every_managed_host(renumbered, lab):
    expected = {d.name for d in lab[1].devices if any(i.plane == "management" and i.ip for i in d.interfaces)}
    assert expected
    assert set(renumbered[1].renumbered_devices) == expected


def test_cli_diff_renumbering_exits_1_with_an_error_per_address(renumbered):
    result = CliRunner().invoke(_app(), ["diff", str(ROOT / "inventory" / "lab.yaml"), str(renumbered[0])])
    assert result.exit_code == 1
    assert "ERROR:" in result.output
    assert "error: su01-r01-gpu01: interface mgmt0 renumbered 198.18.8.16/27 -> 198.18.9.16/27" in result.output


def test_cli_diff_json_is_complete(renumbered):
    result = CliRunner().invoke(_app(), ["diff", str(ROOT / "inventory" / "lab.yaml"), str(renumbered[0]),
                                         "--format", "json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False
    assert len(document["devices"]["renumbered"]) == len(renumbered[1].renumbered)
    assert "files" in document


def test_identical_plans_have_an_empty_diff(lab):
    diff = diff_plans(lab[1], lab[1], {"a": "x"}, {"a": "x"})
    assert diff.empty and diff.ok
    assert "No change" in to_markdown(diff)
    assert to_dict(diff)["ok"] is True


def test_cli_diff_reads_a_side_from_git(tmp_path: Path, monkeypatch):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    _lab_copy(repo / "inv")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "lab"], check=True)
    (repo / "inv" / "lab.yaml").write_text(_add_su((repo / "inv" / "lab.yaml").read_text()))
    monkeypatch.chdir(repo / "inv")
    result = CliRunner().invoke(_app(), ["diff", "HEAD:./lab.yaml", "lab.yaml"])
    assert result.exit_code == 0, result.output
    assert "Added: `su02-r01`, `su02-r02`, `su02-rn1`" in result.output


def test_cli_diff_names_git_sources_in_declaration_problems(tmp_path: Path, monkeypatch):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    _lab_copy(repo / "inv", lambda text: text.replace("rack_u: 42", "rack_u: 4200"))
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "lab"], check=True)
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(_app(), ["diff", "HEAD:inv/lab.yaml", str(ROOT / "inventory" / "lab.yaml")])
    assert result.exit_code == 1
    assert "HEAD:inv/lab.yaml:" in result.output and "site.facility.rack_u" in result.output


def test_no_stale_goldens():
    assert sorted(p.name for p in GOLDEN.iterdir()) == ["lab-add-su2.md", "lab-renumber-management.md"]
