"""What the monitoring tests share: the repository root and the upstream binaries they run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

__all__ = ["ROOT", "tool"]

ROOT = Path(__file__).resolve().parents[2]


def tool(name: str) -> str:
    """An upstream binary the checks need: scripts/setup.sh installs Debian's prometheus and
    prometheus-alertmanager; a check that cannot run fails."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed (scripts/setup.sh installs prometheus and prometheus-alertmanager)")
    return found
