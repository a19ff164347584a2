"""Ansible inventory (groups by SU, rack, role) and host_vars, per docs/CONTRACTS.md."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from clusterforge.fanout import fan_out
from clusterforge.plan import Device, Plan
from clusterforge.render.slurm import ACCOUNTS_FILE, CONFIG_FILES, NCCL_DIR, SLURM_DIR
from clusterforge.render.slurm.accounts import accounts_data
from clusterforge.render.slurm.node_files import simulated_gpu_files
from clusterforge.render.switches.network_os import ansible_network_vars
from clusterforge.render.yamltext import to_ansible_yaml
from clusterforge.vocab import DeviceKind, Plane

__all__ = ["render_ansible", "kubernetes_vars", "slurm_vars", "ansible_tree", "host_vars", "host_vars_text",
           "group_name", "ANSIBLE_DIR", "HOST_GROUPS", "SLURM_GROUPS"]

ANSIBLE_DIR = "ansible"

HEADER = "# Rendered by clusterforge from the Plan. Do not edit: change the inventory declaration.\n"


def group_name(name: str) -> str:
    return name.replace("-", "_")


def host_vars(plan: Plan, device: Device) -> dict[str, Any]:
    facts = plan.server_facts(device)
    data_ifaces = [i.name for i in device.interfaces if i.plane == Plane.DATA]
    bmc = next((i for i in device.interfaces if i.plane == Plane.OOB), None)
    interfaces = []
    for iface in device.interfaces:
        if iface.plane == Plane.OOB:
            continue
        entry = iface.to_dict()
        entry.pop("speed_gbps", None)
        interfaces.append(entry)
    services = plan.services
    out: dict[str, Any] = {
        "ansible_host": device.management_ip,
        "cf_name": device.name,
        "cf_kind": device.kind,
        "cf_su": device.su,
        "cf_rack": device.rack,
        "cf_ru": device.ru,
        "cf_asset_id": device.asset_id,
        "cf_model": device.model,
        "cf_gpu_model": facts.gpu_model,
        "cf_gpu_count": facts.gpu_count,
        "cf_nvswitch": facts.nvswitch,
        "cf_interfaces": interfaces,
        "cf_bmc": {"ip": bmc.ip, "plane": Plane.OOB, "vlan": bmc.vlan} if bmc else None,
        "cf_roce": {**plan.host_roce.to_dict(), "interfaces": data_ifaces if plan.host_roce.enabled else []},
        "cf_software": services.software,
        "cf_time_servers": time_servers(plan),  # roles/time_sync
        # the GPU servers mount the tiers; the volumes and their allowed clients are the storage servers'
        "cf_storage": {key: value for key, value in services.storage.to_dict().items()
                       if key not in ("volumes", "clients")},
    }
    if plan.slurm is not None:
        out["cf_slurm"] = slurm_vars(plan, "node")
        if plan.slurm.simulated:  # the placeholder files gres.conf names (render/slurm/node_files.py)
            out["cf_slurm"]["simulated_gpu_files"] = simulated_gpu_files(facts.gpu_count)
    return out


def time_servers(plan: Plan) -> list[str]:
    """The declared NTP servers every host's time daemon asks (site.time_servers; none: the OS defaults)."""
    return list(plan.site_facts.time_servers) if plan.site_facts is not None else []


# The inventory group of each host kind (playbooks/site.yml plays on them by these names).
HOST_GROUPS = {DeviceKind.SERVER: "servers", DeviceKind.STORAGE: "storage_servers", DeviceKind.CONTROL: "control_nodes"}


REGISTRY_PORT = 5000  # the distribution registry's customary port
KUEUE_MANIFEST = "scheduler/kubernetes/kueue.yaml"  # relative to the rendered tree (render/scheduler.py)


def kubernetes_vars(plan: Plan) -> dict[str, Any]:
    """What the control plane, the nodes and the GPU layer are built from (playbooks/kubernetes.yml,
    playbooks/k8s-nodes.yml): the control nodes, every node's address, pod block, overlay MAC and labels
    (plan/kubernetes.py), the ranges, the GPU taint, the registry on the first control node, the teams, and the
    control plane's members and the API address every kubeconfig names (its virtual address with three control
    nodes: plan/control_plane.py)."""
    from clusterforge.plan.kubernetes import GPU_TAINT

    controls = [{"name": d.name, "ip": d.management_ip} for d in plan.devices if d.kind == DeviceKind.CONTROL]
    k8s = plan.kubernetes
    nodes = [n.to_dict() for n in k8s.nodes] if k8s is not None else []
    out: dict[str, Any] = {
        "control_nodes": controls,
        "gpu_nodes": [{"name": n.name, "gpu_model": n.gpu_model, "gpu_count": n.gpus, "labels": dict(n.labels)}
                      for n in (k8s.nodes if k8s is not None else ())],
        "teams": [t.to_dict() for t in plan.services.teams],
    }
    if k8s is not None:
        key, value, effect = GPU_TAINT
        if k8s.control_plane is not None:  # the members and the one address every kubeconfig names
            out["control_plane"] = k8s.control_plane.to_dict()
            out["api_server"] = k8s.control_plane.server
        out |= {"pod_cidr": k8s.pod_cidr, "service_cidr": k8s.service_cidr, "service_ip": k8s.service_ip,
                "dns_ip": k8s.dns_ip, "dns": k8s.dns.to_dict() if k8s.dns is not None else None,
                "overlay": k8s.to_dict()["overlay"], "nodes": nodes,
                "gpu_taints": [{"key": key, "value": value, "effect": effect}],
                # roles/k8s_gpu's DeviceClasses with k8s_gpu_mode: dra (plan/dra.py)
                "gpu_device_classes": [c.to_dict() for c in k8s.device_classes]}
        if controls:
            out["registry"] = {"address": f"{controls[0]['ip']}:{REGISTRY_PORT}", "port": REGISTRY_PORT,
                               "user": "clusterforge"}
    if plan.queueing is not None:  # Kueue (roles/k8s_kueue): the plan's queues and the rendered objects' file
        from clusterforge.plan.dra import kueue_device_class_mappings, team_device_quotas

        queueing = plan.queueing
        classes = k8s.device_classes if k8s is not None else ()
        out["queueing"] = queueing.to_dict() | {
            "manifest": KUEUE_MANIFEST,
            # Kueue counts the devices of every class as nvidia.com/gpu (its alpha DynamicResourceAllocation gate)
            "device_class_mappings": kueue_device_class_mappings(classes)}
        # each team's ResourceQuota in DRA mode also caps the devices its claims hold per class (roles/k8s_gpu):
        # the same GPUs as its requests.nvidia.com/gpu, declared or (Kueue on) its ceiling, per model
        for team in out["teams"]:
            team["dra_devices"] = team_device_quotas(classes, queueing, team["name"], ceiling=False)
        for team in out["queueing"]["quota_ceilings"]:
            team["dra_devices"] = team_device_quotas(classes, queueing, team["name"], ceiling=True)
    return out


# Inventory groups of the Slurm roles, with Slurm among the schedulers: the control nodes run slurmctld
# (the first also slurmdbd), the GPU servers slurmd.
SLURM_GROUPS = {DeviceKind.CONTROL: "slurm_controller", DeviceKind.SERVER: "slurm_nodes"}


def slurm_vars(plan: Plan, role: str) -> dict[str, Any]:
    """``cf_slurm``: where the rendered Slurm files are and what the roles need beside them. The same on
    every GPU server (no host's own value: it is part of the golden image profile); a node's nccl.conf is
    ``<config_dir>/nccl/<inventory_hostname>.conf``. Paths are relative to the rendered tree, the
    directory above the inventory's (``{{ inventory_dir }}/..``)."""
    slurm = plan.slurm
    assert slurm is not None
    out: dict[str, Any] = {
        "role": role,
        "version": slurm.version,
        "cluster_name": slurm.cluster_name,
        "hardware": "simulated" if slurm.simulated else "real",
        "gpu_detection": slurm.gpu_detection,
        "controllers": [{"name": c.name, "address": c.address} for c in slurm.controllers],
        "accounting_host": {"name": slurm.accounting_host.name, "address": slurm.accounting_host.address},
        "config_dir": SLURM_DIR,
        "config_files": [name for name in CONFIG_FILES if name != "topology.conf" or slurm.topology_plugin],
        "nccl_dir": f"{SLURM_DIR}/{NCCL_DIR}",
    }
    if role == "controller":
        out["accounts_file"] = f"{SLURM_DIR}/{ACCOUNTS_FILE}"
        out["accounts"] = accounts_data(slurm)["accounts"]
        out["nodes"] = [{"name": n.name, "gpus": n.gpus, "gpu_type": n.gpu_type} for n in slurm.nodes]
        out["partitions"] = [{"name": p.name, "nodes": list(p.nodes), "default": p.default}
                             for p in slurm.partitions]
    return out


def monitoring_vars(plan: Plan) -> dict[str, Any]:
    """``cf_monitoring`` on the monitoring host (roles/monitoring): where the rendered files are (relative to the
    rendered tree, as cf_slurm's), what Prometheus and Alertmanager listen on and how long samples are kept;
    with Kubernetes jobs planned, that the role makes Prometheus's service account and writes its token, and the
    control node Kueue's serving certificate is read from."""
    from clusterforge.plan.monitoring import ScrapeJob
    from clusterforge.render.monitoring import MONITORING_DIR, monitoring_files

    monitoring = plan.monitoring
    assert monitoring is not None
    jobs = monitoring.jobs()
    kueue = [t.host for t in monitoring.targets if t.job == ScrapeJob.KUEUE]
    return {
        "config_dir": MONITORING_DIR,
        "rule_files": sorted(path for path in monitoring_files(plan) if path.startswith("rules/")),
        "listen_address": monitoring.address,
        "prometheus_port": monitoring.prometheus_port,
        "alertmanager_port": monitoring.alertmanager_port,
        "retention_days": monitoring.retention_days,
        "retention_size_mb": -(-monitoring.retention_bytes // 2**20),
        "kubernetes": ScrapeJob.KUBE_APISERVER in jobs or ScrapeJob.KUBELET in jobs,
        "kueue_host": kueue[0] if kueue else "",
    }


def render_ansible(plan: Plan) -> dict[str, str]:
    """The Ansible tree under ansible/ (the writer's layout)."""
    return {f"{ANSIBLE_DIR}/{path}": text for path, text in ansible_tree(plan).items()}


def host_vars_text(plan: Plan, device: Device) -> str:
    """host_vars/<host>.yml of a GPU server, a storage server or a control node."""
    if device.kind == DeviceKind.SERVER:
        return HEADER + to_ansible_yaml(host_vars(plan, device))
    out: dict[str, Any] = {
        "ansible_host": device.management_ip, "cf_name": device.name, "cf_kind": device.kind,
        "cf_rack": device.rack, "cf_interfaces": [i.to_dict() for i in device.interfaces if i.plane != Plane.OOB],
        "cf_time_servers": time_servers(plan),
    }
    if device.kind == DeviceKind.STORAGE:
        out["cf_storage"] = plan.services.storage.to_dict()
    if device.kind == DeviceKind.CONTROL:
        out["cf_kubernetes"] = kubernetes_vars(plan)
        if plan.slurm is not None:
            out["cf_slurm"] = slurm_vars(plan, "controller")
    if plan.monitoring is not None and plan.monitoring.host == device.name:
        out["cf_monitoring"] = monitoring_vars(plan)
    return HEADER + to_ansible_yaml(out)


def ansible_tree(plan: Plan, workers: int | None = None) -> dict[str, str]:
    """inventory.yml and host_vars/<host>.yml, relative to the Ansible directory.

    host_vars are one pure function per host, so large plans are split over cores (fanout.py)."""
    groups: dict[str, list[str]] = defaultdict(list)
    switch_hosts: dict[str, dict[str, Any]] = {}
    hosts = [device for device in plan.devices if device.kind in DeviceKind.HOSTS]
    texts = fan_out(lambda device: host_vars_text(plan, device), hosts, workers)
    files = {f"host_vars/{device.name}.yml": text for device, text in zip(hosts, texts, strict=True)}
    for device in plan.devices:
        if device.kind in DeviceKind.HOSTS:
            groups[HOST_GROUPS[device.kind]].append(device.name)
            if device.su is not None:
                groups[f"su{device.su:02d}"].append(device.name)
            if device.rack:
                groups[group_name(device.rack)].append(device.name)
            groups[f"role_{group_name(device.kind)}"].append(device.name)
            if plan.slurm is not None and device.kind in SLURM_GROUPS:
                groups[SLURM_GROUPS[device.kind]].append(device.name)
        elif device.kind != DeviceKind.PDU:
            switch_hosts[device.name] = {"ansible_host": device.management_ip, "cf_kind": device.kind,
                                         "cf_plane": device.plane, "cf_model": device.model,
                                         **(ansible_network_vars(plan.plane(device.plane).nos) if device.plane
                                            else {})}
            groups[f"role_{group_name(device.kind)}"].append(device.name)
    children: dict[str, Any] = {
        "servers": {"hosts": {name: None for name in groups.pop("servers", [])}},
        "switches": {"hosts": switch_hosts},
    }
    for group in ("storage_servers", "control_nodes", *SLURM_GROUPS.values()):
        if group in groups:
            children[group] = {"hosts": {name: None for name in groups.pop(group)}}
    for name in sorted(groups):
        children[name] = {"hosts": {host: None for host in groups[name]}}
    inventory = {"all": {"vars": {"cf_cluster": plan.cluster, "cf_site": plan.site}, "children": children}}
    files["inventory.yml"] = HEADER + to_ansible_yaml(inventory)
    return files
