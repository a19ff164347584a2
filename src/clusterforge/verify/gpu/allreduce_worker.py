"""torchrun worker: DDP smoke test and all-reduce bus-bandwidth sweep.

    torchrun --nproc_per_node N -m clusterforge.verify.gpu.allreduce_worker \\
        --sizes 128M,256M,512M,1G,2G,4G --dtype bf16 --iters 20 --warmup 5 [--out result.json]

Smoke test: all_reduce(sum) of a tensor of ones must give the world size on every rank.
Sweep, per size (bytes per rank): warm-ups, then a barrier and a device synchronize on
every rank, a host timer around ``iters`` all-reduces and a closing synchronize (as
nccl-tests times); rank 0's time is the figure, mean and max over ranks are recorded.
busbw = algbw x 2 (n - 1) / n. After the timed loop the data are reset to ones and one
more all-reduce must give n everywhere. Rank 0 prints the result line and writes --out.
"""

from __future__ import annotations

import argparse
import json
import socket

from clusterforge.verify.gpu import metrics
from clusterforge.verify.gpu._dist import join, leave, time_per_call
from clusterforge.verify.gpu.launch import emit_result

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="clusterforge.verify.gpu.allreduce_worker")
    p.add_argument("--sizes", default="128M,256M,512M,1G,2G,4G", help="comma-separated bytes per rank")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch
    import torch.distributed as dist

    local_rank, dev, rank, world = join(torch, dist)

    # --- smoke: all_reduce of ones -> world size on every rank
    t = torch.ones(1, device=dev)
    dist.all_reduce(t)
    torch.cuda.synchronize()
    me = {
        "rank": rank,
        "local_rank": local_rank,
        "host": socket.gethostname(),
        "gpu": torch.cuda.get_device_name(local_rank),
        "value": float(t.item()),
    }
    ranks: list = [None] * world
    dist.all_gather_object(ranks, me)
    smoke = {"world_size": world, "ranks": ranks, "ok": all(r["value"] == world for r in ranks)}

    dtype = getattr(torch, DTYPES[args.dtype])
    elem = torch.tensor([], dtype=dtype).element_size()
    sweep = []
    if world > 1:
        for size in (metrics.parse_size(s) for s in args.sizes.split(",")):
            count = size // elem
            x = torch.rand(count, device=dev, dtype=torch.float32).to(dtype)
            per_op, _ = time_per_call(torch, dist, local_rank, args.warmup, args.iters, dist.all_reduce, x)
            times = torch.tensor([per_op], device=dev, dtype=torch.float64)
            all_times = [torch.zeros_like(times) for _ in range(world)]
            dist.all_gather(all_times, times)
            all_times = [float(a.item()) for a in all_times]
            x.fill_(1)
            dist.all_reduce(x)
            ok = torch.tensor([int(bool((x == world).all()))], device=dev)
            dist.all_reduce(ok, op=dist.ReduceOp.MIN)
            t_rank0 = all_times[0]
            sweep.append(
                {
                    "bytes": count * elem,
                    "count": count,
                    "time_us": round(t_rank0 * 1e6, 1),
                    "time_us_mean": round(sum(all_times) / world * 1e6, 1),
                    "time_us_max": round(max(all_times) * 1e6, 1),
                    "algbw_gbps": round(metrics.allreduce_algbw_gbps(count * elem, t_rank0), 2),
                    "busbw_gbps": round(metrics.allreduce_busbw_gbps(count * elem, t_rank0, world), 2),
                    "correct": bool(ok.item()),
                }
            )
            del x
            torch.cuda.empty_cache()

    result = {
        "method": "torch.distributed all_reduce (in place), NCCL; barrier + synchronize, host timer, rank 0",
        "world_size": world,
        "dtype": args.dtype,
        "iters": args.iters,
        "warmup": args.warmup,
        "torch": torch.__version__,
        "nccl": ".".join(str(v) for v in torch.cuda.nccl.version()),
        "smoke": smoke,
        "sweep": sweep,
    }
    if rank == 0:
        emit_result(result)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(result, f, indent=2)
    leave(dist, local_rank)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
