"""A rolling change (driver/CUDA) in batches, each verified before the next.

For every batch: drain its nodes in each scheduler the run reaches, run the site playbook on the batch alone,
run the host checks on it (the health gate), resume the nodes. A batch that fails stops the roll: its failing
hosts are named, they stay drained for the operator, and the later batches are not touched.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterforge.plan import Plan
from clusterforge.plan.rollout import Batch
from clusterforge.schedulers import NodeControl
from clusterforge.targets import Reach

__all__ = ["DRAIN_TIMEOUT_S", "RollOutcome", "roll_batches"]

DRAIN_TIMEOUT_S = 600.0


@dataclass
class RollOutcome:
    """What a roll did: the batches' report entries, and where it stopped (``failed``, by host) if it did."""

    batches: list[dict[str, Any]] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    stopped_at: str | None = None  # the failing batch's label
    failed: dict[str, str] = field(default_factory=dict)
    untouched: list[str] = field(default_factory=list)  # hosts of the later batches

    @property
    def ok(self) -> bool:
        return self.stopped_at is None

    def report(self) -> dict[str, Any]:
        """The JSON document `clusterforge roll --format json` prints."""
        if self.ok:
            return {"batches": self.batches, "ok": True}
        return {"batches": self.batches, "ok": False, "untouched": self.untouched}


def _failed_checks(gate: Any) -> dict[str, str]:
    failed = {h: "; ".join([*([f"unreachable: {r.unreachable}"] if r.unreachable else []),
                            *(f"{f['test']}: {f['message']}" for f in r.failures)])
              for h, r in gate.per_host.items() if r.failed}
    return failed or {"(run)": "; ".join(gate.errors)}


def _one_batch(number: int, batch: Batch, rendered: Path, runner: Path, controls: tuple[NodeControl, ...],
               where: Reach, ssh_config: Path | None, tags: Sequence[str], checks: Sequence[str],
               say: Callable[[str], Any]) -> tuple[dict[str, str], int]:
    """Drain, provision, check and resume one batch; (failed hosts and why, checks passed)."""
    from clusterforge.provision import run_site
    from clusterforge.schedulers import DrainRefused, ResumeFailed, drain_nodes, resume_nodes
    from clusterforge.verify.runner import VerifyError, run_checks

    try:
        drain_nodes(controls, batch.hosts, f"clusterforge roll batch {number}", DRAIN_TIMEOUT_S, say=say)
    except DrainRefused as exc:
        return {exc.node: f"drain: {exc}"}, 0
    result = run_site(rendered / "ansible" / "inventory.yml", runner, limit=list(batch.hosts), tags=list(tags),
                      extravars={"cf_lab": True} if where.lab else None, ssh_config=ssh_config,
                      progress=lambda line: say(f"provision {line}"))
    if not result.ok:
        return ({**result.failed_hosts, **{h: f"unreachable: {m}" for h, m in result.unreachable_messages.items()}}
                or {h: f"ansible-runner {result.status}" for h in batch.hosts}), 0
    try:
        gate = run_checks(rendered, where.name, list(batch.hosts), ssh_config, None, concerns=list(checks))
    except VerifyError as exc:
        return {h: f"checks could not run: {exc}" for h in batch.hosts}, 0
    if not gate.ok:
        return _failed_checks(gate), 0
    try:
        resume_nodes(controls, batch.hosts, say=say)
    except ResumeFailed as exc:
        return {exc.node: str(exc)}, 0
    return {}, gate.passed


def roll_batches(plan: Plan, batches: Sequence[Batch], controls: tuple[NodeControl, ...], where: Reach,
                 ssh_config: Path | None, tags: Sequence[str], checks: Sequence[str],
                 say: Callable[[str], Any]) -> RollOutcome:
    """Roll ``batches`` in order, stopping at the first that fails; progress lines go to ``say``."""
    from clusterforge.render import render_all, write_tree

    outcome = RollOutcome()
    with tempfile.TemporaryDirectory(prefix="cf-roll-") as tmp:
        rendered = Path(tmp) / "rendered"
        write_tree(rendered, render_all(plan))
        for number, batch in enumerate(batches, 1):
            label = f"batch {number}/{len(batches)} (SU {batch.su} #{batch.index}: {', '.join(batch.hosts)})"
            say(f"roll: {label}: starting")
            failed, passed = _one_batch(number, batch, rendered, Path(tmp) / "runner", controls, where, ssh_config,
                                        tags, checks, say)
            entry = {"su": batch.su, "index": batch.index, "hosts": list(batch.hosts)}
            if failed:
                outcome.batches.append({**entry, "healthy": False, "failed": failed})
                outcome.stopped_at, outcome.failed = label, failed
                outcome.untouched = [h for b in batches[number:] for h in b.hosts]
                return outcome
            outcome.done += batch.hosts
            outcome.batches.append({**entry, "healthy": True, "checks_passed": passed})
            say(f"roll: {label}: healthy ({passed} checks passed)")
    return outcome
