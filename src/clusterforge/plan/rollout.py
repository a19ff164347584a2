"""Rolling-change batches: which servers change together, in what order (pure).

Each SU rolls on its own, SU after SU, in batches of its declared ``rollout_batch`` servers. Within
an SU the servers are taken rack-interleaved (the first server of every rack, then the second...)
so one batch never empties a rack while others stay whole: a rack's power and cooling, and the
rail leaves it hangs off, keep carrying most of their load while a batch is out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import zip_longest

__all__ = ["Batch", "rollout_batches"]


@dataclass(frozen=True)
class Batch:
    su: int
    index: int  # 1-based within its SU
    hosts: tuple[str, ...]


def rollout_batches(servers: Iterable[tuple[str, int, str]], batch_sizes: Mapping[int, int]) -> list[Batch]:
    """``servers`` as (name, SU id, rack); ``batch_sizes`` SU id -> servers per batch (default 1)."""
    by_su: dict[int, dict[str, list[str]]] = {}
    for name, su, rack in servers:
        by_su.setdefault(su, {}).setdefault(rack, []).append(name)
    batches = []
    for su in sorted(by_su):
        racks = [sorted(names) for _, names in sorted(by_su[su].items())]
        order = [name for row in zip_longest(*racks) for name in row if name is not None]
        size = max(1, int(batch_sizes.get(su, 1)))
        for start in range(0, len(order), size):
            batches.append(Batch(su, start // size + 1, tuple(order[start:start + size])))
    return batches
