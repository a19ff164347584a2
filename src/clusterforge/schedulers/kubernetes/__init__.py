"""The Kubernetes driver: the node labels under scheduler/kubernetes/ and `cf_kubernetes` in the control
nodes' host_vars, playbooks/kubernetes.yml through the stack's Kubernetes step, the checks of
verify/kube_checks (and with Kueue declared verify/kueue_checks) through the stack's kubeconfig, nodes drained
through the Eviction API and uncordoned, the teams' ResourceQuotas as its queues."""

from __future__ import annotations

from clusterforge.plan import Plan
from clusterforge.render.scheduler import SCHEDULER_DIR, scheduler_files
from clusterforge.schedulers.driver import Application, LayerChecks, Queue, Reach, Rendering, SchedulerDriver
from clusterforge.schedulers.kubernetes.control import NAME, KubeControl
from clusterforge.vocab import DeviceKind

__all__ = ["KUBERNETES"]

TITLE = "kubernetes layer (lab: real kubelets, SIMULATED GPUs)"


def _files(plan: Plan) -> dict[str, str]:
    prefix = f"{NAME}/"
    return {path.removeprefix(prefix): text for path, text in scheduler_files(plan).items() if path.startswith(prefix)}


def _queues(plan: Plan) -> tuple[Queue, ...]:
    return tuple(Queue(team.name, "ResourceQuota", team.gpus) for team in plan.services.teams)


def _control(reach: Reach) -> KubeControl | None:
    """A drain needs the API: `--kubeconfig FILE`, or `--stack` for the stack's own."""
    if NAME in reach.skip:
        return None
    if NAME not in reach.plan.schedulers:
        if reach.kubeconfig is not None:
            from clusterforge.schedulers.driver import Unreachable

            raise Unreachable(f"--kubeconfig {reach.kubeconfig}: the declaration runs no Kubernetes"
                              f" (schedulers: {', '.join(reach.plan.schedulers)})", usage=True)
        return None
    from clusterforge.schedulers.kubernetes.client import core_api

    core = core_api(reach.kubeconfig, reach.stack)
    if core is None:
        return None
    return KubeControl(core, frozenset(d.name for d in reach.plan.devices if d.kind == DeviceKind.SERVER))


def _checks(reach: Reach) -> LayerChecks | None:
    """The Kubernetes checks through the stack's kubeconfig, where control nodes run the control plane."""
    plan = reach.plan
    if NAME in reach.skip or NAME not in plan.schedulers or not any(d.kind == DeviceKind.CONTROL
                                                                    for d in plan.devices):
        return None
    from clusterforge.render.ansible_inventory import kubernetes_vars
    from clusterforge.schedulers.kubernetes.client import stack_api, stack_kubeconfig
    from clusterforge.verify.kube_checks import run_kube_checks

    stack = reach.secrets_stack
    try:
        text = stack_kubeconfig(stack)
    except Exception as exc:  # the engine or the stack is missing: reported, not a traceback
        return LayerChecks(None, f"stack {stack}: {exc}", TITLE)
    if text is None:
        return LayerChecks(None, f"stack {stack} has no kubeconfig (`clusterforge up` has not applied the control"
                                 " plane)", TITLE)
    from clusterforge.pulumi.kube.binaries import pinned_versions

    api, expected = stack_api(text), kubernetes_vars(plan)
    checks = run_kube_checks(api, expected, versions=pinned_versions())
    from clusterforge.verify.kueue_checks import run_kueue_checks

    checks += run_kueue_checks(api, expected)  # with Kueue declared: its queues and a probe Job through one
    return LayerChecks(tuple(checks), "", TITLE)


KUBERNETES = SchedulerDriver(
    name=NAME, label="Kubernetes",
    rendering=Rendering(f"{SCHEDULER_DIR}/{NAME}", _files, "cf_kubernetes"),
    application=Application("kubernetes.yml", ("k8s_control_plane", "k8s_registry", "k8s_node", "k8s_gpu", "k8s_kueue",
                                              "k8s_dns"),
                            "clusterforge:kubernetes:Kubernetes", more_playbooks=("k8s-nodes.yml",)),
    queues=_queues, control=_control, checks=_checks, reached_by="--kubeconfig FILE or --stack",
)
