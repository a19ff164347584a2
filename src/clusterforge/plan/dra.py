"""Dynamic Resource Allocation from the plan: one DeviceClass per GPU model (roles/k8s_gpu, k8s_gpu_mode: dra).

A class selects the devices NVIDIA's DRA driver publishes (driver ``gpu.nvidia.com``) whose reported product name
contains the model's GPU type, the same word Slurm's GRES uses (plan/slurm.gres_type: H200-SXM5-141GB -> h200),
compared in lower case; NVIDIA's driver reports names such as "NVIDIA H200". Each team namespace gets two
ResourceClaimTemplates per class (the role renders them): one GPU, and every such GPU of one node.

In the lab the devices are SIMULATED: cf-sim-dra-driver (tools/k8s-build/kubernetes/cmd) publishes each GPU
server's planned GPUs under the same driver name, with the product name ``simulated_product`` gives, which the
class selects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from clusterforge.plan.kubernetes import KubeNode
from clusterforge.plan.queueing import flavor_name
from clusterforge.plan.slurm import gres_type

__all__ = ["DRA_DRIVER", "DeviceClassPlan", "plan_device_classes", "simulated_product"]

DRA_DRIVER = "gpu.nvidia.com"  # the driver name of kubernetes-sigs/dra-driver-nvidia-gpu
CLASS_SUFFIX = ".gpu.clusterforge.io"
ATTRIBUTE_MAX = 64  # resource.k8s.io: a device attribute's string value
SIMULATED_MARK = " (SIMULATED)"


def simulated_product(gpu_model: str) -> str:
    """The productName cf-sim-dra-driver gives the lab's SIMULATED devices of ``gpu_model``: what NVIDIA's driver
    reports ("NVIDIA H200-SXM5-141GB"), cut to fit an attribute with the SIMULATED mark, which stays. The model
    is of the catalog's grammar (letters, digits, '.', '_', ' ', '-'), so the text is safe in a unit file's
    quoted argument."""
    return f"NVIDIA {gpu_model.strip()}"[:ATTRIBUTE_MAX - len(SIMULATED_MARK)].rstrip() + SIMULATED_MARK


@dataclass(frozen=True)
class DeviceClassPlan:
    name: str  # a DNS subdomain: <model as a DNS label>.gpu.clusterforge.io
    gpu_model: str
    product: str  # the lower-case word the device's productName contains
    gpus_per_node: int  # the most GPUs of this model on one node

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "short_name": self.name.removesuffix(CLASS_SUFFIX), "gpu_model": self.gpu_model,
                "product": self.product, "gpus_per_node": self.gpus_per_node, "driver": DRA_DRIVER,
                "simulated_product": simulated_product(self.gpu_model)}


def plan_device_classes(nodes: Iterable[KubeNode]) -> tuple[DeviceClassPlan, ...]:
    most: dict[str, int] = {}
    for node in nodes:
        most[node.gpu_model] = max(most.get(node.gpu_model, 0), node.gpus)
    return tuple(DeviceClassPlan(flavor_name(model) + CLASS_SUFFIX, model, gres_type(model), gpus)
                 for model, gpus in sorted(most.items()))
