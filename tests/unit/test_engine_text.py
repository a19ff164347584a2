"""A provider's failure in the engine's output is one line (issue 26: `up` after host drift ended in a
"VerificationFailed: 2 check(s) failed" traceback). The traceback here is a real one: raised by the
Verification provider's own failure path and formatted as the Pulumi dynamic provider hands it to the engine
(traceback.format_exc())."""

from __future__ import annotations

import traceback

import pytest

from clusterforge.ops.engine_text import fold_tracebacks
from clusterforge.pulumi.providers import verification
from clusterforge.pulumi.providers.verification import VerificationFailed, VerificationProvider, failure_line

COUNTS = {"passed": 40, "failed": 2, "skipped": 3, "failures": [
    "su01-r01-gpu01: test_nouveau_blacklisted[su01-r01-gpu01]: /etc/modprobe.d/blacklist-nouveau.conf is missing",
    "su01-r01-gpu01: test_nouveau_not_loaded[su01-r01-gpu01]: assert 'nouveau' not in lsmod"]}


def _engine_text(monkeypatch) -> list[str]:
    monkeypatch.setattr(verification, "_run", lambda props: COUNTS)
    monkeypatch.setattr(verification._lifeline, "watch", lambda: None)
    try:
        VerificationProvider().update("verify-su01", {}, {"group": "su01"})
    except VerificationFailed:
        formatted = traceback.format_exc()
    else:
        pytest.fail("no VerificationFailed")
    lines = formatted.rstrip("\n").splitlines()
    return ["Updating (lab):", "  pulumi-python:dynamic/clusterforge:Verification (verify-su01):",
            f"    error: {lines[0]}", *(f"    {line}" for line in lines[1:]), "Resources:", "    69 unchanged"]


def test_a_failed_verification_is_one_line(monkeypatch):
    engine = _engine_text(monkeypatch)
    assert any("Traceback (most recent call last):" in line for line in engine)
    shown = list(fold_tracebacks(engine))
    assert not [line for line in shown if "Traceback" in line or 'File "' in line]
    errors = [line for line in shown if "error:" in line]
    assert errors == ["    error: VerificationFailed: 2 check(s) failed on su01 (40 passed): su01-r01-gpu01 failed"
                      " test_nouveau_blacklisted[su01-r01-gpu01] (/etc/modprobe.d/blacklist-nouveau.conf is missing),"
                      " test_nouveau_not_loaded[su01-r01-gpu01] (assert 'nouveau' not in lsmod);"
                      " `clusterforge verify` shows each message"]
    assert shown[0] == "Updating (lab):" and shown[-2:] == ["Resources:", "    69 unchanged"]


def test_other_lines_pass_through_unchanged():
    lines = ["  + clusterforge:fabric:Switch su01-leaf-rail0 create", "drift: switch x: frr.conf edited", "",
             "error: update failed"]
    assert list(fold_tracebacks(lines)) == lines


def test_unreachable_hosts_are_named_in_the_line():
    line = failure_line("su01", {"passed": 0, "failed": 1, "failures": ["su01-r01-gpu02 unreachable: timed out"]})
    assert "su01-r01-gpu02 failed unreachable" in line and "\n" not in line, line
