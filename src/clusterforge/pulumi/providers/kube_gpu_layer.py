"""KubeGpuLayer: the record of what the Kubernetes step's k8s_gpu play applied, and its removal on `destroy`.

Declared after the control-plane HostProvision that applies the layer (on the `ssh` target; the lab's control node
goes with the lab). Create and update only record: `planned` is what this declaration applies
(pulumi/kube/gpu_layer.py), `applied` what every `up` so far applied (`kubectl apply` never prunes, so a team
dropped from the declaration is still on the cluster and stays in `applied`). The admin kubeconfig is kept with
them as a secret, so `destroy` (which reads only the state) reaches the API server. Delete removes `applied`
through the API server (pulumi/kube/teardown.py), saying each thing it removed; a failure is one line naming the
server, the resource stays in the state, and the next `destroy` carries on (every step is idempotent).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from clusterforge.pulumi.kube.gpu_layer import GpuLayer, merged
from clusterforge.pulumi.providers import _lifeline

__all__ = ["KubeGpuLayer", "KubeGpuLayerArgs", "KubeGpuLayerProvider"]

UPDATE_KEYS = ("api_server", "planned", "kubeconfig")


@dataclass(frozen=True)
class KubeGpuLayerArgs:
    cluster: str
    api_server: str  # https://ADDRESS:6443, the server the kubeconfig names (said in every line)
    planned: Mapping[str, Any]  # GpuLayer.to_dict()


def _applied(olds: Mapping[str, Any], news: Mapping[str, Any]) -> dict[str, Any]:
    planned = GpuLayer.from_dict(news["planned"])
    if not olds.get("applied"):
        return planned.to_dict()
    return merged(GpuLayer.from_dict(olds["applied"]), planned).to_dict()


class KubeGpuLayerProvider(ResourceProvider):
    serialize_as_secret_always = False

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in UPDATE_KEYS if olds.get(key) != news.get(key)]
        return DiffResult(changes=bool(changed), replaces=[])

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"kube-gpu-layer-{props['cluster']}", {**props, "applied": _applied({}, props)})

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult({**news, "applied": _applied(olds, news)})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        from clusterforge.pulumi.kube.teardown import TeardownFailed, api_client, remove_layer

        server = str(props["api_server"])
        try:
            import yaml

            api = api_client(yaml.safe_load(props["kubeconfig"]))
        except ImportError as exc:
            raise TeardownFailed(f"the GPU layer on {server} cannot be removed: {exc.name} is not installed"
                                 " (pip install kubernetes); `destroy` again carries on") from None
        layer = GpuLayer.from_dict(props["applied"])
        removed = remove_layer(api, layer, server, say=lambda line: _lifeline.say(f"kubernetes {server}: {line}"))
        _lifeline.say(f"kubernetes {server}: the GPU layer is off the API server"
                      f" ({len(removed)} change(s) by this run)")


class KubeGpuLayer(Resource, module="clusterforge", name="KubeGpuLayer"):
    """pulumi-python:dynamic/clusterforge:KubeGpuLayer — output `applied`: what `destroy` removes."""

    applied: pulumi.Output[dict[str, Any]]

    def __init__(self, name: str, args: KubeGpuLayerArgs, kubeconfig: pulumi.Input[str],
                 opts: pulumi.ResourceOptions | None = None) -> None:
        props = {"cluster": args.cluster, "api_server": args.api_server, "planned": dict(args.planned),
                 "kubeconfig": pulumi.Output.secret(kubeconfig), "applied": None}
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=["kubeconfig"]))
        super().__init__(KubeGpuLayerProvider(), name, props, opts)
