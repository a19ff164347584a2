"""`clusterforge render FILE --out DIR` runs without the typer app (cli/rendering.render_main): the same
stdout, stderr, exit status and files as the app's `render FILE --out DIR --format table`."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from clusterforge.cli.rendering import fast_argv

ROOT = Path(__file__).parents[2]
FILES = [
    "inventory/lab.yaml",
    "./inventory//lab.yaml",
    "no-such-file.yaml",
    "tests/data/bad/unknown-key.yaml",
    "tests/data/bad/impossible-power.yaml",
]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "clusterforge.cli", *args], capture_output=True, text=True, timeout=300, cwd=ROOT
    )


def digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("file", FILES)
def test_render_answers_as_the_app_does(file: str, tmp_path: Path) -> None:
    fast, app = tmp_path / "fast", tmp_path / "app"
    a = cli("render", file, "--out", str(fast))
    b = cli("render", file, "--out", str(app), "--format", "table")
    assert (a.returncode, a.stdout.replace(str(fast), "DIR"), a.stderr) == (
        b.returncode,
        b.stdout.replace(str(app), "DIR"),
        b.stderr,
    )
    assert a.returncode in (0, 1) and "Traceback" not in a.stderr
    assert digest(fast) == digest(app) if a.returncode == 0 else not fast.exists()


def test_a_refused_out_dir_answers_as_the_app_does(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("not a directory\n")
    a = cli("render", "inventory/lab.yaml", "-o", str(taken))
    b = cli("render", "inventory/lab.yaml", "-o", str(taken), "--format", "table")
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)
    assert a.returncode == 3 and taken.read_text() == "not a directory\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["render"],
        ["render", "a.yaml"],
        ["render", "a.yaml", "--out"],
        ["render", "a.yaml", "--out", ""],
        ["render", "a.yaml", "--out", "/"],
        ["render", "a.yaml", "--out="],
        ["render", "--out", "d", "a.yaml"],
        ["render", "a.yaml", "-o", "d", "--format", "json"],
        ["render", "a.yaml", "--help"],
        ["render", "-", "-o", "d"],
        ["render", "bad\udcff.yaml", "-o", "d"],
        ["validate", "a.yaml"],
        ["plan", "a.yaml", "-o", "d"],
    ],
)
def test_every_other_command_line_goes_to_the_app(argv: list[str]) -> None:
    assert fast_argv(argv) is None


def test_a_plain_render_takes_the_fast_path() -> None:
    for argv in (["render", "a.yaml", "--out", "d"], ["render", "a.yaml", "-o", "d"], ["render", "a.yaml", "--out=d"]):
        assert fast_argv(argv) == ("a.yaml", Path("d"), False)
        assert fast_argv([*argv, "--switches-only"]) == ("a.yaml", Path("d"), True)


@pytest.mark.parametrize(
    "argv",
    [
        ["render", "a.yaml", "--out", "--switches-only"],
        ["render", "a.yaml", "-o", "--switches-only"],
        ["render", "--switches-only", "a.yaml", "-o", "d"],
        ["render", "a.yaml", "--switches-only", "-o", "d"],
        ["render", "a.yaml", "-o", "d", "--switches-only", "--switches-only"],
        ["render", "--switches-only"],
    ],
)
def test_switches_only_elsewhere_goes_to_the_app(argv: list[str]) -> None:
    assert fast_argv(argv) is None


def test_switches_only_writes_the_switches_of_a_full_render(tmp_path: Path) -> None:
    """`--switches-only`: the app and the fast path write the same files, which are a full render's switches/;
    a full render's other entries in DIR stay."""
    full, fast, app = tmp_path / "full", tmp_path / "fast", tmp_path / "app"
    assert cli("render", "inventory/lab.yaml", "--out", str(full)).returncode == 0
    a = cli("render", "inventory/lab.yaml", "--out", str(fast), "--switches-only")
    b = cli("render", "inventory/lab.yaml", "--out", str(app), "--switches-only", "--format", "table")
    assert (a.returncode, a.stdout.replace(str(fast), "DIR"), a.stderr) == (
        b.returncode,
        b.stdout.replace(str(app), "DIR"),
        b.stderr,
    )
    switches = {path: sha for path, sha in digest(full).items() if path.startswith("switches/")}
    assert {path: sha for path, sha in digest(fast).items() if path != ".clusterforge-output"} == switches
    assert digest(fast) == digest(app)
    before = digest(full)
    assert cli("render", "inventory/lab.yaml", "--out", str(full), "--switches-only").returncode == 0
    assert digest(full) == before
