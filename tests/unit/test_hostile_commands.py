"""One hostile case per layer (YAML, grammar, semantics) through every command: the same located line, exit 1,
nothing written."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, assert_refused, line_of, run_cli, workdir
from test_hostile_inputs import EDITS

EVERY_COMMAND = ["merge-key", "vrf-newline", "quota", "feed-rating"]  # one per layer (YAML, grammar, semantics)
# and the feed-vs-PDU rating (issue 13)


@pytest.mark.parametrize("case", [case for case in EDITS if case[0] in EVERY_COMMAND], ids=lambda case: case[0])
def test_every_command_refuses_with_the_location(tmp_path: Path, capsys, case):
    """validate, plan, render, report, diff (either side), lab, preview/up, drift, replace, doctor, export, verify,
    accept, kubeconfig: the same located line."""
    _, old, new, field, message, line = case
    path = workdir(tmp_path) / "hostile.yaml"
    path.write_text(LAB_TEXT.replace(old, new, 1))
    good = tmp_path / "good.yaml"
    good.write_text(LAB_TEXT)
    out, state = tmp_path / "out", tmp_path / "state"
    commands = [
        ["validate", path], ["plan", path], ["plan", path, "--format", "json"], ["render", path, "--out", out],
        ["report", path, "--out", out], ["diff", good, path], ["diff", path, good], ["lab", "up", path],
        ["preview", path, "--stack", "hostile", "--state-dir", state],
        ["up", path, "--stack", "hostile", "--yes", "--state-dir", state],
        ["verify", path, "--target", "lab"], ["accept", path, "--model", "hgx-h200-2gpu"],
        ["drift", path, "--stack", "hostile", "--state-dir", state], ["replace", path, "su01-r01-gpu01"],
        ["doctor", "--local", "--inventory", path, "--as", "su01-r01-gpu01"],
        ["export", "containerlab", path, "--out", out], ["export", "batfish", path, "--out", out],
        ["export", "device-types", path, "--out", out], ["kubeconfig", path, "--state-dir", state],
        ["health", path, "--stack", "hostile"], ["remediate", path, "--stack", "hostile", "--yes"],
    ]
    expected = line_of(LAB_TEXT, old) + (line or 0)
    for command in commands:
        outcome = run_cli(capsys, *map(str, command))
        assert_refused(outcome, path, expected, field, message)
    assert not out.exists() or not any(out.rglob("*"))



def _repo_with(tmp_path: Path, files: dict[str, bytes]) -> Path:
    repo = workdir(tmp_path / "repo")
    for name, data in files.items():
        (repo / name).write_bytes(data)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "hostile"], check=True)
    return repo


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_reads_hostile_git_blobs_under_the_same_limits(tmp_path: Path, capsys, monkeypatch):
    """REV:path sides: binary bytes, an alias bomb and a blob over the size limit are refused as REV:path:LINE,
    and a revision that looks like an option never reaches git."""
    from clusterforge.model.yamlsafe import MAX_BYTES

    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))
    repo = _repo_with(tmp_path, {
        "binary.yaml": LAB_TEXT.replace("owner: platform-team", "owner: \udcff").encode("utf-8", "surrogateescape"),
        "bomb.yaml": bomb.encode(), "huge.yaml": b"#" * (MAX_BYTES + 1), "good.yaml": LAB_TEXT.encode(),
    })
    monkeypatch.chdir(repo)
    cases = [("binary.yaml", line_of(LAB_TEXT, "owner: platform-team"), "not UTF-8 text"),
             ("bomb.yaml", 1, "anchor &a is not allowed"), ("huge.yaml", 1, f"the limit is {MAX_BYTES} bytes")]
    for name, line, message in cases:
        outcome = run_cli(capsys, "diff", f"HEAD:{name}", "good.yaml")
        assert_refused(outcome, f"HEAD:{name}", line, "", message)
        assert f"HEAD:{name}:{line}:" in outcome.err
    outcome = run_cli(capsys, "diff", "--", "--output=/tmp/x:good.yaml", "good.yaml")
    assert outcome.code == 2 and "is not a revision" in outcome.err
