"""One piece of evidence about one node: which check saw it, how it came out, what it read, and the least
action on the ladder that answers it.

``status`` says how the check came out: ``ok``; ``warn`` (degraded, the node can keep working);
``fail`` (the node must not take work); ``unknown`` (the check could not run: no answer, a log it could
not read, a tool that broke); ``skip`` (the check does not apply here, and ``summary`` says why: no GPU
planned, a lab container with no GPU passed through). A skip is never a pass: it is reported as
such and leaves the verdict to the other evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["Action", "Evidence", "Status"]


class Status(str, Enum):
    ok = "ok"
    warn = "warn"
    fail = "fail"
    unknown = "unknown"
    skip = "skip"


class Action(str, Enum):
    """The action ladder, least first (NVIDIA Health Validation's drain -> reset_gpu -> restart_os ->
    service_required, with re-imaging between a reboot and a service call)."""

    none = "none"
    drain = "drain"
    reset_gpu = "reset_gpu"
    reboot = "reboot"
    reimage = "reimage"
    rma = "rma"

    @property
    def rank(self) -> int:
        return LADDER.index(self)

    def above(self) -> Action:
        """The next rung; rma is the top."""
        return LADDER[min(self.rank + 1, len(LADDER) - 1)]


LADDER: tuple[Action, ...] = tuple(Action)


@dataclass(frozen=True, slots=True)
class Evidence:
    node: str
    check: str  # source:name, e.g. doctor:data-links, kernel:xid, verify:roce, alert:NodeDown
    status: Status
    summary: str
    action: Action = Action.none  # the least action that answers this evidence
    detail: str = ""
    simulated: bool = False  # fed by the lab's fault injection, never by hardware

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"check": self.check, "status": self.status.value, "summary": self.summary,
                                "action": self.action.value}
        if self.detail:
            data["detail"] = self.detail
        if self.simulated:
            data["simulated"] = True
        return data
