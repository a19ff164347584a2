"""Dynamic Resource Allocation from the plan: one DeviceClass per GPU model (roles/k8s_gpu, k8s_gpu_mode: dra).

A class selects the devices NVIDIA's DRA driver publishes (driver ``gpu.nvidia.com``) whose reported product name
contains the model's GPU type, the same word Slurm's GRES uses (plan/slurm.gres_type: H200-SXM5-141GB -> h200),
compared in lower case; NVIDIA's driver reports names such as "NVIDIA H200". Each team namespace gets two
ResourceClaimTemplates per class (the role renders them): one GPU, and every such GPU of one node.

In the lab the devices are SIMULATED: cf-sim-dra-driver (tools/k8s-build/kubernetes/cmd) publishes each GPU
server's planned GPUs under the same driver name, with the product name ``simulated_product`` gives, which the
class selects.

Quotas count claims as well as ``nvidia.com/gpu`` requests:

* Kueue (roles/k8s_kueue) maps every planned class to ``nvidia.com/gpu`` (its Configuration's
  ``resources.deviceClassMappings``, read only with its alpha ``DynamicResourceAllocation`` gate on), so one team
  quota counts device-plugin GPUs and the devices of the ResourceClaimTemplates its pods name. Kueue v0.17 refuses
  a mapping of more than 8 classes to one resource, and a class name that is not a label key (at most 63
  characters without a prefix): the class name is cut to fit, and more than 8 GPU models with Kueue on are
  refused (``kueue_mapping_problem``).
* The team's ResourceQuota (roles/k8s_gpu, DRA mode) caps the devices of each class, the API server's quota key
  ``<class>.deviceclass.resource.k8s.io/devices``: the team's GPUs of that model as Kueue's flavors split them,
  its nominal quota plus borrowing limit with Kueue on (``team_device_quotas``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from clusterforge.plan.kubernetes import KubeNode
from clusterforge.plan.queueing import GPU_RESOURCE, QueueingPlan, flavor_name
from clusterforge.plan.slurm import gres_type

__all__ = ["DRA_DRIVER", "KUEUE_MAX_CLASSES", "DeviceClassPlan", "kueue_device_class_mappings",
           "kueue_mapping_problem", "plan_device_classes", "simulated_product", "team_device_quotas"]

DRA_DRIVER = "gpu.nvidia.com"  # the driver name of kubernetes-sigs/dra-driver-nvidia-gpu
CLASS_SUFFIX = ".gpu.clusterforge.io"
# Kueue v0.17's validation of resources.deviceClassMappings (pkg/config/validation.go): each class name is a label
# key (unprefixed: at most 63 characters), at most 8 classes per mapping, each mapped resource named once
CLASS_NAME_MAX = 63
KUEUE_MAX_CLASSES = 8
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


def class_name(gpu_model: str) -> str:
    """<model as a DNS label>.gpu.clusterforge.io, the model part cut so the whole is at most 63 characters (a
    name Kueue's deviceClassMappings accepts); the same as the Kueue flavor's name for a model of up to 43."""
    return flavor_name(gpu_model)[:CLASS_NAME_MAX - len(CLASS_SUFFIX)].rstrip("-") + CLASS_SUFFIX


def plan_device_classes(nodes: Iterable[KubeNode]) -> tuple[DeviceClassPlan, ...]:
    most: dict[str, int] = {}
    for node in nodes:
        most[node.gpu_model] = max(most.get(node.gpu_model, 0), node.gpus)
    return tuple(DeviceClassPlan(class_name(model), model, gres_type(model), gpus)
                 for model, gpus in sorted(most.items()))


def kueue_device_class_mappings(classes: Iterable[DeviceClassPlan]) -> list[dict[str, Any]]:
    """Kueue's ``resources.deviceClassMappings``: every class counted as ``nvidia.com/gpu``, the resource the
    ClusterQueues' quotas are in, so a device a claim asks for is a GPU of the team's quota. Empty: no class."""
    names = sorted({c.name for c in classes})
    return [{"name": GPU_RESOURCE, "deviceClassNames": names}] if names else []


def kueue_mapping_problem(classes: Sequence[DeviceClassPlan]) -> str | None:
    """Why Kueue would refuse the mapping (and not start), or None."""
    names = {c.name for c in classes}
    if len(names) > KUEUE_MAX_CLASSES:
        return (f"{len(names)} GPU models make {len(names)} DRA device classes; Kueue maps at most"
                f" {KUEUE_MAX_CLASSES} device classes to {GPU_RESOURCE} and refuses its configuration otherwise;"
                " declare at most 8 GPU models or drop kueue")
    return None


def team_device_quotas(classes: Iterable[DeviceClassPlan], queueing: QueueingPlan, team: str,
                       ceiling: bool) -> dict[str, int]:
    """{class name: GPUs} of one team: its GPUs of each model as Kueue's flavors split them (``nominal_gpus``),
    with ``ceiling`` (Kueue on) its nominal quota plus borrowing limit. They sum to the team's
    ``requests.nvidia.com/gpu`` quota, so the devices its claims hold stay under the same ceiling."""
    queue = next(q for q in queueing.queues if q.team == team)
    model = {f.name: f.gpu_model for f in queueing.flavors}
    by_model = {c.gpu_model: c.name for c in classes}
    out: dict[str, int] = {}
    for quota in queue.quotas:
        name = by_model.get(model[quota.flavor])
        if name is not None:
            gpus = quota.nominal_gpus + (quota.borrowing_limit_gpus if ceiling else 0)
            out[name] = out.get(name, 0) + gpus
    return out
