"""Make this directory's helper module (slurm_daemons) importable by its tests."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
