"""The continuous remediation loop's systemd units (clusterforge.health.units, `remediate --write-units`):
checked by systemd's own parser (`systemd-analyze verify`), `--yes` only under the declaration's `mode: act`,
paths that need quoting quoted the way systemd.service reads them, values a unit cannot hold refused."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, run_cli, workdir

from clusterforge.health.units import Invocation, UnitError, remediation_units

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


def _verify(directory: Path) -> None:
    """systemd-analyze verify on every unit in `directory`: a parse warning is printed, not an exit code,
    so anything on stderr fails too."""
    assert SYSTEMD_ANALYZE, "systemd-analyze (the systemd package) is needed to check the units"
    files = sorted(str(p) for p in directory.iterdir())
    run = subprocess.run([SYSTEMD_ANALYZE, "verify", *files], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and not run.stderr.strip(), run.stderr


def _how(tmp_path: Path, **changes) -> Invocation:
    fields = {"python": Path(sys.executable), "inventory": tmp_path / "lab.yaml", "stack": "lab", "target": "lab",
              "workdir": tmp_path, "environment": {"PYTHONPATH": "/opt/cf/src", "SECRET_TOKEN": "never"}}
    return Invocation(**{**fields, **changes})


def _write(directory: Path, units: dict[str, str]) -> None:
    directory.mkdir()
    for name, text in units.items():
        (directory / name).write_text(text)


@pytest.mark.parametrize("act", [False, True])
def test_the_units_pass_systemds_parser_and_act_only_under_mode_act(tmp_path, act):
    units = remediation_units(_how(tmp_path, act=act, kubeconfig=tmp_path / "kube config"))
    assert sorted(units) == ["clusterforge-remediate-lab.service", "clusterforge-remediate-lab.timer"]
    _write(tmp_path / "units", units)
    _verify(tmp_path / "units")
    service = units["clusterforge-remediate-lab.service"]
    (start,) = [line for line in service.splitlines() if line.startswith("ExecStart=")]
    assert start.endswith(" --yes") is act, start
    assert f'--kubeconfig "{tmp_path}/kube config"' in start
    assert 'Environment="PYTHONPATH=/opt/cf/src"' in service and "SECRET_TOKEN" not in service
    timer = units["clusterforge-remediate-lab.timer"]
    assert "OnUnitInactiveSec=300" in timer and "Unit=clusterforge-remediate-lab.service" in timer


def test_specifiers_and_quotes_stay_literal(tmp_path):
    odd = tmp_path / 'a%n $HOME "q"'
    units = remediation_units(_how(tmp_path, inventory=odd / "lab.yaml"))
    start = next(line for line in units["clusterforge-remediate-lab.service"].splitlines()
                 if line.startswith("ExecStart="))
    assert f'"{tmp_path}/a%%n $$HOME \\"q\\"/lab.yaml"' in start, start
    _write(tmp_path / "units", units)
    _verify(tmp_path / "units")


@pytest.mark.parametrize(("changes", "message"), [
    ({"stack": "../etc"}, "cannot name a unit"),
    ({"inventory": Path("/srv/a\nExecStartPre=/bin/rm")}, "control character"),
    ({"environment": {"PYTHONPATH": "/x\n[Install]"}}, "control character"),
    ({"interval_s": 5}, "between 60 s and a day"),
])
def test_values_a_unit_cannot_hold_are_refused(tmp_path, changes, message):
    with pytest.raises(UnitError, match=message):
        remediation_units(_how(tmp_path, **changes))


def test_write_units_follows_the_declarations_mode_and_runs_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path / "no-lab"))
    monkeypatch.setenv("CLUSTERFORGE_STATE_DIR", str(tmp_path / "state"))
    directory = workdir(tmp_path)
    observe, act = directory / "lab.yaml", directory / "act.yaml"
    observe.write_text(LAB_TEXT)
    act.write_text(LAB_TEXT + "\nremediation: {mode: act}\n")
    for path, yes in ((observe, False), (act, True)):
        units = tmp_path / f"units-{path.stem}"
        outcome = run_cli(capsys, "remediate", str(path), "--stack", "lab", "--write-units", str(units),
                          "--every", "120")
        assert outcome.code == 0, outcome.err[-2000:]
        service = (units / "clusterforge-remediate-lab.service").read_text()
        (start,) = [line for line in service.splitlines() if line.startswith("ExecStart=")]
        assert start.endswith(" --yes") is yes, start
        assert f'Environment="CLUSTERFORGE_STATE_DIR={tmp_path / "state"}"' in service
        assert "OnUnitInactiveSec=120" in (units / "clusterforge-remediate-lab.timer").read_text()
        _verify(units)
    assert not (tmp_path / "state" / "stacks").exists()  # nothing ran: no journal
    refused = run_cli(capsys, "remediate", str(observe), "--stack", "lab", "--write-units", str(observe))
    assert refused.code == 2 and "not a directory" in refused.err
