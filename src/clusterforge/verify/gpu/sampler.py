"""NVML telemetry sampled in a background thread while a benchmark runs.

Per sample: SM and memory clocks (MHz), power (W), temperature (C), GPU utilisation (%)
and the clock-event ("throttle") reasons bitmask. ``summarize_samples`` is pure; the
sampler itself needs nvidia-ml-py (``pynvml``) and a driver.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Any

from clusterforge.verify.gpu import throttle

FIELDS = ("sm_mhz", "mem_mhz", "power_w", "temp_c", "util_pct")


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"min": min(values), "max": max(values), "mean": round(statistics.fmean(values), 2)}


def summarize_samples(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """min/max/mean of each field and the decoded reasons over a list of samples. Pure."""
    out: dict[str, Any] = {"samples": len(samples)}
    for f in FIELDS:
        out[f] = _stats([s[f] for s in samples if s.get(f) is not None])
    out["reasons"] = throttle.summarize_masks(int(s["reasons"]) for s in samples if s.get("reasons") is not None)
    return out


def _reasons_fn(pynvml: Any):
    fn = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
    return fn or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons


def _try(fn, *args):
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 - a field the driver does not expose stays None
        return None


def static_info(pynvml: Any, handle: Any) -> dict[str, Any]:
    def _s(v):
        return v.decode() if isinstance(v, bytes) else v

    limit = _try(pynvml.nvmlDeviceGetEnforcedPowerLimit, handle)
    pci = _try(pynvml.nvmlDeviceGetPciInfo, handle)
    return {
        "name": _s(_try(pynvml.nvmlDeviceGetName, handle)),
        "uuid": _s(_try(pynvml.nvmlDeviceGetUUID, handle)),
        "pci_bus_id": _s(pci.busId) if pci is not None else None,
        "power_limit_w": limit / 1000 if limit is not None else None,
        "max_sm_mhz": _try(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_SM),
        "max_mem_mhz": _try(pynvml.nvmlDeviceGetMaxClockInfo, handle, pynvml.NVML_CLOCK_MEM),
    }


def read_sample(pynvml: Any, handle: Any, t0: float) -> dict[str, Any]:
    power = _try(pynvml.nvmlDeviceGetPowerUsage, handle)
    util = _try(pynvml.nvmlDeviceGetUtilizationRates, handle)
    return {
        "t": round(time.monotonic() - t0, 3),
        "sm_mhz": _try(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_SM),
        "mem_mhz": _try(pynvml.nvmlDeviceGetClockInfo, handle, pynvml.NVML_CLOCK_MEM),
        "power_w": round(power / 1000, 1) if power is not None else None,
        "temp_c": _try(pynvml.nvmlDeviceGetTemperature, handle, pynvml.NVML_TEMPERATURE_GPU),
        "util_pct": util.gpu if util is not None else None,
        "reasons": _try(_reasons_fn(pynvml), handle),
    }


def nvml_index_for_cuda(pynvml: Any, cuda_props: Any, fallback: int) -> int:
    """NVML index of a CUDA device (CUDA and NVML can number GPUs differently)."""
    uuid = getattr(cuda_props, "uuid", None)
    if uuid is not None:
        h = _try(pynvml.nvmlDeviceGetHandleByUUID, f"GPU-{uuid}")
        if h is not None:
            return pynvml.nvmlDeviceGetIndex(h)
    bus = getattr(cuda_props, "pci_bus_id", None)
    if bus is not None:
        dom = getattr(cuda_props, "pci_domain_id", 0)
        dev = getattr(cuda_props, "pci_device_id", 0)
        h = _try(pynvml.nvmlDeviceGetHandleByPciBusId, f"{dom:08x}:{bus:02x}:{dev:02x}.0")
        if h is not None:
            return pynvml.nvmlDeviceGetIndex(h)
    return fallback


class NvmlSampler:
    """Samples the given NVML device indices every ``interval_s`` until stopped.

    Use as a context manager; after exit, ``result()`` gives per-index
    ``{"static": ..., "summary": ..., "samples": [...]}``.
    """

    def __init__(self, nvml_indices: list[int], interval_s: float = 0.2):
        import pynvml  # nvidia-ml-py

        self._nvml = pynvml
        self.indices = list(nvml_indices)
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._samples: dict[int, list[dict[str, Any]]] = {i: [] for i in self.indices}
        self._static: dict[int, dict[str, Any]] = {}
        self._thread: threading.Thread | None = None
        self._error: str | None = None

    def __enter__(self) -> NvmlSampler:
        self._nvml.nvmlInit()
        self._handles = {i: self._nvml.nvmlDeviceGetHandleByIndex(i) for i in self.indices}
        self._static = {i: static_info(self._nvml, h) for i, h in self._handles.items()}
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="nvml-sampler", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                for i, h in self._handles.items():
                    self._samples[i].append(read_sample(self._nvml, h, self._t0))
                self._stop.wait(self.interval_s)
        except Exception as exc:  # noqa: BLE001 - reported in result()
            self._error = f"{type(exc).__name__}: {exc}"

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        # one last sample so that even a very short run has readings taken under load
        for i, h in self._handles.items():
            self._samples[i].append(read_sample(self._nvml, h, self._t0))
        self._nvml.nvmlShutdown()

    def result(self, keep_samples: bool = True) -> dict[int, dict[str, Any]]:
        out = {}
        for i in self.indices:
            entry: dict[str, Any] = {
                "nvml_index": i,
                "static": self._static.get(i, {}),
                "summary": summarize_samples(self._samples[i]),
            }
            if keep_samples:
                entry["samples"] = self._samples[i]
            if self._error:
                entry["error"] = self._error
            out[i] = entry
        return out
