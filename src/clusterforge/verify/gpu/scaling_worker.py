"""torchrun worker: time a small real DDP training step (a transformer-style MLP stack).

    torchrun --nproc_per_node K -m clusterforge.verify.gpu.scaling_worker \\
        --tokens-per-gpu 8192 --max-world 8 --d-model 2048 --layers 8 --steps 20 --warmup 5

Model: ``layers`` pre-norm residual blocks ``x + W2 gelu(W1 layernorm(x))`` (d -> 4d -> d),
fp32 master weights, bf16 autocast, MSE loss on random targets, fused AdamW, DDP gradient
all-reduce overlapped with backward. Two phases in one launch:

- weak: fixed per-GPU batch of ``tokens_per_gpu`` tokens (global batch grows with K);
- strong: fixed global batch of ``tokens_per_gpu x max_world`` tokens split over K GPUs.

Per phase: warm-up steps, barrier + synchronize, host timer over ``steps`` steps, closing
synchronize; rank 0's time per step. The loss must stay finite.
"""

from __future__ import annotations

import argparse
from typing import Any

from clusterforge.verify.gpu._dist import join, leave, time_per_call
from clusterforge.verify.gpu.launch import emit_result


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="clusterforge.verify.gpu.scaling_worker")
    p.add_argument("--tokens-per-gpu", type=int, default=8192)
    p.add_argument("--max-world", type=int, default=None, help="GPU count the strong global batch is sized for")
    p.add_argument("--d-model", type=int, default=2048)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--phases", default="weak,strong")
    return p.parse_args(argv)


def build_model(torch, d: int, layers: int):
    nn: Any = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(d)
            self.up = nn.Linear(d, 4 * d)
            self.down = nn.Linear(4 * d, d)

        def forward(self, x):
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    return nn.Sequential(*[Block() for _ in range(layers)])


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    local_rank, dev, rank, world = join(torch, dist)
    max_world = args.max_world or world

    torch.manual_seed(1234)  # same initial weights on every rank (DDP also broadcasts rank 0's)
    model = build_model(torch, args.d_model, args.layers).to(dev)
    params = sum(p.numel() for p in model.parameters())
    ddp = DDP(model, device_ids=[local_rank], gradient_as_bucket_view=True)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-4, fused=True)
    gen = torch.Generator(device=dev)
    gen.manual_seed(4321 + rank)

    def step(x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = ddp(x)
        loss = torch.nn.functional.mse_loss(out.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    phases = {}
    for phase in args.phases.split(","):
        if phase == "weak":
            local_tokens = args.tokens_per_gpu
        elif phase == "strong":
            global_tokens = args.tokens_per_gpu * max_world
            if global_tokens % world:
                raise SystemExit(f"strong scaling: {global_tokens} tokens do not split over {world} GPUs")
            local_tokens = global_tokens // world
        else:
            raise SystemExit(f"unknown phase {phase!r}")
        x = torch.randn(local_tokens, args.d_model, device=dev, generator=gen)
        y = torch.randn(local_tokens, args.d_model, device=dev, generator=gen)
        step_s, loss = time_per_call(torch, dist, local_rank, args.warmup, args.steps, step, x, y)
        t = torch.tensor([step_s], device=dev, dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        finite = torch.tensor([int(bool(torch.isfinite(loss).item()))], device=dev)
        dist.all_reduce(finite, op=dist.ReduceOp.MIN)
        phases[phase] = {
            "tokens_per_gpu": local_tokens,
            "global_tokens": local_tokens * world,
            "step_s": step_s,
            "step_s_max_rank": float(t.item()),
            "tokens_per_s": local_tokens * world / step_s,
            "loss": float(loss.item()),
            "loss_finite": bool(finite.item()),
        }
        del x, y

    result = {
        "method": "DDP training step, bf16 autocast, fused AdamW; barrier + synchronize, host timer, rank 0",
        "world_size": world,
        "max_world": max_world,
        "d_model": args.d_model,
        "layers": args.layers,
        "params": params,
        "steps": args.steps,
        "warmup": args.warmup,
        "phases": phases,
    }
    if rank == 0:
        emit_result(result)
    leave(dist, local_rank)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
