"""One check of a cluster layer that `verify` reads through its own client (the Kubernetes API, slurmctld):
its name, whether it passed, and what was seen.

A check that held only because the lab stands in for the part it needs (the GPUs cf-sim-gpu-plugin advertises,
Slurm's placeholder GPU files) names that part in ``simulated``: its outcome is SIMULATED, never passed. ``ok``
stays "not failed" (a SIMULATED check fails nothing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["LayerCheck"]


@dataclass(frozen=True)
class LayerCheck:
    name: str
    ok: bool
    detail: str
    simulated: str = ""  # what the lab simulated for this check; empty where nothing was

    @property
    def outcome(self) -> str:
        """failed, simulated or passed."""
        if not self.ok:
            return "failed"
        return "simulated" if self.simulated else "passed"

    def to_dict(self) -> dict[str, Any]:
        data = {"check": self.name, "ok": self.ok, "outcome": self.outcome, "detail": self.detail}
        if self.simulated:
            data["simulated"] = self.simulated
        return data
