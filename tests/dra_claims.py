"""What the tests of Kueue counting DRA claims share (tests/kube/test_kueue_admission.py,
tests/lab_cluster/test_kueue_dra_live.py): roles/k8s_gpu's DeviceClasses and ResourceClaimTemplates rendered
from the plan's classes (its templates, plain Jinja: they use nothing of Ansible's), and a Job whose pods take
their GPUs through a claim template, submitted to a team's LocalQueue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import yaml

ROLE = Path(__file__).resolve().parents[1] / "roles" / "k8s_gpu"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
TEMPLATES = ("dra-device-classes.yaml.j2", "dra-claim-templates.yaml.j2")


def role_dra_objects(classes: list[dict[str, Any]], teams: list[str], driver: str = "gpu.nvidia.com") -> list[dict]:
    """The DeviceClasses and the teams' ResourceClaimTemplates as roles/k8s_gpu renders them in DRA mode."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    values = {"ansible_managed": "test", "k8s_gpu_dra_device_classes": classes, "k8s_gpu_dra_driver": driver,
              "k8s_gpu_teams": [{"name": t} for t in teams]}
    return [d for name in TEMPLATES
            for d in yaml.safe_load_all(env.from_string((ROLE / "templates" / name).read_text()).render(**values))
            if d]


def claim_job(name: str, team: str, pods: int, template: str, labels: dict[str, str] | None = None,
              image: str = "registry.invalid/clusterforge/cf-gpu-probe:1", suspend: bool = True,
              claim_name: str | None = None) -> dict[str, Any]:
    """``pods`` pods, each with one claim made from the team's ResourceClaimTemplate ``template`` (or, with
    ``claim_name``, naming that ResourceClaim itself), tolerating the GPU taint, to the team's LocalQueue."""
    claim: dict[str, str] = ({"name": "gpu", "resourceClaimName": claim_name} if claim_name
                             else {"name": "gpu", "resourceClaimTemplateName": template})
    extra = labels or {}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": team, "labels": {**extra, QUEUE_LABEL: team}},
            "spec": {"suspend": suspend, "parallelism": pods, "completions": pods, "backoffLimit": 0,
                     "template": {"metadata": {"labels": extra}, "spec": {
                         "restartPolicy": "Never", "terminationGracePeriodSeconds": 5,
                         "resourceClaims": [claim],
                         "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                         "containers": [{"name": "work", "image": image, "args": ["--dra"],
                                         "resources": {"claims": [{"name": "gpu"}]}}]}}}}


def gpu_usage(workload: dict | None) -> int:
    """The nvidia.com/gpu Kueue's admission of a Workload charges (0 before admission)."""
    admission = ((workload or {}).get("status") or {}).get("admission") or {}
    return sum(int((ps.get("resourceUsage") or {}).get("nvidia.com/gpu", 0))
               for ps in admission.get("podSetAssignments", []))


def role_team_quotas(teams: list[dict[str, Any]], classes: list[dict[str, Any]]) -> list[dict]:
    """The teams' Namespaces and ResourceQuotas as roles/k8s_gpu renders them in DRA mode (team-quotas.yaml.j2,
    its vars' quota key suffix; k8s_gpu_modes as the role's vars compute it where a node uses DRA)."""
    suffix = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["k8s_gpu_dra_quota_suffix"]
    values = {"ansible_managed": "test", "k8s_gpu_modes": ["dra"], "k8s_gpu_teams": teams,
              "k8s_gpu_dra_device_classes": classes, "k8s_gpu_dra_quota_suffix": suffix}
    text = jinja2.Environment().from_string((ROLE / "templates" / "team-quotas.yaml.j2").read_text()).render(**values)
    return [d for d in yaml.safe_load_all(text) if d]
