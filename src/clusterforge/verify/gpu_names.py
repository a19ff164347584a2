"""One rule for "is this the GPU we declared": used by the host checks and the acceptance suite.

The rule is strict (issue 47): a GPU's reported name identifies its form factor, and an H100 NVL, an
H100 PCIe and an H100 SXM5 80GB are different cards with different power limits and floors. So a
declared model matches only

* the names listed for it in ``REPORTED_NAMES`` (catalog spelling -> what nvidia-smi / CUDA report), or
* for a model not listed there, a reported name equal to it, with or without the ``NVIDIA`` prefix
  (``H200`` matches ``NVIDIA H200``, never ``NVIDIA H200 NVL``).

Comparison ignores case and runs of blanks only; no token is dropped or guessed.
"""

from __future__ import annotations

import re

__all__ = ["REPORTED_NAMES", "gpu_model_matches", "reported_names_for"]

# What the driver reports (nvidia-smi --query-gpu=name, torch.cuda.get_device_name) for each catalog
# spelling. Seen on lent machines: "NVIDIA H100 80GB HBM3" (docs/acceptance/h100x1-floors) and
# "NVIDIA H200" (docs/acceptance/h200x1); the others are the names the driver gives those boards.
REPORTED_NAMES: dict[str, tuple[str, ...]] = {
    "H100-SXM5-80GB": ("NVIDIA H100 80GB HBM3",),
    "H100-PCIE-80GB": ("NVIDIA H100 PCIe",),
    "H100-NVL-94GB": ("NVIDIA H100 NVL",),
    "H200-SXM5-141GB": ("NVIDIA H200",),
    "H200-NVL-141GB": ("NVIDIA H200 NVL",),
    "A100-SXM4-80GB": ("NVIDIA A100-SXM4-80GB",),
    "A100-SXM4-40GB": ("NVIDIA A100-SXM4-40GB",),
}


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


_TABLE = {_norm(k): tuple(_norm(n) for n in v) for k, v in REPORTED_NAMES.items()}


def reported_names_for(declared: str) -> tuple[str, ...]:
    """The reported names (normalised) that fit ``declared``. Pure."""
    d = _norm(declared)
    if not d:
        return ()
    if d in _TABLE:
        return _TABLE[d]
    bare = d.removeprefix("nvidia ")
    return (d, f"nvidia {bare}") if bare == d else (d, bare)


def gpu_model_matches(declared: str, reported: str) -> bool:
    """Does the name a GPU reports (``NVIDIA H100 80GB HBM3``) fit the declared model
    (``H100-SXM5-80GB``, ``H200``, ``NVIDIA H200``)? Pure; see the module's rule."""
    return _norm(reported) in reported_names_for(declared)
