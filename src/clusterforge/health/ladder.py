"""The verdict of a node and its action on the ladder, from its evidence: pure.

Verdict (NVIDIA Health Validation's NodeVerdict, without its INFO level): PASS when every check that
applies passed; WARN when one is degraded; CRITICAL when one failed; UNKNOWN when a check could not run
and none failed. UNKNOWN ranks above WARN: a node whose checks did not run cannot be vouched for. A node
with no evidence at all is UNKNOWN, never PASS.

Action: the highest rung any warn or fail evidence asks for, on the ladder
none < drain < reset_gpu < reboot < reimage < rma. An UNKNOWN node gets no action: nothing is known to
repair (remediate reports it and leaves it alone).

Climbing: a node that was repaired at one rung and fails again gets at least the next rung
(``climb``): drain (its configuration applied again) -> reset the GPUs -> reboot -> re-image -> RMA.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from clusterforge.health.evidence import Action, Evidence, Status

__all__ = ["NodeHealth", "Verdict", "climb", "judge", "serviceable", "worst"]


class Verdict(str, Enum):
    PASS = "PASS"
    WARN = "WARN"
    UNKNOWN = "UNKNOWN"
    CRITICAL = "CRITICAL"

    @property
    def rank(self) -> int:
        return tuple(Verdict).index(self)


_BY_STATUS = {Status.fail: Verdict.CRITICAL, Status.unknown: Verdict.UNKNOWN, Status.warn: Verdict.WARN}


@dataclass(frozen=True, slots=True)
class NodeHealth:
    name: str
    verdict: Verdict
    action: Action
    evidence: tuple[Evidence, ...]

    @property
    def simulated(self) -> bool:
        """Every evidence that makes the verdict came from a lab fault drill."""
        bad = [e for e in self.evidence if e.status in (Status.warn, Status.fail)]
        return bool(bad) and all(e.simulated for e in bad)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "verdict": self.verdict.value, "action": self.action.value,
                                "evidence": [e.to_dict() for e in self.evidence]}
        if self.simulated:
            data["simulated"] = True
        return data


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    return max(verdicts, key=lambda v: v.rank, default=Verdict.PASS)


def judge(name: str, evidence: Iterable[Evidence]) -> NodeHealth:
    items = tuple(evidence)
    if not items:
        return NodeHealth(name, Verdict.UNKNOWN, Action.none,
                          (Evidence(name, "health:none", Status.unknown, "no check ran on this node"),))
    verdict = worst(_BY_STATUS.get(e.status, Verdict.PASS) for e in items)
    if all(e.status is Status.skip for e in items):
        verdict = Verdict.UNKNOWN  # nothing applied: nothing vouches for the node
    acting = [e.action for e in items if e.status in (Status.warn, Status.fail)]
    action = Action.none if verdict is Verdict.UNKNOWN else max(acting, key=lambda a: a.rank, default=Action.none)
    return NodeHealth(name, verdict, action, items)


def serviceable(health: NodeHealth) -> bool:
    """The node may take work: PASS, or WARN with nothing to repair (an application's Xid, a watched
    corrected-error rate)."""
    return health.verdict is Verdict.PASS or (health.verdict is Verdict.WARN and health.action is Action.none)


def climb(health: NodeHealth, last_repair: Action | None) -> Action:
    """The action for a node that still asks for one after a repair at `last_repair` (None: not repaired in
    this episode): at least one rung above it. A node that asks for none (PASS, UNKNOWN, a WARN nothing
    repairs) gets none."""
    if last_repair is None or health.action is Action.none:
        return health.action
    return max(health.action, last_repair.above(), key=lambda a: a.rank)
