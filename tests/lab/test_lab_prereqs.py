"""The lab tests skip with a reason instead of failing where the lab cannot run."""

from __future__ import annotations

from clusterforge.lab import util


def test_reasons_when_not_root_and_tools_missing(monkeypatch):
    monkeypatch.setattr(util.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(util.shutil, "which", lambda tool: None if tool in ("debootstrap", "systemd-nspawn") else "/x")
    why = util.missing_prerequisites()
    assert "not root" in why
    assert "debootstrap not found" in why and "systemd-nspawn not found" in why


def test_skip_reason_names_what_is_missing():
    from lab_fixtures import skip_reason

    assert skip_reason([]) is None
    assert skip_reason(["not root", "debootstrap not found"]).endswith("here: not root, debootstrap not found")
