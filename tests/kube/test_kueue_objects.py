"""The Kueue objects clusterforge renders (render/kueue.py) against Kueue's own CRD schemas: the pinned Kueue
release's CRDs (from its module source, scripts/setup-k8s.sh) applied to a real kube-apiserver on loopback,
then every rendered object sent with `kubectl apply --dry-run=server`, which runs the CRDs' OpenAPI schemas and
CEL rules and strict field validation. Real: the API server and the upstream CRDs; nothing is simulated."""

from __future__ import annotations

import copy

import pytest
import yaml

pytest.importorskip("kubernetes")
from kueue_helpers import REPO_ROOT, kubectl  # noqa: E402

DECLARATIONS = ("lab", "gb200-nvl72-su", "superpod-4su", "roce-128gpu", "dgx-b200-su")


def _objects(declaration: str) -> list[dict]:
    from clusterforge.loading import load_and_plan
    from clusterforge.render.kueue import kueue_objects

    _, plan, _ = load_and_plan(REPO_ROOT / "inventory" / f"{declaration}.yaml")
    assert plan.queueing is not None, f"{declaration} declares Kubernetes, GPU nodes and teams"
    return kueue_objects(plan.queueing)


def _dry_run(api, objects: list[dict], check: bool = True):
    namespaces = [o for o in objects if o["kind"] == "Namespace"]
    if namespaces:  # the LocalQueues' namespaces exist for real: a dry run creates nothing
        kubectl(api, "apply", "-f", "-", stdin=yaml.safe_dump_all(namespaces))
    rest = [o for o in objects if o["kind"] != "Namespace"]
    return kubectl(api, "apply", "--dry-run=server", "--validate=strict", "-f", "-",
                   stdin=yaml.safe_dump_all(rest), check=check)


@pytest.mark.parametrize("declaration", DECLARATIONS)
def test_rendered_objects_pass_the_upstream_schemas(kueue_api, declaration):
    objects = _objects(declaration)
    done = _dry_run(kueue_api, objects)
    kinds = {o["kind"] for o in objects}
    assert {"Topology", "ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue"} <= kinds
    assert done.stdout.count("(server dry run)") == len([o for o in objects if o["kind"] != "Namespace"]), done.stdout


def test_the_rendered_manifest_file_is_what_the_role_applies(kueue_api, tmp_path):
    """scheduler/kubernetes/kueue.yaml itself (header comment and all), as roles/k8s_kueue sends it."""
    from clusterforge.loading import load_and_plan
    from clusterforge.render.scheduler import scheduler_files

    _, plan, _ = load_and_plan(REPO_ROOT / "inventory" / "lab.yaml")
    path = tmp_path / "kueue.yaml"
    path.write_text(scheduler_files(plan)["kubernetes/kueue.yaml"])
    kubectl(kueue_api, "apply", "-f", "-", stdin=yaml.safe_dump_all(
        [o for o in yaml.safe_load_all(path.read_text()) if o["kind"] == "Namespace"]))
    done = kubectl(kueue_api, "apply", "--server-side", "--dry-run=server", "--field-manager", "clusterforge",
                   "-f", str(path))
    assert "clusterqueue.kueue.x-k8s.io/research serverside-applied (server dry run)" in done.stdout, done.stdout


@pytest.mark.parametrize("breakage, refusal", [
    ("hostname-not-last", "kubernetes.io/hostname label can only be used at the lowest level"),
    ("unknown-field", "unknown field"),
    ("flavor-topology-without-labels", "at least one nodeLabel is required when topology is set"),
])
def test_the_schemas_refuse_a_broken_object(kueue_api, breakage, refusal):
    """The dry run is a real check: the same objects, broken one way, are refused with Kueue's own message."""
    objects = copy.deepcopy(_objects("lab"))
    by_kind = {o["kind"]: o for o in objects}
    if breakage == "hostname-not-last":
        levels = by_kind["Topology"]["spec"]["levels"]
        levels.insert(0, levels.pop())
    elif breakage == "unknown-field":
        by_kind["ClusterQueue"]["spec"]["borrowingLimit"] = 2
    else:
        by_kind["ResourceFlavor"]["spec"].pop("nodeLabels")
    done = _dry_run(kueue_api, objects, check=False)
    assert done.returncode != 0 and refusal in done.stderr, done.stdout + done.stderr
