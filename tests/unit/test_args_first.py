"""Arguments are checked before any side effect (issue 26): `roll --check bogus` and `replace --check bogus`
started provisioning before refusing the name. Each case here exits 2 with one error line and touches nothing:
no playbook, no re-image, no stack directory, no rendered tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_fixtures import ROOT, run_cli

LAB = str(ROOT / "inventory" / "lab.yaml")

CASES = [
    (["roll", LAB, "--check", "bogus"], "unknown --check bogus"),
    (["roll", LAB, "--tags", "driver,bogus"], "unknown --tags bogus"),
    (["replace", LAB, "su01-r01-gpu01", "--check", "bogus"], "unknown --check bogus"),
    (["replace", LAB, "su01-r01-gpu01", "--tags", "bogus"], "unknown --tags bogus"),
    (["provision", LAB, "--tags", "bogus"], "unknown --tags bogus"),
    (["provision", LAB, "--limit", "su99"], "not a server or group"),
    (["verify", LAB, "--check", "bogus"], "unknown --check bogus"),
    (["up", LAB, "--stack", "../../escape", "--yes"], "stack name '../../escape'"),
    (["preview", LAB, "--stack", ".hidden"], "stack name '.hidden'"),
    (["destroy", "--stack", "a/b", "--yes"], "stack name 'a/b'"),
    (["drift", LAB, "--stack", ".."], "stack name '..'"),
    (["render", LAB, "--out", ""], "empty output directory"),
]


@pytest.mark.parametrize(("argv", "message"), CASES, ids=[" ".join(c[0][:1] + c[0][2:])[:60] for c in CASES])
def test_refused_before_anything_runs(tmp_path: Path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLUSTERFORGE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path / "lab"))
    outcome = run_cli(capsys, *argv)
    assert outcome.code == 2, (outcome.code, outcome.err[-2000:])
    assert message in " ".join(outcome.err.split()), outcome.err
    assert "Traceback" not in outcome.err
    for started in ("provision ", "roll: ", "replace ", "re-imag"):
        assert started not in outcome.err, f"{started!r} ran before the refusal:\n{outcome.err}"
    assert not any(tmp_path.iterdir()), sorted(p.name for p in tmp_path.iterdir())
