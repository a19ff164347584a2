"""What the torchrun workers share: joining the NCCL group on this process's GPU, timing a step the
way nccl-tests does, and leaving. Callers pass ``torch`` and ``torch.distributed`` in, so importing
this module needs no PyTorch (the workers import it inside ``main``)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any


def join(torch: Any, dist: Any) -> tuple[int, Any, int, int]:
    """Set this process's GPU (``LOCAL_RANK``) and join the NCCL group on it:
    ``(local_rank, device, rank, world_size)``."""
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dev = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", device_id=dev)
    return local_rank, dev, dist.get_rank(), dist.get_world_size()


def time_per_call(torch: Any, dist: Any, local_rank: int, warmup: int, iters: int,
                  fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """``warmup`` calls of ``fn(*args)``, then a synchronize, a barrier and a synchronize on every
    rank, a host timer around ``iters`` calls and a closing synchronize: this rank's seconds per call,
    and what the last call returned."""
    for _ in range(warmup):
        fn(*args)
    torch.cuda.synchronize()
    dist.barrier(device_ids=[local_rank])
    torch.cuda.synchronize()
    last = None
    t0 = time.perf_counter()
    for _ in range(iters):
        last = fn(*args)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters, last


def leave(dist: Any, local_rank: int) -> None:
    """Wait for every rank, then leave the group."""
    dist.barrier(device_ids=[local_rank])
    dist.destroy_process_group()
