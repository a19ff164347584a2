"""`clusterforge health` and `clusterforge remediate` on hostile input: a bad stack name, a node that is
not a GPU server, an alert file that is not JSON or not a list, a journal with a broken line, a policy
that says observe. Each is refused with a usage line or answered without a traceback, and no check ever
reaches the lab (the lab home is an empty directory): every node is UNKNOWN, never PASS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, run_cli, workdir


@pytest.fixture
def lab(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path / "no-lab"))
    monkeypatch.setenv("CLUSTERFORGE_STATE_DIR", str(tmp_path / "state"))
    path = workdir(tmp_path) / "lab.yaml"
    path.write_text(LAB_TEXT)
    return path


def _clean(outcome) -> None:
    assert "Traceback" not in outcome.err + outcome.out


@pytest.mark.parametrize(("args", "message"), [
    (["--stack", "../../etc"], "stack name '../../etc' is not allowed"),
    (["--stack", "lab", "--node", "su01-leaf01"], "not a GPU server"),
    (["--stack", "lab", "--node", "x" * 5000], "not a GPU server"),
    (["--stack", "lab", "--alerts", "/nonexistent/alerts.json"], "No such file"),
    (["--stack", "lab", "--target", "moon"], "moon"),
])
def test_health_refuses_bad_arguments(lab, capsys, args, message):
    outcome = run_cli(capsys, "health", str(lab), *args)
    _clean(outcome)
    assert outcome.code == 2 and message in outcome.err, outcome.err[-1000:]


@pytest.mark.parametrize(("text", "message"), [
    ('{"alerts": [', ":1:13: not JSON"),
    ('{"alerts": []}', "expected a JSON list of alerts"),
    ('[{"labels": ["node"]}]', "alert [0]: expected an object with a `labels` object"),
    ("\udcff", "can't decode byte 0xff"),
])
def test_health_refuses_a_bad_alert_file_by_name(lab, tmp_path, capsys, text, message):
    alerts = tmp_path / "alerts.json"
    alerts.write_bytes(text.encode("utf-8", "surrogateescape"))
    outcome = run_cli(capsys, "health", str(lab), "--stack", "lab", "--alerts", str(alerts))
    _clean(outcome)
    assert outcome.code == 2 and message in outcome.err and "alerts.json" in outcome.err, outcome.err[-1000:]


def test_health_without_a_lab_is_unknown_for_every_node_and_exits_3(lab, capsys):
    outcome = run_cli(capsys, "health", str(lab), "--stack", "lab", "--format", "json")
    _clean(outcome)
    document = json.loads(outcome.out)
    assert outcome.code == 3 and document["worst"] == "UNKNOWN" and document["nodes"]
    assert {n["verdict"] for n in document["nodes"]} == {"UNKNOWN"}
    assert {n["action"] for n in document["nodes"]} == {"none"}
    assert all("is the lab up?" in n["evidence"][0]["summary"] for n in document["nodes"])


def test_health_needs_no_stack(lab, capsys):
    """health reads nothing from a stack: a cluster that is not a stack of this machine is judged all the same."""
    outcome = run_cli(capsys, "health", str(lab), "--format", "json")
    _clean(outcome)
    assert outcome.code == 3 and json.loads(outcome.out)["worst"] == "UNKNOWN"


@pytest.mark.parametrize("command", ["health", "remediate"])
def test_a_missing_ssh_config_is_a_usage_error_before_any_host_is_asked(lab, tmp_path, capsys, command):
    outcome = run_cli(capsys, command, str(lab), "--stack", "lab", "--ssh-config", str(tmp_path / "nowhere"))
    _clean(outcome)
    assert outcome.code == 2 and "--ssh-config" in outcome.err and "no such file" in outcome.err, outcome.err
    assert not (tmp_path / "state" / "stacks" / "lab" / "remediation.jsonl").exists()


@pytest.mark.parametrize("name", ["nowhere", "."])
def test_remediate_refuses_a_kubeconfig_that_is_no_file(lab, tmp_path, capsys, name):
    outcome = run_cli(capsys, "remediate", str(lab), "--stack", "lab", "--yes", "--kubeconfig", str(tmp_path / name))
    _clean(outcome)
    assert outcome.code == 2 and "--kubeconfig" in outcome.err, outcome.err
    assert not (tmp_path / "state" / "stacks" / "lab" / "remediation.jsonl").exists()


@pytest.mark.parametrize("text", ["just text\n", "[1, 2]\n", "apiVersion: v1\nkind: Config\n", "\udcff"])
def test_a_kubeconfig_that_is_not_one_is_unreachable_for_usage(tmp_path, text):
    """The Kubernetes driver opens `--kubeconfig` only when a node changes (after the verdicts): a file that is no
    kubeconfig is then a usage error naming it (exit 2 through cli._nodes), never a traceback."""
    from clusterforge.schedulers.driver import Unreachable
    from clusterforge.schedulers.kubernetes.client import core_api

    path = tmp_path / "kubeconfig"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(Unreachable) as refused:
        core_api(path, None)
    assert refused.value.usage and str(refused.value).startswith(f"--kubeconfig {path}: ")


def test_remediate_observes_and_records_without_a_lab(lab, tmp_path, capsys):
    outcome = run_cli(capsys, "remediate", str(lab), "--stack", "lab", "--observe", "--format", "json")
    _clean(outcome)
    report = json.loads(outcome.out)
    assert report["mode"] == "observe" and report["decisions"]
    assert {d["kind"] for d in report["decisions"]} == {"hold"}  # UNKNOWN: nothing is known to repair
    journal = tmp_path / "state" / "stacks" / "lab" / "remediation.jsonl"
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    assert len(entries) == len(report["decisions"]) and all(e["observe"] is True for e in entries)
    assert outcome.code == 1


def test_remediate_yes_under_an_observe_policy_changes_nothing(lab, capsys):
    outcome = run_cli(capsys, "remediate", str(lab), "--stack", "lab", "--yes")
    _clean(outcome)
    assert "remediation.mode is observe" in outcome.err and "would act" in outcome.out


def test_remediate_refuses_a_broken_journal_with_its_line(lab, tmp_path, capsys):
    journal = tmp_path / "state" / "stacks" / "lab" / "remediation.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text('{"event": "drained", "nodes": ["su01-r01-gpu01"]}\n[1, 2]\n')
    outcome = run_cli(capsys, "remediate", str(lab), "--stack", "lab", "--observe")
    _clean(outcome)
    assert outcome.code == 3 and "remediation.jsonl:2:1: not a JSON object" in outcome.err
