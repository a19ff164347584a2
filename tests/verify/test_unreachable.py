"""A host that does not answer is reported once, with the reason, by the runner and the CLI.

Real SSH: the ssh_config sends every host to a local port nothing listens on (connection refused).
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from clusterforge.cli import verify as cli_verify
from clusterforge.verify.runner import run_checks

HOST = "su01-r01-gpu01"
DECLARATION = Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: connecting is refused


@pytest.fixture
def refusing_ssh_config(tmp_path: Path) -> Path:
    path = tmp_path / "ssh_config"
    path.write_text(f"Host *\n  HostName 127.0.0.1\n  Port {_closed_port()}\n  BatchMode yes\n"
                    f"  StrictHostKeyChecking yes\n  UserKnownHostsFile {tmp_path / 'known_hosts'}\n"
                    "  ConnectTimeout 5\n")
    return path


def test_runner_reports_one_unreachable_line(rendered_lab, refusing_ssh_config):
    result = run_checks(rendered_lab, "ssh", [HOST], refusing_ssh_config, None, concerns=["kernel", "network"])
    assert list(result.unreachable) == [HOST]
    assert "Connection refused" in result.unreachable[HOST]
    assert result.failed == 1 and result.per_host[HOST].failures == []
    assert result.failures == [f"{HOST} unreachable: {result.unreachable[HOST]}"]
    # every check that needed the host was marked not reached; no other failure was recorded
    assert len([r for r in result.records if "unreachable" in r]) > 10
    assert not [r for r in result.records if r["outcome"] == "failed" and "unreachable" not in r]


def test_cli_prints_one_line_per_unreachable_host(refusing_ssh_config):
    app = typer.Typer()
    cli_verify.register(app)
    app.command("noop")(lambda: None)
    res = CliRunner().invoke(app, ["verify", str(DECLARATION), "--target", "ssh", "--host", HOST,
                                   "--ssh-config", str(refusing_ssh_config), "-k", "kernel", "-k", "network"])
    assert res.exit_code == 1, res.output
    lines = [line for line in res.output.splitlines() if HOST in line and "unreachable" in line]
    assert len(lines) == 1 and lines[0].startswith(f"host {HOST} unreachable: ") and "Connection refused" in lines[0]
    assert "Traceback" not in res.output and "RuntimeError" not in res.output and "FAIL" not in res.output
