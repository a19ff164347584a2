"""What a GPU acceptance run on one server is judged against: the catalog figures of its server model."""

from __future__ import annotations

from typing import Any

from clusterforge.model import ClusterSpec
from clusterforge.plan.objects import Plan
from clusterforge.vocab import DeviceKind

__all__ = ["gpu_spec_for"]


def gpu_spec_for(spec: ClusterSpec, plan: Plan, *, host: str | None = None,
                 model: str | None = None) -> tuple[str, dict[str, Any]]:
    """(catalog model name, acceptance spec dict) for a planned server or a catalog server model.

    The dict is the catalog's ``gpu`` mapping (model, count, tdp_w, tflops_dense, acceptance) as
    ``clusterforge.verify.gpu`` takes it. Raises LookupError naming what is missing.
    """
    if (host is None) == (model is None):
        raise ValueError("pass exactly one of host or model")
    if host is not None:
        device = next((d for d in plan.devices if d.name == host), None)
        if device is None or device.kind != DeviceKind.SERVER:
            raise LookupError(f"no GPU server {host!r} in the plan")
        model = device.model
    assert model is not None  # one of host and model was given
    server = spec.catalog.servers.get(model)
    if server is None:
        raise LookupError(f"no server model {model!r} in the catalog ({', '.join(sorted(spec.catalog.servers))})")
    gpu = server.gpu
    if gpu is None or gpu.count == 0:
        raise LookupError(f"server model {model!r} has no GPUs")
    acceptance = gpu.acceptance.model_dump(mode="json") if gpu.acceptance else None
    return model, {"gpu": {"model": gpu.model, "count": gpu.count, "tdp_w": gpu.tdp_w,
                           "tflops_dense": gpu.tflops_dense.model_dump(mode="json"), "acceptance": acceptance}}
