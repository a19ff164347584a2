"""scripts/setup.sh refuses arguments it does not know before it starts anything."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_unknown_argument_is_a_usage_error_and_starts_nothing(tmp_path):
    result = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "--bogus"], capture_output=True, text=True,
                            timeout=30, cwd=tmp_path)
    assert result.returncode == 2
    assert "usage: scripts/setup.sh [--no-lab | --up INVENTORY]" in result.stderr
    assert "setup-pulumi" not in result.stdout + result.stderr  # the engine build did not start


def test_up_needs_its_inventory(tmp_path):
    result = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "--up"], capture_output=True, text=True,
                            timeout=30, cwd=tmp_path)
    assert result.returncode != 0 and "--up needs the inventory" in result.stderr
