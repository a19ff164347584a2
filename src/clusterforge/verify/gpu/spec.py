"""What a GPU node is expected to do: declared per-GPU peaks and the acceptance thresholds.

``AcceptanceSpec.from_dict`` takes either this model's own JSON shape or the inventory
catalog's server-model shape (``{"gpu": {"model", "count", "tflops_dense": {...}}}``, or
the ``gpu`` mapping alone), so the CLI can hand over a catalog entry unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

PRECISIONS: tuple[str, ...] = ("fp16", "bf16", "fp32", "tf32", "fp8")
FLOOR_PRECISIONS: tuple[str, ...] = PRECISIONS
# fp8 is measured only where the spec declares an fp8 peak (Hopper, Ada and later)
OPTIONAL_PRECISIONS: tuple[str, ...] = ("fp8",)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DeclaredTflops(_Frozen):
    """Per-GPU dense (non-sparse) peak TFLOPS as the vendor declares them."""

    fp16: float = Field(gt=0)
    bf16: float = Field(gt=0)
    fp32: float = Field(gt=0, description="plain FP32 on CUDA cores (TF32 off)")
    tf32: float = Field(gt=0, description="TF32 tensor-core rate, dense")
    fp8: float | None = Field(default=None, gt=0, description="dense FP8 (E4M3) rate; None: not declared, not measured")

    def get(self, precision: str) -> float:
        if precision not in PRECISIONS:
            raise KeyError(f"unknown precision {precision!r}; expected one of {PRECISIONS}")
        value = getattr(self, precision)
        if value is None:
            raise KeyError(f"no declared {precision} peak")
        return float(value)

    def declares(self, precision: str) -> bool:
        return precision in PRECISIONS and getattr(self, precision) is not None


class Thresholds(_Frozen):
    """Pass/fail gates and finding thresholds. Fractions are 0..1."""

    matmul_fraction: float = Field(
        default=0.75, gt=0, le=1, description="burst matmul (documents' method) must reach this x declared"
    )
    matmul_fraction_by_precision: dict[str, float] = Field(
        default_factory=dict, description="per-precision override of matmul_fraction"
    )
    sustained_matmul_fraction: float | None = Field(
        default=None, gt=0, le=1, description="gate on the sustained mean too; None = finding only"
    )
    sustained_gap_finding: float = Field(
        default=0.10, ge=0, lt=1, description="1 - sustained_mean / burst above this is a finding"
    )
    burst_floor_tflops: dict[str, float] = Field(
        default_factory=dict, description="absolute burst floor per precision (the catalog's acceptance floors);"
        " where set it replaces the matmul_fraction gate"
    )
    sustained_floor_tflops: dict[str, float] = Field(
        default_factory=dict, description="absolute floor on the sustained mean per precision; where set it"
        " replaces sustained_matmul_fraction"
    )
    busbw_floor_gbps: float | None = Field(
        default=None, gt=0, description="all-reduce busbw floor at the largest message; None = not gated"
    )
    scaling_efficiency_floor: float = Field(default=0.6, gt=0, le=1.5)
    membw_floor_tbps: float | None = Field(
        default=None, gt=0, description="device copy bandwidth floor (read + write counted); None = not gated"
    )
    fidelity_tolerance: float = Field(
        default=0.03, gt=0, lt=1, description="|ours / nccl-tests - 1| allowed at messages >= 1 GiB"
    )
    throttle_finding_share: float = Field(
        default=0.05, ge=0, le=1, description="throttle reason in at least this share of samples: warning"
    )
    temperature_finding_c: float = Field(default=85.0, gt=0, description="max GPU temperature above this: finding")
    power_limit_tolerance_w: float = Field(
        default=1.0, ge=0, le=100, description="an enforced power limit this far under the declared one still"
        " passes (nvidia-smi prints watts to 2 decimals)"
    )

    @model_validator(mode="after")
    def _known_precisions(self) -> Thresholds:
        for p, f in self.matmul_fraction_by_precision.items():
            if p not in PRECISIONS:
                raise ValueError(f"matmul_fraction_by_precision: unknown precision {p!r}")
            if not 0 < f <= 1:
                raise ValueError(f"matmul_fraction_by_precision[{p}] must be in (0, 1], got {f}")
        for field in ("burst_floor_tflops", "sustained_floor_tflops"):
            for p, floor in getattr(self, field).items():
                if p not in FLOOR_PRECISIONS:
                    raise ValueError(f"{field}: unknown precision {p!r}; expected one of {FLOOR_PRECISIONS}")
                if not 0 < floor <= 1e6:
                    raise ValueError(f"{field}[{p}] must be in (0, 1e6] TFLOPS, got {floor}")
        return self

    def matmul_fraction_for(self, precision: str) -> float:
        return self.matmul_fraction_by_precision.get(precision, self.matmul_fraction)


class AcceptanceSpec(_Frozen):
    """Expectation for one node (or each node of a set) under acceptance."""

    gpu_model: str = Field(min_length=1, description="declared model; the reported name must fit it exactly"
                           " (verify.gpu_names)")
    gpu_count: int = Field(ge=1, le=64, description="GPUs per node")
    tflops_dense: DeclaredTflops
    power_limit_w: float | None = Field(
        default=None, gt=0, le=10_000, description="the catalog's per-GPU power limit (tdp_w) the floors were"
        " measured at; the enforced limit must not be lower. None: not declared, the check records not gated"
    )
    thresholds: Thresholds = Thresholds()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], thresholds: Mapping[str, Any] | None = None) -> AcceptanceSpec:
        """Build from this model's shape, a catalog server model, or a catalog ``gpu`` mapping."""
        if "gpu_model" in data:
            merged = dict(data)
            if thresholds:
                merged["thresholds"] = {**dict(merged.get("thresholds") or {}), **dict(thresholds)}
            return cls.model_validate(merged)
        gpu = data.get("gpu", data)
        if not isinstance(gpu, Mapping) or "tflops_dense" not in gpu:
            raise ValueError("expected an AcceptanceSpec, a server model with 'gpu', or a 'gpu' mapping")
        th = floor_thresholds(gpu.get("acceptance"))
        th.update(dict(data.get("thresholds") or {}))
        th.update(dict(thresholds or {}))
        peaks = {p: v for p, v in dict(gpu["tflops_dense"]).items() if p in PRECISIONS}
        tdp = gpu.get("tdp_w")
        return cls(
            gpu_model=str(gpu["model"]),
            gpu_count=int(gpu["count"]),
            tflops_dense=DeclaredTflops.model_validate(peaks),
            power_limit_w=float(tdp) if tdp is not None else None,
            thresholds=Thresholds.model_validate(th),
        )


def floor_thresholds(floors: Mapping[str, Any] | None) -> dict[str, Any]:
    """A catalog GPU's ``acceptance`` floors (burst_tflops, sustained_tflops, memory_bandwidth_tbps) as
    thresholds; figures the catalog leaves out are not gated."""
    if not floors:
        return {}
    out: dict[str, Any] = {}
    for key, field in (("burst_tflops", "burst_floor_tflops"), ("sustained_tflops", "sustained_floor_tflops")):
        by_precision = {p: float(v) for p, v in dict(floors.get(key) or {}).items() if v is not None}
        if by_precision:
            out[field] = by_precision
    if floors.get("memory_bandwidth_tbps") is not None:
        out["membw_floor_tbps"] = float(floors["memory_bandwidth_tbps"])
    return out
