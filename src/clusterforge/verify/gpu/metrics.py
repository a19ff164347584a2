"""Pure formulas shared by the measuring code, the evaluation and the tests.

Units: TFLOPS and GB/s are decimal (1e12 FLOP/s, 1e9 B/s); message sizes are bytes.
"""

from __future__ import annotations

MIB = 1 << 20
GIB = 1 << 30


def matmul_flops(n: int, m: int | None = None, k: int | None = None) -> int:
    """Floating-point operations of one (n x k) @ (k x m) product: 2 n m k."""
    m = n if m is None else m
    k = n if k is None else k
    return 2 * n * m * k


def tflops(n: int, iters: int, seconds: float) -> float:
    """TFLOPS of ``iters`` square n^3 products in ``seconds`` (the documents' 2 n^3 iters / s)."""
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    return matmul_flops(n) * iters / seconds / 1e12


def copy_bandwidth_tbps(nbytes: int, iters: int, seconds: float) -> float:
    """Device-to-device copy bandwidth in TB/s, counting every byte read and every byte written."""
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    return 2 * nbytes * iters / seconds / 1e12


def allreduce_algbw_gbps(nbytes: int, seconds_per_op: float) -> float:
    """Algorithm bandwidth of one all-reduce of ``nbytes`` per rank: size / time (GB/s)."""
    if seconds_per_op <= 0:
        raise ValueError(f"seconds_per_op must be positive, got {seconds_per_op}")
    return nbytes / seconds_per_op / 1e9


def allreduce_bus_factor(world_size: int) -> float:
    """nccl-tests' bus-bandwidth factor for all-reduce: 2 (n - 1) / n."""
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    return 2 * (world_size - 1) / world_size


def allreduce_busbw_gbps(nbytes: int, seconds_per_op: float, world_size: int) -> float:
    """Bus bandwidth of an all-reduce as nccl-tests reports it: algbw x 2 (n - 1) / n."""
    return allreduce_algbw_gbps(nbytes, seconds_per_op) * allreduce_bus_factor(world_size)


def weak_scaling_efficiency(throughput_1: float, throughput_n: float, n: int) -> float:
    """Weak scaling (fixed per-GPU batch): throughput_N / (N x throughput_1)."""
    if throughput_1 <= 0 or n < 1:
        raise ValueError("throughput_1 must be positive and n >= 1")
    return throughput_n / (n * throughput_1)


def strong_scaling_efficiency(t_1: float, t_n: float, n: int) -> float:
    """Strong scaling (fixed global batch), the documents' formula: T1 / (N x TN)."""
    if t_n <= 0 or n < 1:
        raise ValueError("t_n must be positive and n >= 1")
    return t_1 / (n * t_n)


def parse_size(text: str | int) -> int:
    """'128M' / '4G' / '512MiB' / '1048576' -> bytes (binary multiples, as nccl-tests reads -b/-e)."""
    if isinstance(text, int):
        return text
    s = text.strip().upper().removesuffix("IB").removesuffix("B")
    mult = {"K": 1 << 10, "M": MIB, "G": GIB, "T": 1 << 40}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def size_sweep(begin: int, end: int, factor: int = 2) -> list[int]:
    """Message sizes begin, begin*factor, ... up to and including end (nccl-tests -b/-e/-f)."""
    if begin <= 0 or end < begin or factor < 2:
        raise ValueError(f"bad sweep: begin={begin} end={end} factor={factor}")
    sizes = []
    s = begin
    while s <= end:
        sizes.append(s)
        s *= factor
    return sizes


def human_size(nbytes: int) -> str:
    for unit, mult in (("GiB", GIB), ("MiB", MIB), ("KiB", 1 << 10)):
        if nbytes >= mult and nbytes % mult == 0:
            return f"{nbytes // mult} {unit}"
    return f"{nbytes} B"
