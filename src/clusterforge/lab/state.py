"""``.lab/<lab>/state.json``: what a lab's ``up`` created, written atomically after every change.

``down`` reads it to know what to remove (and additionally scans for the lab's names, so a
lost or partial state file still leads to a clean machine).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from .util import lab_dir, write_json_atomic


def state_path(lab: str) -> Path:
    return lab_dir(lab) / "state.json"


class LabState:
    def __init__(self, lab: str, data: dict[str, Any] | None = None):
        self.lab = lab
        self.data: dict[str, Any] = data or {"lab": lab, "hosts": {}}
        self.data.setdefault("hosts", {})
        self._lock = threading.Lock()

    @classmethod
    def load(cls, lab: str) -> LabState:
        try:
            return cls(lab, json.loads(state_path(lab).read_text()))
        except (OSError, ValueError):
            return cls(lab)

    @property
    def exists(self) -> bool:
        return state_path(self.lab).exists()

    def save(self) -> None:
        with self._lock:
            write_json_atomic(state_path(self.lab), self.data)

    def update(self, **kw: Any) -> None:
        with self._lock:
            self.data.update(kw)
        self.save()

    def host(self, name: str) -> dict[str, Any]:
        with self._lock:
            return dict(self.data["hosts"].get(name, {}))

    def update_host(self, name: str, **kw: Any) -> None:
        with self._lock:
            self.data["hosts"].setdefault(name, {}).update(kw)
        self.save()
