"""Which Pulumi engine clusterforge drives, and how an installed wheel gets one.

The engine is looked for, in this order:

1. ``<workspace>/tools/bin/pulumi``: a checkout's, built by ``scripts/setup-pulumi.sh``;
2. ``<state dir>/engine/bin/pulumi``: built by ``clusterforge engine install`` (the same recipe, shipped in
   the wheel: tools/pulumi-build, tools/launchers, scripts/setup-pulumi.sh; needs Go);
3. ``pulumi`` on PATH when it reports the pinned version, :data:`ENGINE_VERSION` (Pulumi's own installer
   at that version puts its Python language host and dynamic-provider plugin beside it).

Programs and dynamic providers run on the interpreter the CLI runs on (``PULUMI_PYTHON_CMD``, see
automation.Backend.env), whichever engine is used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from clusterforge import paths

__all__ = ["ENGINE_VERSION", "Engine", "EngineMissing", "candidates", "find", "install", "install_dir"]

# github.com/pulumi/pulumi/pkg/v3 in tools/pulumi-build/go.mod (a unit test keeps the two equal); the
# pulumi Python SDK pinned in pyproject.toml is the same release.
ENGINE_VERSION = "3.260.0"


class EngineMissing(RuntimeError):
    """No usable Pulumi engine; the message says where it was looked for and how to get one."""


@dataclass(frozen=True)
class Engine:
    root: Path  # holds bin/pulumi (the layout pulumi.automation.PulumiCommand(root=...) expects)
    origin: str  # "checkout", "state" or "PATH"

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    @property
    def binary(self) -> Path:
        return self.bin_dir / "pulumi"


def install_dir() -> Path:
    """Where `clusterforge engine install` builds the engine: ``<state dir>/engine`` (bin/ under it)."""
    return paths.state_dir() / "engine"


@cache
def _version(binary: str) -> str | None:
    try:
        done = subprocess.run([binary, "version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    first = done.stdout.strip().splitlines()[:1]
    return first[0].strip().removeprefix("v") if done.returncode == 0 and first else None


def _on_path() -> Path | None:
    found = shutil.which("pulumi")
    return Path(found).resolve() if found else None


def candidates() -> list[tuple[str, Path]]:
    """(origin, binary) in the order they are tried; the PATH one only when there is a pulumi on PATH."""
    found = [("checkout", paths.tools_dir() / "bin" / "pulumi"), ("state", install_dir() / "bin" / "pulumi")]
    on_path = _on_path()
    if on_path is not None:
        found.append(("PATH", on_path))
    return found


def find() -> Engine:
    """The engine to use; EngineMissing (with what to do) when there is none."""
    wrong: list[str] = []
    for origin, binary in candidates():
        if not binary.is_file() or not os.access(binary, os.X_OK):
            continue
        if origin == "PATH":
            got = _version(str(binary))
            if got != ENGINE_VERSION:
                wrong.append(f"{binary} reports {got or 'no version'}")
                continue
        return Engine(binary.parent.parent, origin)
    looked = ", ".join(str(b) for o, b in candidates() if o != "PATH")
    mismatch = f"; pulumi on PATH is not v{ENGINE_VERSION} ({'; '.join(wrong)})" if wrong else ""
    raise EngineMissing(
        f"no Pulumi engine v{ENGINE_VERSION}: looked at {looked} and PATH{mismatch}. Either put pulumi"
        f" v{ENGINE_VERSION} on PATH (with its language plugins beside it), or run `clusterforge engine install`"
        f" to build it into {install_dir() / 'bin'} (needs Go; a cold build takes several minutes)"
        " — in a checkout, scripts/setup-pulumi.sh builds it into tools/bin")


def install(say: Callable[[str], object], timeout_s: float = 3600) -> Engine:
    """Build (or link a matching PATH pulumi as) the engine into install_dir() with the shipped recipe."""
    script = paths.data_root() / "scripts" / "setup-pulumi.sh"
    if not script.is_file():
        raise EngineMissing(f"{script} is missing: this installation does not carry the engine's build recipe")
    target = install_dir() / "bin"
    target.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CLUSTERFORGE_ENGINE_BIN": str(target)}
    with subprocess.Popen(["bash", str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            say(line.rstrip("\n"))
        rc = proc.wait(timeout=timeout_s)
    if rc != 0:
        raise EngineMissing(f"building the engine into {target} failed (exit {rc}); see the lines above")
    _version.cache_clear()
    return Engine(target.parent, "state")
