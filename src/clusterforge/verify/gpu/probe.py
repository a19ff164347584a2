"""Is there an NVIDIA GPU here, and what is this machine (driver, topology, per-GPU facts)?"""

from __future__ import annotations

import csv
import io
import platform
import re
import shutil
import socket
import subprocess
from typing import Any

QUERY_FIELDS = (
    "index",
    "name",
    "pci.bus_id",
    "uuid",
    "driver_version",
    "memory.total",
    "power.limit",
    "power.max_limit",
    "clocks.max.sm",
    "clocks.max.memory",
    "pcie.link.gen.max",
    "pcie.link.gen.current",
    "pcie.link.width.max",
    "pcie.link.width.current",
    "temperature.gpu",
    "persistence_mode",
    "mig.mode.current",
    "ecc.mode.current",
    "enforced.power.limit",  # the limit the power management applies (the lower of the software and board caps)
    "power.default_limit",
)


class NoGpuError(RuntimeError):
    """Raised when acceptance cannot run because no NVIDIA GPU is usable here."""


def require_gpu() -> Any:
    """Return the imported torch module, or raise NoGpuError saying what is missing."""
    if shutil.which("nvidia-smi") is None:
        raise NoGpuError("no NVIDIA GPU visible: nvidia-smi is not on PATH")
    try:
        import torch
    except ImportError as exc:
        raise NoGpuError(f"no NVIDIA GPU visible: PyTorch is not installed ({exc})") from exc
    if not torch.cuda.is_available():
        raise NoGpuError(f"no NVIDIA GPU visible: torch {torch.__version__} reports torch.cuda.is_available() == False")
    return torch


def parse_query_csv(text: str, fields=QUERY_FIELDS) -> list[dict[str, str]]:
    """Rows of ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits``. Pure."""
    rows = []
    for rec in csv.reader(io.StringIO(text)):
        if not rec or not "".join(rec).strip():
            continue
        rows.append({f: v.strip() for f, v in zip(fields, rec, strict=False)})
    return rows


def _run(argv: list[str], timeout: float = 60) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout if p.returncode == 0 else (p.stdout + p.stderr)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return -1, f"{type(exc).__name__}: {exc}"


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def nvidia_smi_texts() -> dict[str, str]:
    """Raw ``nvidia-smi topo -m``, ``-q`` and ``nvlink --status`` output, for the record."""
    out = {}
    for key, argv in (
        ("topo", ["nvidia-smi", "topo", "-m"]),
        ("query", ["nvidia-smi", "-q"]),
        ("nvlink", ["nvidia-smi", "nvlink", "--status"]),
    ):
        rc, text = _run(argv)
        text = _ANSI.sub("", text)  # topo -m underlines its header with terminal escapes
        out[key] = text if rc == 0 else f"(exit {rc})\n{text}"
    return out


_COUNTER_KEYS = {
    "SW Power Capping": "sw_power_cap_us",
    "Sync Boost": "sync_boost_us",
    "SW Thermal Slowdown": "sw_thermal_slowdown_us",
    "HW Thermal Slowdown": "hw_thermal_slowdown_us",
    "HW Power Braking": "hw_power_brake_us",
}


def parse_clock_event_counters(text: str) -> dict[str, dict[str, int]]:
    """Per PCI bus id (upper case), the driver's cumulative clock-event counters (microseconds)
    from ``nvidia-smi -q -d PERFORMANCE`` ("Clocks Event Reasons Counters", driver 550+). Pure."""
    out: dict[str, dict[str, int]] = {}
    gpu = None
    in_counters = False
    for line in text.splitlines():
        if line.startswith("GPU "):
            gpu = line.split(None, 1)[1].strip().upper()
            in_counters = False
            continue
        key, _, value = (t.strip() for t in line.partition(":"))
        if key in ("Clocks Event Reasons Counters", "Clocks Throttle Reasons Counters"):
            in_counters = True
        elif in_counters and key in _COUNTER_KEYS and gpu is not None and value.endswith("us"):
            out.setdefault(gpu, {})[_COUNTER_KEYS[key]] = int(value[:-2])
        else:
            in_counters = False
    return out


def clock_event_counters() -> dict[str, dict[str, int]]:
    """The counters now (empty where the driver or nvidia-smi does not report them)."""
    rc, text = _run(["nvidia-smi", "-q", "-d", "PERFORMANCE"])
    return parse_clock_event_counters(text) if rc == 0 else {}


def counters_delta(before: dict, after: dict) -> dict[str, dict[str, int]]:
    """after - before per GPU and counter. Pure."""
    return {
        gpu: {k: v - before.get(gpu, {}).get(k, 0) for k, v in vals.items()}
        for gpu, vals in after.items()
        if gpu in before
    }


def host_info(torch: Any) -> dict[str, Any]:
    """What the report says about the machine: hostname, versions, per-GPU facts from CUDA and nvidia-smi."""
    n = torch.cuda.device_count()
    gpus = []
    for i in range(n):
        p = torch.cuda.get_device_properties(i)
        gpus.append(
            {
                "index": i,
                "name": p.name,
                "memory_gib": round(p.total_memory / 2**30, 1),
                "sm_count": p.multi_processor_count,
                "capability": f"{p.major}.{p.minor}",
            }
        )
    rc, text = _run(["nvidia-smi", f"--query-gpu={','.join(QUERY_FIELDS)}", "--format=csv,noheader,nounits"])
    smi = parse_query_csv(text) if rc == 0 else []
    try:
        nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
    except Exception:  # noqa: BLE001 - a build without NCCL
        nccl = None
    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "nccl": nccl,
        "driver": smi[0].get("driver_version") if smi else None,
        "gpu_count": n,
        "gpus": gpus,
        "nvidia_smi": smi,
    }
