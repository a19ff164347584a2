"""Plans that cannot be built: each reason names where in the declaration to fix it."""

from __future__ import annotations

from collections.abc import Sequence

from clusterforge.model.cluster import Loc

__all__ = ["PlanError"]


class PlanError(Exception):
    def __init__(self, problems: Sequence[tuple[Loc, str]]):
        self.problems: list[tuple[Loc, str]] = list(problems)
        super().__init__("; ".join(message for _, message in problems))
