"""A node leaves the live schedulers before a change and comes back after its health gate, through each
NodeControl that manages it: drained in the registry's order, resumed in the reverse order (the last
scheduler it left is the first it rejoins), so a scheduler that cannot take the node back leaves it held
in the ones it left before. Progress lines name the scheduler: ``slurm: su01-r01-gpu01: drained (...)``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from clusterforge.schedulers.driver import NodeControl, Say

__all__ = ["ResumeFailed", "drain_nodes", "rejoin_node", "resume_nodes"]


class ResumeFailed(RuntimeError):
    def __init__(self, scheduler: str, node: str, why: str) -> None:
        self.scheduler, self.node = scheduler, node
        super().__init__(why)


def _prefixed(control: NodeControl, say: Say) -> Say:
    return lambda line: say(f"{control.scheduler}: {line}")


def drain_nodes(controls: Sequence[NodeControl], nodes: Iterable[str], reason: str, timeout_s: float,
                say: Say) -> None:
    """Each scheduler drains its nodes among `nodes`, one scheduler after the other. Raises DrainRefused."""
    nodes = tuple(nodes)
    for control in controls:
        for node in (n for n in nodes if control.manages(n)):
            drained = control.drain(node, reason, timeout_s, _prefixed(control, say))
            say(f"{control.scheduler}: {node}: drained ({drained.summary})")


def rejoin_node(controls: Sequence[NodeControl], node: str, rendered: Path, scratch: Path, say: Say) -> list[str]:
    """A replaced machine gets each scheduler's own parts back; the problems, none when done. Each scheduler
    has its own private directory under `scratch`."""
    problems = []
    for control in (c for c in controls if c.manages(node)):
        problem = control.rejoin(node, rendered, scratch / f"{control.scheduler}-runner", _prefixed(control, say))
        if problem is not None:
            problems.append(problem)
    return problems


def resume_nodes(controls: Sequence[NodeControl], nodes: Iterable[str], say: Say) -> None:
    """Each scheduler takes its nodes back, in the reverse order. Raises ResumeFailed at the first that
    cannot (the node stays held there and in the schedulers not yet resumed)."""
    nodes = tuple(nodes)
    for control in reversed(controls):
        for node in (n for n in nodes if control.manages(n)):
            try:
                state = control.resume(node)
            except RuntimeError as exc:
                raise ResumeFailed(control.scheduler, node, f"{control.scheduler}: {exc}") from None
            say(f"{control.scheduler}: {node}: {state}")
