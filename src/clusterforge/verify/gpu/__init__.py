"""GPU acceptance suite: matmul (burst and sustained, with NVML telemetry), copy bandwidth,
all-reduce smoke test and bus-bandwidth sweep, DDP scaling efficiency; pure evaluation
against a declared spec; JSON + Markdown reports.

Importing this package needs neither torch nor a GPU; running the measurements needs both
(``NoGpuError`` otherwise).
"""

from clusterforge.verify.gpu.evaluate import evaluate
from clusterforge.verify.gpu.probe import NoGpuError
from clusterforge.verify.gpu.runner import accept_main, run_acceptance
from clusterforge.verify.gpu.spec import AcceptanceSpec, DeclaredTflops, Thresholds

__all__ = [
    "AcceptanceSpec",
    "DeclaredTflops",
    "NoGpuError",
    "Thresholds",
    "accept_main",
    "evaluate",
    "run_acceptance",
]
