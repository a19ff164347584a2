"""Component wiring under Pulumi's mocks (no engine): types, parents, one resource per planned object."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pulumi
import pytest

from clusterforge.loading import load_and_plan
from clusterforge.paths import workspace
from clusterforge.pulumi.program import SERVER_KINDS, SWITCH_KINDS, declare_cluster
from clusterforge.pulumi.settings import StackSettings
from clusterforge.render import render_tree
from clusterforge.targets import target

REPO = workspace()
INVENTORY = REPO / "inventory" / "lab.yaml"


class RecordingMocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.resources: list[pulumi.runtime.MockResourceArgs] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        self.resources.append(args)
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


def _settings(tmp_path: Path, **overrides) -> StackSettings:
    values = {"repo": REPO, "stack": "mock", "inventory": INVENTORY, "target": "files", "work_dir": tmp_path,
              "switch_config_dir": tmp_path / "switches", "provision": False, "verify": False}
    values = {**values, **overrides}
    return StackSettings(**{**values, "target": target(values["target"])})


def _declare(tmp_path: Path, inventory: Path = INVENTORY, **overrides):
    """The mock's records and the plan once ``inventory`` is declared with these settings and the site resolved."""
    mocks = RecordingMocks()
    pulumi.runtime.set_mocks(mocks, project="clusterforge-cluster", stack="mock", preview=True)
    spec, plan, _ = load_and_plan(inventory)
    site = declare_cluster(plan, render_tree(plan), _settings(tmp_path, inventory=inventory, **overrides))

    @pulumi.runtime.test
    def wait():
        return site.urn

    wait()
    return mocks, plan


def _declare_lab_provisioning(tmp_path: Path, **overrides):
    """``_declare`` on the lab target with provisioning on (a playbook that does nothing)."""
    playbook = tmp_path / "noop.yml"
    playbook.write_text("- hosts: all\n  tasks: []\n")
    return _declare(tmp_path, target="lab", provision=True, playbook=playbook, **overrides)


@pytest.fixture
def declared(tmp_path: Path):
    """URN of every registered resource, and the mock's records, for the lab declared with `files`."""
    mocks = RecordingMocks()
    pulumi.runtime.set_mocks(mocks, project="clusterforge-cluster", stack="mock", preview=True)
    spec, plan, _ = load_and_plan(INVENTORY)
    tree = render_tree(plan)
    files = tree.files()
    site = declare_cluster(plan, tree, _settings(tmp_path))
    resources = [site, *site.networks, *site.racks, *site.units]
    resources += [r for unit in site.units for r in unit.racks]
    urns = pulumi.Output.all(*[r.urn for r in resources])
    outcome: dict = {}

    @pulumi.runtime.test
    def collect():
        return urns.apply(lambda values: outcome.setdefault("urns", values))

    collect()
    return plan, files, mocks, outcome["urns"]


def test_one_component_per_planned_object(declared) -> None:
    plan, files, mocks, _ = declared
    counts = Counter(r.typ for r in mocks.resources)
    assert counts["clusterforge:site:Site"] == 1
    assert counts["clusterforge:network:Network"] == len(plan.fabric)
    assert counts["clusterforge:su:ScalableUnit"] == 1
    assert counts["clusterforge:facility:Rack"] == len(plan.racks)
    assert counts["clusterforge:facility:Pdu"] == len(plan.pdus)
    assert counts["clusterforge:compute:Server"] == sum(d.kind in SERVER_KINDS for d in plan.devices)
    assert counts["clusterforge:fabric:Switch"] == sum(d.kind in SWITCH_KINDS for d in plan.devices)


def test_every_switch_with_rendered_files_gets_a_switch_config(declared) -> None:
    plan, files, mocks, _ = declared
    configs = {r.inputs["device"] for r in mocks.resources if r.typ.endswith("clusterforge:SwitchConfig")}
    assert configs == {path.split("/")[1] for path in files if path.startswith("switches/")}


def test_switch_config_content_hash_matches_its_files(declared) -> None:
    from clusterforge.pulumi._hashing import files_hash

    _, _, mocks, _ = declared
    for resource in mocks.resources:
        if resource.typ.endswith("clusterforge:SwitchConfig"):
            assert resource.inputs["content_hash"] == files_hash(resource.inputs["files"])


def test_racks_nest_under_their_su_or_the_site(declared) -> None:
    """The mock monitor's URNs carry the parent's type (the engine's carry the whole chain)."""
    plan, _, _, urns = declared
    rack_urns = {urn.rsplit("::", 1)[1]: urn for urn in urns if "$clusterforge:facility:Rack::" in urn}
    for rack in plan.racks:
        parent_type = rack_urns[rack.name].split("::")[2].split("$")[-2]
        assert parent_type == ("clusterforge:su:ScalableUnit" if rack.su is not None else "clusterforge:site:Site")


def test_no_provisioning_resources_when_the_flags_are_off(declared) -> None:
    _, _, mocks, _ = declared
    kinds = {r.typ.rsplit(":", 1)[1] for r in mocks.resources}
    assert not kinds & {"HostProvision", "Verification", "Lab"}


def test_lab_target_declares_the_lab_before_provisioning(tmp_path: Path) -> None:
    mocks, plan = _declare_lab_provisioning(tmp_path)
    by_type = {r.typ.rsplit(":", 1)[1]: r for r in mocks.resources}
    assert by_type["Lab"].inputs["lab"] == "lab"
    assert by_type["HostProvision"].inputs["extravars"] == {"cf_lab": True}
    assert by_type["HostProvision"].inputs["group"] == "su01"
    assert by_type["HostProvision"].inputs["hosts"] == sorted(
        d.name for d in plan.devices if d.su == 1 and d.kind in SERVER_KINDS)
    order = [r.typ.rsplit(":", 1)[1] for r in mocks.resources]
    assert order.index("Lab") < order.index("HostProvision")


def test_storage_servers_are_provisioned_before_the_units_and_verified(tmp_path: Path) -> None:
    mocks, plan = _declare_lab_provisioning(tmp_path, verify=True)
    by_name = {r.name: r for r in mocks.resources}
    storage = sorted(d.name for d in plan.devices if d.kind == "storage")
    assert by_name["storage-provision"].inputs["group"] == "storage_servers"
    assert by_name["storage-provision"].inputs["hosts"] == storage
    assert by_name["storage-verify"].inputs["hosts"] == storage
    order = [r.name if not r.typ.endswith(":Lab") else "<lab>" for r in mocks.resources]
    # the SU's servers mount the storage servers' volumes: their provisioning waits for it
    assert order.index("<lab>") < order.index("storage-provision") < order.index("su01-provision")


def test_every_pdu_of_a_side_is_a_component(tmp_path: Path) -> None:
    """superpod-4su: two PDU pairs per compute rack (63 A circuits), each its own Pdu component."""
    mocks, plan = _declare(tmp_path, REPO / "inventory" / "superpod-4su.yaml")
    pdus = sorted(r.name for r in mocks.resources if r.typ == "clusterforge:facility:Pdu")
    assert pdus == sorted(p.name for p in plan.pdus)
    assert [p for p in pdus if p.startswith("su01-r01-")] == [
        "su01-r01-pdu-a", "su01-r01-pdu-a2", "su01-r01-pdu-b", "su01-r01-pdu-b2"]


def test_control_nodes_get_the_kubernetes_step_with_secret_certificates(tmp_path: Path):
    """The lab's control node: a KubePki (its bundle an additional secret output), a HostProvision of
    playbooks/kubernetes.yml over control_nodes after every SU, and one of playbooks/k8s-nodes.yml over the GPU
    servers after it, both with the bundle as secret extra vars."""
    mocks, plan = _declare(tmp_path, target="lab", provision=True, image=False)
    by_type = {}
    for r in mocks.resources:
        by_type.setdefault(r.typ, []).append(r)
    (component,) = by_type["clusterforge:kubernetes:Kubernetes"]
    (pki,) = [r for r in mocks.resources if r.name == "kubernetes-pki"]
    assert pki.inputs["node_ips"] == [next(d.management_ip for d in plan.devices if d.kind == "control")]
    (control_plane,) = [r for r in mocks.resources if r.name == "kubernetes-control-plane"]
    assert control_plane.inputs["group"] == "control_nodes"
    assert control_plane.inputs["playbook"].endswith("playbooks/kubernetes.yml")
    assert control_plane.inputs["extravars"]["cf_lab"] is True
    assert "cf_k8s_pki" not in control_plane.inputs["extravars"]  # only in secret_vars
    # inventory/lab.yaml runs Kueue (kubernetes.kueue): its build cache is passed and its unit watched
    assert plan.queueing is not None and plan.queueing.enabled
    assert control_plane.inputs["extravars"]["cf_kueue_dir"].rsplit("/", 1)[-1].startswith("kueue-")
    assert "kueue" in control_plane.inputs["services"]
    # the GPU servers join as nodes (real kubelets): the nodes step's drift probe asks the control node's API server
    (nodes,) = [r for r in mocks.resources if r.name == "kubernetes-nodes"]
    gpu = sorted(d.name for d in plan.devices if d.kind == "server" and d.gpus)
    assert gpu and sorted(nodes.inputs["nodes"]) == gpu and sorted(nodes.inputs["hosts"]) == gpu
    assert nodes.inputs["playbook"].endswith("playbooks/k8s-nodes.yml")
    assert nodes.inputs["nodes_via"] == next(d.name for d in plan.devices if d.kind == "control")
    assert "cf_k8s_pki" not in nodes.inputs["extravars"]
    assert {"containerd", "kubelet", "kube-proxy", "cf-sim-gpu-plugin"} <= set(nodes.inputs["services"])
    units = {f"su{d.su:02d}" for d in plan.devices if d.su}
    assert units and component.name == "kubernetes"


def test_the_rendered_tree_up_writes_holds_the_kueue_objects_the_kueue_play_reads(tmp_path: Path):
    """`up` writes the Ansible tree and the files the plays read beside it: the Kueue play's manifest too
    (cf_kubernetes.queueing.manifest, relative to the rendered tree)."""
    import yaml

    from clusterforge.pulumi.program import write_rendered_inventory

    _, plan, _ = load_and_plan(INVENTORY)
    settings = _settings(tmp_path, target="lab", provision=True)
    write_rendered_inventory(render_tree(plan), settings)
    host_vars = yaml.safe_load((settings.rendered_dir / "ansible" / "host_vars" / "ctl-01.yml").read_text())
    manifest = settings.rendered_dir / host_vars["cf_kubernetes"]["queueing"]["manifest"]
    kinds = [d["kind"] for d in yaml.safe_load_all(manifest.read_text()) if d]
    assert "ClusterQueue" in kinds and "LocalQueue" in kinds


def test_off_the_lab_the_kubernetes_step_records_the_gpu_layer_for_destroy(tmp_path: Path):
    """Off the lab the control node outlives `destroy`: a KubeGpuLayer records what k8s_gpu applies (the plan's
    teams and GPU nodes, the role's names) with the admin kubeconfig as a secret; on the lab there is none."""
    from clusterforge.pulumi.kube.gpu_layer import planned_layer, role_defaults
    from clusterforge.render.ansible_inventory import kubernetes_vars

    lab, _ = _declare(tmp_path / "lab", target="lab", provision=True, image=False)
    assert not [r for r in lab.resources if r.name == "kubernetes-gpu-layer"]
    mocks, plan = _declare(tmp_path / "files", target="files", provision=True)
    (layer,) = [r for r in mocks.resources if r.name == "kubernetes-gpu-layer"]
    planned = planned_layer(kubernetes_vars(plan), role_defaults()).to_dict()
    assert layer.inputs["planned"] == {k: v for k, v in planned.items() if v is not None}  # Pulumi drops None
    assert layer.inputs["planned"]["teams"] == [t.name for t in plan.services.teams]
    control = next(d for d in plan.devices if d.kind == "control")
    assert layer.inputs["api_server"] == f"https://{control.management_ip}:6443"


def test_no_control_nodes_no_kubernetes_step(tmp_path: Path):
    text = INVENTORY.read_text().replace("control:\n  nodes: 1\n  server_model: control-1u\n", "")
    # Slurm needs a control node too (slurmctld): the declaration without one schedules with Kubernetes alone
    text = text.replace("schedulers: [kubernetes, slurm]", "schedulers: [kubernetes]").replace(
        "slurm:\n  hardware: simulated\n", "")
    (tmp_path / "inv").mkdir()
    import shutil

    shutil.copytree(INVENTORY.parent / "catalog", tmp_path / "inv" / "catalog")
    (tmp_path / "inv" / "lab.yaml").write_text(text)
    mocks, _ = _declare(tmp_path, inventory=tmp_path / "inv" / "lab.yaml", target="lab", provision=True, image=False)
    assert not [r for r in mocks.resources if r.typ == "clusterforge:kubernetes:Kubernetes"]


def test_slurm_gets_a_secret_munge_key_and_a_controller_and_a_node_step(tmp_path: Path):
    """The lab asks for Slurm: a MungeKey (its key an additional secret output), one HostProvision of
    playbooks/slurm.yml over slurm_controller (the first control node, its units probed) and one over
    slurm_nodes (every GPU server); the key only in secret_vars."""
    from clusterforge.pulumi.slurm.component import CONTROLLER_UNITS, NODE_UNITS

    mocks, plan = _declare(tmp_path, target="lab", provision=True, image=False)
    (component,) = [r for r in mocks.resources if r.typ == "clusterforge:slurm:Slurm"]
    (key,) = [r for r in mocks.resources if r.name == "slurm-munge-key"]
    assert key.inputs["cluster"] == plan.cluster
    steps = {r.name: r for r in mocks.resources if r.name in ("slurm-controller", "slurm-nodes")}
    controller, nodes = steps["slurm-controller"], steps["slurm-nodes"]
    assert controller.inputs["group"] == "slurm_controller" and controller.inputs["hosts"] == ["ctl-01"]
    assert controller.inputs["services"] == list(CONTROLLER_UNITS)
    assert nodes.inputs["group"] == "slurm_nodes" and nodes.inputs["services"] == list(NODE_UNITS)
    assert nodes.inputs["hosts"] == [n.name for n in plan.slurm.nodes]
    for step in (controller, nodes):
        assert step.inputs["playbook"].endswith("playbooks/slurm.yml")
        assert "cf_slurm_munge_key" not in step.inputs["extravars"]  # only in secret_vars
        assert step.inputs["extravars"]["cf_lab"] is True
    assert component.name == "slurm"


def test_kubernetes_only_declaration_has_no_slurm_step(tmp_path: Path):
    text = INVENTORY.read_text().replace("schedulers: [kubernetes, slurm]", "schedulers: [kubernetes]")
    text = text.replace("slurm:\n  hardware: simulated\n", "")
    (tmp_path / "inv").mkdir()
    import shutil

    shutil.copytree(INVENTORY.parent / "catalog", tmp_path / "inv" / "catalog")
    (tmp_path / "inv" / "lab.yaml").write_text(text)
    mocks, _ = _declare(tmp_path, inventory=tmp_path / "inv" / "lab.yaml", target="lab", provision=True, image=False)
    assert not [r for r in mocks.resources if r.typ == "clusterforge:slurm:Slurm"]
    assert [r for r in mocks.resources if r.typ == "clusterforge:kubernetes:Kubernetes"]


def _depends_on(monkeypatch, tmp_path: Path, **overrides) -> dict[str, set[str]]:
    """Each HostProvision's name -> the names of the resources it was declared to depend on (Pulumi's mocks do
    not record dependencies, so the constructor's options are read as the program passes them)."""
    from clusterforge.pulumi.providers import host_provision

    seen: dict[str, set[str]] = {}
    original = host_provision.HostProvision.__init__

    def recording(self, name, args, opts=None):
        seen[name] = {r._name for r in ((opts.depends_on if opts else None) or [])}
        original(self, name, args, opts)

    monkeypatch.setattr(host_provision.HostProvision, "__init__", recording)
    _declare(tmp_path, provision=True, image=False, **overrides)
    return seen


def test_both_schedulers_wait_for_the_hosts_and_not_for_each_other(monkeypatch, tmp_path):
    """The Kubernetes step and both Slurm steps start once the storage servers and every SU's hosts are
    provisioned (the SU's provisioning, not its host checks), side by side: none waits for another, slurmd
    not for the controller (its role waits for slurmctld to see the node)."""
    seen = _depends_on(monkeypatch, tmp_path, target="lab")
    steps = ("kubernetes-control-plane", "slurm-controller", "slurm-nodes")
    for step in steps:
        assert {"lab", "su01-provision", "storage-provision"} <= seen[step], seen[step]
        assert not seen[step] & {"su01", "su01-verify", *steps}, seen[step]


def test_monitoring_runs_on_the_control_node_after_the_hosts_and_both_schedulers(monkeypatch, tmp_path):
    """The lab plans monitoring on ctl-01: one HostProvision of playbooks/monitoring.yml over control_nodes (its own
    artifacts directory, the exporter's, Prometheus's, Alertmanager's and the lab alert receiver's units probed), after
    every SU's provisioning, the storage servers and both schedulers' steps (the same control node)."""
    from clusterforge.pulumi.monitoring import LAB_RECEIVER_UNITS, MONITORING_UNITS

    mocks, plan = _declare(tmp_path / "lab", target="lab", provision=True, image=False)
    (step,) = [r for r in mocks.resources if r.name == "monitoring"]
    assert plan.monitoring is not None and step.inputs["hosts"] == [plan.monitoring.host]
    assert step.inputs["group"] == "control_nodes" and step.inputs["playbook"].endswith("playbooks/monitoring.yml")
    # and on the lab its alert receiver (LAB ONLY)
    assert step.inputs["services"] == [*MONITORING_UNITS, *LAB_RECEIVER_UNITS]
    assert step.inputs["extravars"]["cf_lab"] is True
    assert step.inputs["private_data_dir"].endswith("provision/monitoring")
    seen = _depends_on(monkeypatch, tmp_path / "deps", target="lab")
    assert {"lab", "su01-provision", "storage-provision", "kubernetes", "slurm"} <= seen["monitoring"]
    # and no step without provisioning by the site playbook
    off, _ = _declare(tmp_path / "off", target="lab", provision=False)
    assert not [r for r in off.resources if r.name == "monitoring"]
