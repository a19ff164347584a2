"""One check of a cluster layer that `verify` reads through its own client (the Kubernetes API, slurmctld):
its name, whether it passed, and what was seen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["LayerCheck"]


@dataclass(frozen=True)
class LayerCheck:
    name: str
    ok: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail}
