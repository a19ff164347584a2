"""The remediation journal: every decision and action, one JSON object a line, appended and never
rewritten, under the stack's state directory (``<state>/stacks/<stack>/remediation.jsonl``).

Each entry says when (``at``, and ``t`` in seconds since the epoch), which run and who ran it, the event,
the failure domain and its nodes, the action, why, the evidence and the result. ``replay`` folds the
entries into each node's state, so a run killed halfway leaves the state the next run continues from:
a node drained and never resumed is still out; a repair that was recorded counts as tried (the next one
climbs the ladder); a drain with no repair after it is repaired at the same rung.

Events: ``decided``, ``held``, ``drained``, ``repaired`` (result ok or the failure), ``checked``,
``resumed``, ``kept-out`` (re-image or RMA: waits for the operator), ``failed`` (a step broke; the node
stays as the entries before say).
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import getpass
import json
import os
import socket
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from clusterforge import paths
from clusterforge.health.evidence import Action

__all__ = ["Journal", "JournalError", "NodeState", "journal_path", "replay"]

FILE_NAME = "remediation.jsonl"


class JournalError(RuntimeError):
    """The journal cannot be read or written (a line that is not JSON, another run holds it)."""


@dataclass(frozen=True, slots=True)
class NodeState:
    out: bool = False  # drained by remediate and not resumed
    repairs: tuple[Action, ...] = ()  # repairs tried since the node went out
    last_repair_t: float | None = None  # when a repair or a resume last touched the node
    awaiting: Action | None = None  # reimage or rma: held out for the operator

    @property
    def last_repair(self) -> Action | None:
        return self.repairs[-1] if self.repairs else None


def replay(entries: Iterable[Mapping[str, Any]]) -> dict[str, NodeState]:
    """Each node's state after `entries`, in order; pure."""
    states: dict[str, NodeState] = {}
    for entry in entries:
        event, t = entry.get("event"), entry.get("t")
        t = float(t) if isinstance(t, (int, float)) else None
        nodes = [n for n in entry.get("nodes") or () if isinstance(n, str)]
        targets = [n for n in entry.get("targets") or nodes if isinstance(n, str)]
        try:
            action = Action(entry.get("action", "none"))
        except ValueError:
            action = Action.none
        if event == "drained":
            for node in nodes:
                state = states.get(node, NodeState())
                states[node] = state if state.out else NodeState(True, (), state.last_repair_t)
        elif event == "repaired":
            for node in targets:
                state = states.get(node, NodeState(True))
                states[node] = replace(state, repairs=(*state.repairs, action), last_repair_t=t)
        elif event == "kept-out":
            for node in targets:
                states[node] = replace(states.get(node, NodeState(True)), out=True, awaiting=action)
        elif event == "resumed":
            for node in nodes:
                states[node] = NodeState(False, (), t)
    return states


def journal_path(stack: str, state_dir: Path | None = None) -> Path:
    return (state_dir or paths.state_dir()) / "stacks" / stack / FILE_NAME


class Journal:
    """An append-only journal file, locked for one run at a time (`open`)."""

    def __init__(self, path: Path, who: str | None = None) -> None:
        self.path = path
        self.run = uuid.uuid4().hex[:12]
        self.who = who or f"{getpass.getuser()}@{socket.gethostname()}"
        self.torn: list[int] = []  # line numbers of entries a killed run left half-written

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        found = []
        self.torn = []
        for number, line in enumerate(self.path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as exc:
                if line.startswith("{") and not line.rstrip().endswith("}"):
                    self.torn.append(number)  # a run killed while writing this line: that entry never happened
                    continue
                raise JournalError(f"{self.path}:{number}:{exc.colno}: not JSON: {exc.msg}") from None
            if not isinstance(entry, dict):
                raise JournalError(f"{self.path}:{number}:1: not a JSON object")
            found.append(entry)
        return found

    def record(self, event: str, nodes: Iterable[str], **fields: Any) -> dict[str, Any]:
        now = _dt.datetime.now(_dt.UTC)
        entry = {"at": now.isoformat(timespec="seconds"), "t": round(now.timestamp(), 3), "run": self.run,
                 "who": self.who, "event": event, "nodes": list(nodes), **fields}
        torn = self.path.exists() and self.path.stat().st_size > 0 and not self.path.read_bytes().endswith(b"\n")
        with self.path.open("a") as handle:
            # a line left half-written by a killed run stays on its own line (`entries` skips it)
            handle.write(("\n" if torn else "") + json.dumps(entry, sort_keys=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return entry

    @contextmanager
    def open(self) -> Iterator[Journal]:
        """Hold the journal's lock for the run: a second run at the same time is refused, not interleaved."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with (self.path.parent / (FILE_NAME + ".lock")).open("a") as lock:
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise JournalError(f"another remediate run holds {self.path}") from None
            try:
                yield self
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
