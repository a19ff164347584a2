"""What `up` applies to the API server in the k8s_gpu step (playbooks/kubernetes.yml), as a record.

The names come from the role's own defaults (roles/k8s_gpu/defaults/main.yml) and the plan's GPU nodes and
teams (render.ansible_inventory.kubernetes_vars), so this says what the role applied without a second copy of
its names: the RuntimeClass, the device-plugin DaemonSet, the time-slicing ConfigMap (only when the defaults'
replicas > 1), one namespace per team (with its ResourceQuota `gpu-quota`), and on each GPU node the label keys
and taints the role set. The record is what `destroy` removes (pulumi/kube/teardown.py); `merged` keeps what an
earlier `up` applied, since `kubectl apply` never prunes a team or node dropped from the declaration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from clusterforge import paths

__all__ = ["GpuLayer", "MANAGED_BY", "QUOTA_NAME", "merged", "planned_layer", "role_defaults"]

MANAGED_BY = ("app.kubernetes.io/managed-by", "clusterforge")  # the role marks what it creates with this label
QUOTA_NAME = "gpu-quota"  # roles/k8s_gpu/templates/team-quotas.yaml.j2
DAEMONSET_NAME = "nvidia-device-plugin-daemonset"  # roles/k8s_gpu/templates/device-plugin-daemonset.yaml.j2
CONFIGMAP_NAME = "nvidia-device-plugin-config"  # roles/k8s_gpu/templates/time-slicing-configmap.yaml.j2
# the per-node labels the role adds beside k8s_gpu_node_labels (roles/k8s_gpu/tasks/main.yml)
NODE_FACT_LABELS = ("clusterforge.io/gpu-model", "clusterforge.io/gpu-count")


@dataclass(frozen=True)
class GpuLayer:
    """The objects and node keys one stack's k8s_gpu step applied (device-plugin mode, the role's default)."""

    namespace: str  # of the DaemonSet and the ConfigMap
    runtime_class: str | None
    daemonset: str
    configmap: str | None
    teams: tuple[str, ...]
    nodes: tuple[str, ...]
    labels: tuple[str, ...]  # label keys set on every GPU node
    taints: tuple[tuple[str, str, str], ...]  # (key, value, effect)

    def to_dict(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "runtime_class": self.runtime_class, "daemonset": self.daemonset,
                "configmap": self.configmap, "teams": list(self.teams), "nodes": list(self.nodes),
                "labels": list(self.labels), "taints": [list(t) for t in self.taints]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GpuLayer:
        return cls(namespace=str(data["namespace"]), runtime_class=data.get("runtime_class"),
                   daemonset=str(data["daemonset"]), configmap=data.get("configmap"),
                   teams=tuple(data.get("teams") or ()), nodes=tuple(data.get("nodes") or ()),
                   labels=tuple(data.get("labels") or ()),
                   taints=tuple((str(k), str(v), str(e)) for k, v, e in data.get("taints") or ()))


def role_defaults() -> dict[str, Any]:
    """roles/k8s_gpu/defaults/main.yml as data (plain YAML: none of the values it is read for is templated)."""
    return yaml.safe_load((paths.roles_dir() / "k8s_gpu" / "defaults" / "main.yml").read_text())


def planned_layer(kube_vars: Mapping[str, Any], defaults: Mapping[str, Any]) -> GpuLayer:
    """The layer the role applies with these `cf_kubernetes` vars and role defaults."""
    device_plugin = defaults["k8s_gpu_mode"] == "device-plugin"
    return GpuLayer(
        namespace=str(defaults["k8s_gpu_namespace"]),
        runtime_class=(str(defaults["k8s_gpu_runtime_class_name"])
                       if device_plugin and defaults["k8s_gpu_runtime_class_enabled"] else None),
        daemonset=DAEMONSET_NAME,
        configmap=CONFIGMAP_NAME if device_plugin and int(defaults["k8s_gpu_time_slicing_replicas"]) > 1 else None,
        teams=tuple(str(t["name"]) for t in kube_vars["teams"]),
        nodes=tuple(str(n["name"]) for n in kube_vars["gpu_nodes"]),
        labels=tuple(sorted({*map(str, defaults["k8s_gpu_node_labels"]), *NODE_FACT_LABELS})),
        taints=tuple((str(t["key"]), str(t["value"]), str(t["effect"])) for t in defaults["k8s_gpu_node_taints"]),
    )


def _union(old: tuple[Any, ...], new: tuple[Any, ...]) -> tuple[Any, ...]:
    return (*new, *(item for item in old if item not in new))


def merged(old: GpuLayer, new: GpuLayer) -> GpuLayer:
    """`new`, plus the teams, nodes, label keys and taints of `old` that an `up` applied and nothing removed."""
    return GpuLayer(namespace=new.namespace, runtime_class=new.runtime_class or old.runtime_class,
                    daemonset=new.daemonset, configmap=new.configmap or old.configmap,
                    teams=_union(old.teams, new.teams), nodes=_union(old.nodes, new.nodes),
                    labels=_union(old.labels, new.labels), taints=_union(old.taints, new.taints))
