"""The engine's own per-command log (<PULUMI_HOME>/logs) is off unless CLUSTERFORGE_PULUMI_ENGINE_LOG=1."""

from __future__ import annotations

import os

from clusterforge.pulumi.automation import ENGINE_LOG_ENV, engine_log


def test_off_by_default_as_a_link_to_devnull(tmp_path) -> None:
    home = tmp_path / "pulumi-home"
    assert engine_log(home, {}) is False
    assert (home / "logs").is_symlink() and os.readlink(home / "logs") == os.devnull
    assert engine_log(home, {}) is False  # a second run leaves it as it is
    assert os.readlink(home / "logs") == os.devnull


def test_earlier_logs_are_kept_aside(tmp_path) -> None:
    home = tmp_path / "pulumi-home"
    (home / "logs").mkdir(parents=True)
    (home / "logs" / "pulumi-1.log").write_text("x")
    engine_log(home, {})
    assert (home / "logs.previous" / "pulumi-1.log").read_text() == "x"
    assert (home / "logs").is_symlink()


def test_kept_when_asked(tmp_path) -> None:
    home = tmp_path / "pulumi-home"
    engine_log(home, {})
    assert engine_log(home, {ENGINE_LOG_ENV: "1"}) is True
    assert not (home / "logs").exists()  # the engine makes its directory again
