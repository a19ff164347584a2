"""One rule for "is this the GPU we declared": used by the host checks and the acceptance suite."""

from __future__ import annotations

import re

__all__ = ["gpu_model_matches"]


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^a-z0-9]+", text.lower()) if t]


def gpu_model_matches(declared: str, reported: str) -> bool:
    """Does the name a GPU reports (``NVIDIA H100 80GB HBM3``) fit the declared model
    (``H100``, ``H100-SXM5-80GB``, ``NVIDIA H200``)? Pure.

    The declared family token (the first one with a digit: ``h100``) must be one of the reported
    name's tokens; a declared memory size (``80gb``) must not contradict a reported one; and the
    form factor must agree where it shows (a declared ``pcie`` or ``nvl`` must be reported; a
    declared ``sxm*`` must not be reported as ``pcie``). Variant tokens nvidia-smi leaves out
    (``SXM5`` in ``NVIDIA H100 80GB HBM3``) are not required: its names vary by driver.
    """
    d, r = _tokens(declared), _tokens(reported)
    if not d:
        return False
    if any(r[i : i + len(d)] == d for i in range(len(r) - len(d) + 1)):
        return True
    family = next((t for t in d if any(c.isdigit() for c in t) and any(c.isalpha() for c in t)), d[0])
    if family not in r:
        return False
    mem_d = {t for t in d if re.fullmatch(r"\d+gb", t)}
    mem_r = {t for t in r if re.fullmatch(r"\d+gb", t)}
    if mem_d and mem_r and not mem_d & mem_r:
        return False
    for ff in ("pcie", "nvl"):
        if ff in d and ff not in r:
            return False
    return not (any(t.startswith("sxm") for t in d) and "pcie" in r)
