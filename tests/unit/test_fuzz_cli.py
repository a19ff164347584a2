"""Fuzz target for the third input surface, command-line arguments: hostile option values and positionals for
every command that can run here without hosts, a lab or a network (validate, plan, render, report, diff, the
exports, sot's URL/token checks, the argument checks of roll/replace/provision/verify/up/drift, which refuse
before anything runs). Whatever the argv: exit 0-3, never an exception or a traceback, and nothing written
outside the directory the run was started in. Fixed budget (derandomized); CF_FUZZ_EXAMPLES=N for more."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, ROOT, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HOSTILE = ["", " ", ".", "..", "/", "//", "-", "--", "-o", "--help=x", "a" * 300, "\x00", "\n", "x\ny", "$(id)",
           "`id`", "{{ 7*7 }}", "../x", "../../x", "./out", "out/../..", "~", "~root", "*", "?", "[", "http://[",
           "http://x y", "ftp://x", "http://u:p@x", "http://x:0", "HEAD:", ":x", "HEAD:../../etc/passwd", "-rf",
           "..:x", "json", "table", "markdown", "bogus", "kernel", "driver,bogus", "su99", "su01-r01-gpu01",
           "sonic-vs=img", "bogus=img", "=", "日本", "\u202e", "lab.yaml", "missing.yaml", "/dev/zero", "/proc/self"]
# (argv prefix, option names that take a value, positionals after the prefix)
COMMANDS = [
    (["validate"], ["--format"], 1), (["plan"], ["--format"], 1), (["render"], ["--out", "--format"], 1),
    (["report"], ["--out", "--format"], 1), (["diff"], ["--format"], 2),
    (["export", "containerlab"], ["--out", "--image", "--format"], 1), (["export", "batfish"], ["--out"], 1),
    (["export", "device-types"], ["--out"], 1), (["sot", "push"], ["--url", "--token-env"], 1),
    (["sot", "pull"], ["--url", "--out"], 1), (["roll"], ["--check", "--tags", "--stack"], 1),
    (["replace"], ["--check", "--tags"], 2), (["provision"], ["--tags", "--limit"], 1),
    (["verify"], ["--check"], 1), (["up"], ["--stack"], 1), (["drift"], ["--stack"], 1),
    (["health"], ["--stack", "--node", "--alerts", "--target"], 1),
    (["remediate"], ["--stack", "--alerts", "--target", "--kubeconfig"], 1),
]
# With these every command above stops before a side effect: the bogus names are refused, or no lab, host,
# server or token is there to reach (the fuzz never passes --yes, so `up` only ever asks, and refuses).
SAFE_WHEN = {"roll": "--check", "replace": "--check", "provision": "--tags", "verify": "--check",
             "up": "--stack", "drift": "--stack", "health": "--stack", "remediate": "--stack"}
FRESH = "CF_FUZZ_EXAMPLES" in os.environ


@st.composite
def argv(draw) -> list[str]:
    prefix, options, positionals = draw(st.sampled_from(COMMANDS))
    value = st.one_of(st.sampled_from(HOSTILE), st.text(min_size=0, max_size=20))
    args = list(prefix)
    for _ in range(positionals):
        args.append(draw(st.one_of(st.just("lab.yaml"), value)))
    for option in draw(st.lists(st.sampled_from(options), max_size=3)):
        args += [option, draw(value)]
    guard = SAFE_WHEN.get(prefix[0])
    if guard is not None:  # the refusal this fuzz relies on to stay side-effect free
        args += [guard, "bogus/.." if guard == "--stack" else "bogus"]
    return args



@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """root/a/b/c is the working directory: '../x' and '../../x' stay inside root."""
    root = tmp_path_factory.mktemp("cli-fuzz")
    cwd = root / "a" / "b" / "c"
    cwd.mkdir(parents=True)
    shutil.copytree(ROOT / "inventory" / "catalog", cwd / "catalog")
    (cwd / "lab.yaml").write_text(LAB_TEXT)
    return root


@settings(max_examples=int(os.environ.get("CF_FUZZ_EXAMPLES", "60")), deadline=None, database=None,
          derandomize=not FRESH, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=argv())
def test_fuzz_cli_arguments(sandbox: Path, capsys, monkeypatch, args):
    cwd = sandbox / "a" / "b" / "c"
    monkeypatch.chdir(cwd)
    for name in ("CLUSTERFORGE_SOT_TOKEN", "NAUTOBOT_TOKEN", "CLUSTERFORGE_BACKEND_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLUSTERFORGE_STATE_DIR", str(sandbox / "state"))
    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(sandbox / "labhome"))
    before_parent = sorted(p.name for p in sandbox.parent.iterdir())
    outcome = run_cli(capsys, *args)  # an exception here fails the test with its traceback
    assert outcome.code in (0, 1, 2, 3), (args, outcome.code, outcome.err[-2000:])
    assert "Traceback" not in outcome.err + outcome.out, (args, outcome.err[-2000:])
    assert sorted(p.name for p in sandbox.parent.iterdir()) == before_parent, args
    assert not (sandbox / "state" / "stacks").exists() or not any((sandbox / "state" / "stacks").iterdir()), args
    assert not [p for p in sandbox.rglob(".clusterforge-stage-*")], args
