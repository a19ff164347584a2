"""Hostile command lines for the commands added this round (issue 47): `health`, `remediate`, `ib check`, `unlock`,
`verify` (--host, --check, --workers) and the --backend-url of the commands that take one (postgres:// and file://
URLs with hostile content). Each is a usage or environment error said in one line, exit 2 (or 1 for a declaration
that cannot be read), never a traceback, and nothing is written; benchmarks/hostile_corpus.py runs this table too.
Before it: a postgres:// URL with an unclosed `[` in its host ended in a traceback (preview, up, unlock), and
`unlock --backend-url file://../../etc` read the lock directory under /../etc and answered 0."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, run_cli, workdir

from clusterforge.pulumi.backend_url import BackendUrl, BackendUrlError

HOSTILE_BACKEND_URLS = [
    ("postgres-unclosed-ipv6", "postgres://ops:pw@[::1/pulumi", "is not a URL"),
    ("postgres-bare-bracket", "postgres://[", "is not a URL"),
    ("postgres-port-99999", "postgres://ops@db:99999/pulumi", "is not a URL"),
    ("postgres-port-word", "postgres://ops:pw@db:abc/pulumi", "is not a URL"),
    ("postgres-newline", "postgres://ops@db/pulumi\nsslmode=disable", "control character"),
    ("postgres-encoded-newline", "postgres://ops@db/pul%0Aumi", "control character"),
    ("file-relative", "file://../../etc", "a file URL names a directory of this machine"),
    ("file-host", "file://attacker.example/state", "a file URL names a directory of this machine"),
    ("file-encoded-newline", "file:///tmp/cf%0Astate", "control character"),
    ("file-empty", "file://", "no directory after file://"),
    ("s3", "s3://bucket", "expected one of"),
    ("no-scheme", "../../etc", "expected one of"),
]
BACKEND_COMMANDS = {"preview": ["preview", "lab.yaml", "--stack", "corpus"],
                    "up": ["up", "lab.yaml", "--stack", "corpus", "--yes"],
                    "unlock": ["unlock", "lab.yaml", "--yes"]}

# (id, argv run in a directory holding lab.yaml and bad.json, exit code, stderr fragment)
ARGVS = [
    ("health-stack-traversal", ["health", "lab.yaml", "--stack", "../../etc"], 2, "is not allowed"),
    ("health-node-traversal", ["health", "lab.yaml", "--stack", "x", "--node", "../x"], 2, "not a GPU server"),
    ("health-node-shell", ["health", "lab.yaml", "--stack", "x", "--node", "su01-r01-gpu01;id"], 2,
     "not a GPU server"),
    ("health-node-control", ["health", "lab.yaml", "--stack", "x", "--node", "ctl-01"], 2, "not a GPU server"),
    ("health-alerts-not-json", ["health", "lab.yaml", "--stack", "x", "--alerts", "bad.json"], 2, "not JSON"),
    ("health-alerts-missing", ["health", "lab.yaml", "--stack", "x", "--alerts", "nosuch.json"], 2,
     "No such file"),
    ("health-ssh-config-missing", ["health", "lab.yaml", "--stack", "x", "--ssh-config", "nosuch"], 2, "no such file"),
    ("remediate-stack-traversal", ["remediate", "lab.yaml", "--stack", "../../etc", "--yes"], 2, "is not allowed"),
    ("remediate-stack-newline", ["remediate", "lab.yaml", "--stack", "lab\nx", "--yes"], 2, "is not allowed"),
    ("remediate-alerts-not-json", ["remediate", "lab.yaml", "--stack", "x", "--alerts", "bad.json"], 2, "not JSON"),
    ("remediate-kubeconfig-missing", ["remediate", "lab.yaml", "--stack", "x", "--kubeconfig", "nosuch"], 2,
     "no such file"),
    ("remediate-no-stack", ["remediate", "lab.yaml", "--yes"], 2, "--stack"),
    ("ib-check-bogus-option", ["ib", "check", "lab.yaml", "--bogus"], 2, "No such option"),
    ("ib-check-missing-inventory", ["ib", "check", "nosuch.yaml"], 1, "cannot read file"),
    ("unlock-stack-traversal", ["unlock", "--stack", "../../etc", "--yes"], 2, "is not allowed"),
    ("unlock-stack-dash", ["unlock", "--stack", "-x", "--yes"], 2, ""),
    ("unlock-nothing", ["unlock"], 2, "give an INVENTORY or --stack"),
    ("verify-host-traversal", ["verify", "lab.yaml", "--host", "../../etc"], 2, "not a server of lab.yaml"),
    ("verify-host-shell", ["verify", "lab.yaml", "--host", "x;id"], 2, "not a server of lab.yaml"),
    ("verify-host-newline", ["verify", "lab.yaml", "--host", "su01-r01-gpu01\nctl-01"], 2, "not a server"),
    ("verify-check-traversal", ["verify", "lab.yaml", "--check", "../conftest"], 2, "unknown --check"),
    ("verify-check-pytest-expression", ["verify", "lab.yaml", "--check", "kernel or 1"], 2, "unknown --check"),
    ("verify-check-glob", ["verify", "lab.yaml", "--check", "*"], 2, "unknown --check"),
    ("verify-workers-negative", ["verify", "lab.yaml", "--workers", "-1"], 2, "--workers"),
    ("verify-workers-0", ["verify", "lab.yaml", "--workers", "0"], 2, "--workers"),
]


def argv_cases() -> list[tuple[str, list[str], int, str]]:
    """ARGVS and every hostile backend URL through every command that takes --backend-url."""
    cases = list(ARGVS)
    for name, url, message in HOSTILE_BACKEND_URLS:
        for command, argv in BACKEND_COMMANDS.items():
            cases.append((f"backend-{command}-{name}", [*argv, "--backend-url", url], 2, message))
    return cases


def setup_dir(directory: Path) -> Path:
    """``directory`` with lab.yaml beside its catalog and a truncated alerts file."""
    workdir(directory)
    (directory / "lab.yaml").write_text(LAB_TEXT)
    (directory / "bad.json").write_text('[{"labels": \n')
    return directory


@pytest.mark.parametrize(("argv", "code", "message"), [c[1:] for c in argv_cases()], ids=[c[0] for c in argv_cases()])
def test_a_hostile_command_line_is_refused_in_one_line(tmp_path: Path, capsys, monkeypatch, argv, code, message):
    directory = setup_dir(tmp_path / "case")
    monkeypatch.chdir(directory)
    monkeypatch.setenv("CLUSTERFORGE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path / "labhome"))
    monkeypatch.delenv("CLUSTERFORGE_BACKEND_URL", raising=False)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    outcome = run_cli(capsys, *argv)
    assert outcome.code == code, (outcome.code, outcome.err[-2000:])
    assert "Traceback" not in outcome.err + outcome.out
    assert message in outcome.err, outcome.err
    assert "pw" not in outcome.err.replace("****", "")  # a refused URL never shows its password
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written


@pytest.mark.parametrize(("url", "message"), [c[1:] for c in HOSTILE_BACKEND_URLS],
                         ids=[c[0] for c in HOSTILE_BACKEND_URLS])
def test_a_hostile_backend_url_is_a_backend_url_error(url: str, message: str) -> None:
    with pytest.raises(BackendUrlError, match=message.replace("(", r"\(")):
        BackendUrl.parse(url)


@pytest.mark.parametrize("url", ["file:///var/lib/clusterforge/pulumi", "file://localhost/var/lib/cf",
                                 "postgres://ops:s%40cret@db.example:5432/pulumi?sslmode=require",
                                 "postgres://ops@[2001:db8::1]:5432/pulumi"])
def test_a_plain_backend_url_still_parses(url: str) -> None:
    assert BackendUrl.parse(url).text == url
