"""cli/_console.PlainLines writes a line itself only where Rich would write it unchanged: each line below comes
out of PlainLines exactly as out of the Rich consoles the app prints through (cli/_common's out and err)."""

from __future__ import annotations

import io
import sys

import pytest

from clusterforge.cli._console import STDOUT_WIDTH, PlainLines, stderr_console, stdout_console

LINES = [
    "", "inventory/lab.yaml: ok — 4 servers, 8 GPUs, 8 racks, 24.03 kW", "trailing spaces   ", "   leading",
    "inventory/x.yaml:100:3: networks.data: value error", ":100: :smile: not an emoji", "[bold]no markup[/bold]",
    "tab\there", "carriage\rreturn", "bell\x07", "escape \x1b[31mred\x1b[0m", "two\nlines", "nbsp\u00a0x",
    "zero\u200bwidth", "wide 漢字 text", "combining e\u0301", "x" * 99, "x" * 100, "x" * 101, "x" * 199, "x" * 200,
    "x" * 201, "x" * 450, "word " * 60, "漢" * 100, "漢" * 101, "warning: " + "long sentence " * 30,
]


def _captured(monkeypatch: pytest.MonkeyPatch, write) -> tuple[str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", stderr)
    write()
    return stdout.getvalue(), stderr.getvalue()


@pytest.mark.parametrize("text", LINES)
def test_a_stderr_line_is_what_say_writes(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    rich = _captured(monkeypatch, lambda: stderr_console().print(text, markup=False, highlight=False, soft_wrap=True))
    plain = _captured(monkeypatch, lambda: PlainLines().err(text))
    assert plain == rich


@pytest.mark.parametrize("text", LINES)
def test_a_stdout_line_is_what_out_print_writes(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    rich = _captured(monkeypatch, lambda: stdout_console().print(text, markup=False, highlight=False))
    plain = _captured(monkeypatch, lambda: PlainLines().out(text))
    assert plain == rich


def test_the_stdout_console_of_a_pipe_is_full_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert stdout_console().width == STDOUT_WIDTH
