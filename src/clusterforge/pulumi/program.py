"""The stack's composition: Plan + rendered files + stack settings in, one Site component tree out.

This only groups what the Plan already decided (devices by rack, racks by SU, files by switch) and
picks each resource's delivery target from the settings. Declaration order, top down:

  1. Site                        the root
  2. Network per plane           data, storage, management, oob (as the Plan's fabric summary)
  3. HostImage per profile       lab target: the golden images the GPU servers and the control nodes boot
                                 (built once, one after another: their builders share an address block)
     Lab                         lab target only: the emulated hosts (before anything reaches them)
     MetalServer per BMC server  lab target: the VM installed through its BMC (after the Lab, before its SU)
  4. site Racks                  spines, aggregation, storage: Pdu / Server / Switch (+ SwitchConfig)
  5. fabric SwitchConfig         fabric-wide files (InfiniBand subnet manager), when rendered
  6. storage HostProvision       the storage servers (their volumes), then their Verification
  7. ScalableUnit per SU         its Racks (Pdu / Server / Switch + SwitchConfig), then
     HostProvision               after the SU's switch configs, the lab and the storage servers, then
     Verification                after HostProvision
  8. Kubernetes                  the control plane on the control nodes, after every SU (off the lab, then
                                 KubeGpuLayer: what `destroy` removes from the API server)
  9. Slurm                       MungeKey, the controller, then slurmd on the GPU servers, after every SU
                                 (and Kubernetes), when the declaration asks for Slurm
 10. monitoring HostProvision    playbooks/monitoring.yml on the control nodes (node_exporter; Prometheus and
                                 Alertmanager on the monitoring host), after every SU and the schedulers' steps,
                                 when the plan has monitoring
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi

from clusterforge import paths
from clusterforge.plan import Device, Plan
from clusterforge.plan import Rack as PlannedRack
from clusterforge.plan.stacks import SITE, WHOLE, StackPart, part_stack, split_stacks
from clusterforge.pulumi._hashing import files_hash, text_hash, tree_hash
from clusterforge.pulumi.compute import ServerArgs
from clusterforge.pulumi.fabric import SwitchArgs
from clusterforge.pulumi.facility import PduArgs, RackArgs
from clusterforge.pulumi.images import ImageSpec, booting, lab_images
from clusterforge.pulumi.kube.binaries import MissingBinaries, kube_extravars, kubernetes_bin_dir
from clusterforge.pulumi.kube.component import (
    CONTROL_GROUP,
    CONTROL_PLANE_UNITS,
    KUEUE_UNITS,
    NODE_UNITS,
    NODES_GROUP,
    NODES_PLAYBOOK,
    REGISTRY_UNITS,
    SIMULATED_GPU_UNITS,
    KubernetesArgs,
)
from clusterforge.pulumi.kube.gpu_layer import planned_layer, role_defaults
from clusterforge.pulumi.metal import metal_servers
from clusterforge.pulumi.monitoring import monitoring_args
from clusterforge.pulumi.network import NetworkArgs
from clusterforge.pulumi.providers.host_image import HostImageArgs
from clusterforge.pulumi.providers.host_provision import HostProvisionArgs
from clusterforge.pulumi.providers.lab import LabArgs
from clusterforge.pulumi.providers.metal_server import MetalServerArgs
from clusterforge.pulumi.providers.switch_config import SwitchConfigArgs, SwitchTarget
from clusterforge.pulumi.providers.verification import VerificationArgs
from clusterforge.pulumi.scalable_unit import ScalableUnitArgs
from clusterforge.pulumi.settings import StackSettings
from clusterforge.pulumi.site import Site, SiteArgs
from clusterforge.pulumi.slurm.wiring import slurm_args
from clusterforge.render.ansible_inventory import ANSIBLE_DIR, kubernetes_vars
from clusterforge.render.switches import FABRIC_DIR
from clusterforge.render.tree import RenderedTree
from clusterforge.vocab import DeviceKind

__all__ = ["DeclaredStack", "declare", "declare_cluster", "write_rendered_inventory", "SERVER_KINDS", "SWITCH_KINDS"]

SERVER_KINDS = DeviceKind.HOSTS
SWITCH_KINDS = DeviceKind.SWITCHES
KUBERNETES_PLAYBOOK = "kubernetes.yml"
STORAGE_GROUP = "storage_servers"  # the inventory group of the storage servers (render.ansible_inventory)
# What Ansible runs: a change here re-provisions every group.
VERIFY_NOT_HOST_CHECKS = ("gpu",)  # GPU acceptance is not part of the per-SU host checks


def _suite_hash() -> str:
    """The host checks as shipped (names relative to the checkout, src/clusterforge/verify/..., or site-packages)."""
    verify_dir = paths.PACKAGE_DIR / "verify"
    base = paths.PACKAGE_DIR.parent
    base = base.parent if base.name == "src" else base
    return tree_hash([p for p in sorted(verify_dir.iterdir()) if p.name not in VERIFY_NOT_HOST_CHECKS], base)


def _switch_target(settings: StackSettings, device: Device) -> SwitchTarget:
    if settings.target.switches_over_ssh:
        assert settings.ssh is not None
        host = device.management_ip
        if host is None:
            raise ValueError(f"{device.name}: no management address to push config to")
        return SwitchTarget("ssh", host=host, user=settings.ssh.user, port=settings.ssh.port,
                            known_hosts=settings.ssh.known_hosts, remote_dir=settings.ssh.remote_dir,
                            apply_command=settings.ssh.apply_command)
    # files: the operator's directory; lab: the stack's work dir, the lab reads frr.conf from the topology
    return SwitchTarget("file", path=str(settings.switch_config_dir))


def _rack_args(rack: PlannedRack, plan: Plan, devices: list[Device], tree: RenderedTree,
               settings: StackSettings) -> RackArgs:
    credential = settings.switch_credential if settings.target.switches_over_ssh else None
    return RackArgs(
        rack=rack,
        pdus=tuple(PduArgs(p) for p in plan.pdus if p.rack == rack.name),
        servers=tuple(ServerArgs(d) for d in devices if d.kind in SERVER_KINDS),
        switches=tuple(SwitchArgs(d, dict(tree.switch(d.name)), _switch_target(settings, d), credential,
                                  nos=tree.nos(d.name))
                       for d in devices if d.kind in SWITCH_KINDS),
    )  # fmt: skip


def _require_module(flag: str, module: str) -> None:
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise RuntimeError(f"clusterforge:{flag} is true but {module} is not installed here;"
                           f" set `clusterforge:{flag} false` (or --no-{flag}) to apply without it")


def _group_args(group: str, hosts: tuple[str, ...], tree: RenderedTree, settings: StackSettings,
                roles_hash: str | None, suite_hash: str | None
                ) -> tuple[HostProvisionArgs | None, VerificationArgs | None]:
    """Provisioning and verification of one inventory group (an SU, or the storage servers)."""
    inventory_path = str(settings.rendered_dir / "ansible" / "inventory.yml")
    # The lab target replaces this with the Lab's ssh_config (ScalableUnit wires it).
    ssh_config = str(settings.host_ssh_config) if settings.host_ssh_config else None
    provision = verification = None
    if settings.provision:
        assert roles_hash is not None
        host_vars = {f"{ANSIBLE_DIR}/host_vars/{h}.yml": tree.host_vars(h) for h in hosts}  # hash keys as written
        secret_vars = None
        if settings.bmc_password is not None:
            secret_vars = pulumi.Output.from_input(settings.bmc_password).apply(lambda p: {"cf_bmc_password": p})
        provision = HostProvisionArgs(
            group=group, hosts=hosts, inventory_path=inventory_path,
            private_data_dir=str(settings.work_dir / "provision" / group), roles_hash=roles_hash,
            host_vars_hash=files_hash(host_vars),
            playbook=str(settings.playbook) if settings.playbook else None,
            playbook_hash=tree_hash([settings.playbook], settings.playbook.parent) if settings.playbook else None,
            tags=settings.provision_tags, extravars={"cf_lab": True} if settings.target.emulates else {},
            ssh_config=ssh_config, secret_vars=secret_vars,
        )  # fmt: skip
    if settings.verify:
        assert suite_hash is not None
        verification = VerificationArgs(
            group=group, hosts=hosts, inventory_path=inventory_path, suite_hash=suite_hash,
            target=settings.target.reach.name, ssh_config=ssh_config,
            report_path=str(settings.work_dir / "verify" / f"{group}.json"),
            allow_failures=settings.allow_verify_failures, run=settings.verify_run,
        )  # fmt: skip
    return provision, verification


def _unit_args(su: int, racks: tuple[RackArgs, ...], tree: RenderedTree, settings: StackSettings,
               roles_hash: str | None, suite_hash: str | None) -> ScalableUnitArgs:
    hosts = tuple(s.device.name for r in racks for s in r.servers)
    provision, verification = _group_args(f"su{su:02d}", hosts, tree, settings, roles_hash, suite_hash)
    return ScalableUnitArgs(su=su, racks=racks, provision=provision, verification=verification)


def _image_args(plan: Plan, tree: RenderedTree, settings: StackSettings) -> tuple[HostImageArgs, ...]:
    """The golden images the lab's GPU servers and control nodes boot (lab target, site playbook provisioning
    only)."""
    if not settings.target.emulates or not settings.image or not settings.provision or settings.playbook:
        return ()
    # a bare-metal server's image is built too: the image method deploys it inside the server's disk image
    return tuple(HostImageArgs(name=spec.name, profile=spec.profile, hosts=spec.hosts,
                               work_dir=str(settings.work_dir / "image" / spec.name),
                               extravars={**spec.extravars, "cf_lab": True}, playbook=spec.playbook)
                 for spec in lab_images(plan, tree) if spec.hosts)


def _lab_args(plan: Plan, tree: RenderedTree, images: tuple[HostImageArgs, ...] = (),
             bmc_password: pulumi.Input[str] | None = None) -> tuple[LabArgs, tuple[MetalServerArgs, ...]]:
    """The container lab, and the bare-metal servers (VMs behind BMCs) taken out of it."""
    from clusterforge.lab.from_plan import lab_topology

    topology, metal = metal_servers(plan, lab_topology(plan, tree), bmc_password,
                                    {host: i.name for i in images for host in i.hosts})
    if images:
        topology = booting(topology, [ImageSpec(i.name, i.profile, i.hosts) for i in images])
    topology_json = topology.model_dump_json()
    return LabArgs(lab=topology.name, topology_json=topology_json, topology_hash=text_hash(topology_json)), metal


def _kubernetes_args(plan: Plan, tree: RenderedTree, settings: StackSettings,
                     roles_hash: str | None) -> KubernetesArgs | None:
    """The control plane on the control nodes (playbooks/kubernetes.yml) and the GPU servers joined as its nodes
    (playbooks/k8s-nodes.yml), when control nodes are declared and the site playbook provisions (a custom
    `playbook` setting replaces provisioning as a whole). A declared Kubernetes layer whose binaries are missing
    is an error naming the set-up step, never a step silently left out."""
    controls = [d for d in plan.devices if d.kind == DeviceKind.CONTROL]
    if "kubernetes" not in plan.schedulers or plan.kubernetes is None:  # schedulers: [slurm] alone
        return None
    if not controls or not settings.kubernetes or not settings.provision or settings.playbook or roles_hash is None:
        return None
    try:
        bin_dir = kubernetes_bin_dir(check=not pulumi.runtime.is_dry_run())
    except MissingBinaries as exc:
        raise MissingBinaries(f"the declaration runs Kubernetes (schedulers: {list(plan.schedulers)}) but its"
                              f" binaries are not built: {exc}") from None
    hosts = tuple(d.name for d in controls)
    nodes = tuple(n.name for n in plan.kubernetes.nodes)
    inventory = str(settings.rendered_dir / "ansible" / "inventory.yml")
    ssh_config = str(settings.host_ssh_config) if settings.host_ssh_config else None
    kueue = plan.queueing is not None and plan.queueing.enabled
    try:
        extravars = kube_extravars(settings.target.emulates, bin_dir, kueue and not pulumi.runtime.is_dry_run())
    except MissingBinaries as exc:
        raise MissingBinaries(f"the declaration runs Kueue (kubernetes.kueue) but it is not built: {exc}") from None

    def step(group: str, members: tuple[str, ...], playbook_name: str, **kw: Any) -> HostProvisionArgs:
        playbook = paths.playbooks_dir() / playbook_name
        host_vars = {f"{ANSIBLE_DIR}/host_vars/{h}.yml": tree.host_vars(h) for h in (*hosts, *members)}
        host_vars.update(tree.kueue_files())  # the Kueue play applies them (a change is a change of the step)
        return HostProvisionArgs(
            group=group, hosts=members, inventory_path=inventory,
            private_data_dir=str(settings.work_dir / "provision" / group), roles_hash=roles_hash,
            host_vars_hash=files_hash(host_vars), playbook=str(playbook),
            playbook_hash=tree_hash([playbook, playbook.parent / "vars"], playbook.parent), tags=None,
            extravars=extravars, ssh_config=ssh_config, **kw)

    provision = step(CONTROL_GROUP, hosts, KUBERNETES_PLAYBOOK,
                     services=CONTROL_PLANE_UNITS + REGISTRY_UNITS + (KUEUE_UNITS if kueue else ()))
    # the nodes register themselves (TLS bootstrap); one the API server does not list is drift `up` repairs
    node_units = NODE_UNITS + (SIMULATED_GPU_UNITS if settings.target.emulates else ())
    join = step(NODES_GROUP, nodes, NODES_PLAYBOOK, services=node_units, nodes=nodes, nodes_via=hosts[0])
    # off the lab the control node outlives `destroy`: what k8s_gpu applied is recorded, for destroy to remove
    layer = planned_layer(kubernetes_vars(plan), role_defaults()).to_dict() if not settings.target.emulates else None
    control_plane = plan.kubernetes.control_plane  # the API address every kubeconfig names (plan/control_plane.py)
    return KubernetesArgs(cluster=plan.cluster, node_ips=tuple(str(d.management_ip) for d in controls),
                          service_ip=plan.kubernetes.service_ip, provision=provision, nodes=join, layer=layer,
                          api_server=control_plane.server if control_plane is not None else "",
                          api_vip=control_plane.vip if control_plane is not None else None)


def write_rendered_inventory(tree: RenderedTree, settings: StackSettings) -> None:
    """The Ansible tree HostProvision and Verification read, and the Slurm, monitoring and Kueue files beside it
    (cf_slurm's and cf_monitoring's config_dir, cf_kubernetes.queueing.manifest). Written on real runs only, never
    by previews."""
    from clusterforge.render import write_tree

    write_tree(settings.rendered_dir, {**tree.ansible_files(), **tree.slurm_files(), **tree.monitoring_files(),
                                       **tree.kueue_files()})


def _declared_part(plan: Plan, settings: StackSettings) -> StackPart | None:
    """The part of a split cluster this stack holds (clusterforge:part), None for a cluster held whole."""
    split = split_stacks(plan)
    if settings.part is None or settings.part == WHOLE:
        if split.mode != "none":
            raise ValueError(f"{plan.cluster} declares state.split {split.mode}: stack {settings.stack} must name its"
                             f" part (clusterforge:part, `clusterforge up --part`): one of {', '.join(split.names())}")
        return None
    try:
        part = split.part(settings.part)
    except KeyError:
        raise ValueError(f"clusterforge:part is {settings.part!r}; the declaration's parts:"
                         f" {', '.join(split.names())}") from None
    if not settings.stack.endswith(f"-{part.name}"):
        raise ValueError(f"stack {settings.stack} holds part {part.name}: its name must end in -{part.name}")
    return part


def _reference(base: str, part: str, output: str, check: Callable[[Any], Any]) -> pulumi.Output[Any]:
    """``output`` of the stack holding ``part`` (same backend, same project), passed through ``check``; a stack
    not applied yet fails the run naming it."""
    name = part_stack(base, part)
    ref = pulumi.StackReference(f"organization/{pulumi.get_project()}/{name}")

    def checked(value: Any) -> Any:
        if value is None:
            raise ValueError(f"stack {name} has no output {output!r}: apply it first (clusterforge up --part {part})")
        return check(value)

    return ref.get_output(output).apply(checked)


@dataclass(frozen=True)
class DeclaredStack:
    """What a stack's program declared: the Site component, and for a part of a split cluster the outputs of
    the other stacks it read (exported: a stack not applied yet fails the run)."""

    site: Site
    part: StackPart | None = None
    reads: dict[str, pulumi.Output[Any]] = field(default_factory=dict)


def declare_cluster(plan: Plan, tree: RenderedTree, settings: StackSettings) -> Site:
    return declare(plan, tree, settings).site


def declare(plan: Plan, tree: RenderedTree, settings: StackSettings) -> DeclaredStack:
    part = _declared_part(plan, settings)
    if settings.provision and not settings.playbook:
        _require_module("provision", "clusterforge.provision.runner")
    if settings.verify:
        _require_module("verify", "clusterforge.verify.runner")
    if (settings.provision or settings.verify) and not pulumi.runtime.is_dry_run():
        write_rendered_inventory(tree, settings)

    devices_by_rack: dict[str, list[Device]] = defaultdict(list)
    racks = {rack.name for rack in plan.racks}
    for device in plan.devices:
        if device.kind not in SERVER_KINDS + SWITCH_KINDS:
            continue
        if device.rack not in racks:
            raise ValueError(f"{device.name}: rack {device.rack!r} is not in the plan")
        devices_by_rack[device.rack].append(device)

    rack_args = {r.name: _rack_args(r, plan, devices_by_rack[r.name], tree, settings) for r in plan.racks}
    roles_hash = None
    if settings.provision:
        roles_hash = tree_hash([paths.roles_dir(), paths.playbooks_dir()], paths.data_root())
    suite_hash = _suite_hash() if settings.verify else None
    su_ids = sorted({r.su for r in plan.racks if r.su is not None})
    units = tuple(
        _unit_args(su, tuple(rack_args[r.name] for r in plan.racks if r.su == su), tree, settings,
                   roles_hash, suite_hash)
        for su in su_ids
    )  # fmt: skip
    networks = tuple(
        NetworkArgs(plane=plane, fabric=fabric, pool=plan.pools.get(plane, {}),
                    switches=tuple(d.name for d in plan.devices if d.plane == plane and d.kind in SWITCH_KINDS))
        for plane, fabric in plan.fabric.items()
    )  # fmt: skip
    fabric_files = dict(tree.fabric)
    # Fabric-wide files belong to no switch (the subnet manager host reads them): always a directory.
    fabric_config = SwitchConfigArgs(
        device=FABRIC_DIR, files=fabric_files, content_hash=files_hash(fabric_files),
        target=SwitchTarget("file", path=str(settings.switch_config_dir)),
    ) if fabric_files else None  # fmt: skip
    storage_hosts = tuple(d.name for d in plan.devices if d.kind == DeviceKind.STORAGE)
    in_site = part is None or part.kind == "site"
    images = _image_args(plan, tree, settings) if in_site else ()
    storage_provision, storage_verification = (
        _group_args(STORAGE_GROUP, storage_hosts, tree, settings, roles_hash, suite_hash) if storage_hosts
        else (None, None))
    kubernetes = _kubernetes_args(plan, tree, settings, roles_hash)
    lab, metal = (_lab_args(plan, tree, images, settings.bmc_password) if settings.target.emulates and in_site
                  else (None, ()))
    args = SiteArgs(
        cluster=plan.cluster, site=plan.site, summary=plan.summary.to_dict(), networks=networks,
        racks=tuple(rack_args[r.name] for r in plan.racks if r.su is None), units=units,
        lab=lab, metal=metal, images=images,
        fabric_config=fabric_config,
        storage_provision=storage_provision, storage_verification=storage_verification, kubernetes=kubernetes,
        slurm=slurm_args(plan, tree, settings, roles_hash),
        monitoring=monitoring_args(plan, tree, settings, roles_hash),
    )  # fmt: skip
    if part is None:
        return DeclaredStack(Site(plan.cluster, args))
    return _declare_part(plan, settings, part, args)


def _declare_part(plan: Plan, settings: StackSettings, part: StackPart, args: SiteArgs) -> DeclaredStack:
    """The Site of one part: what the part holds kept, the rest left to the other stacks; an SU's hosts and the
    services' reached through the site stack's lab (its output, on the lab target)."""
    base = settings.stack[: -len(part.name) - 1]
    if part.kind == "site":
        return DeclaredStack(Site(plan.cluster, dataclasses.replace(
            args, units=(), kubernetes=None, slurm=None, monitoring=None)), part)
    reads = {SITE: _reference(base, SITE, "cluster", lambda value: _same_cluster(value, plan.cluster, base))}
    ssh = _reference(base, SITE, "lab_ssh_config", lambda value: value) if settings.target.emulates else None
    kept = dataclasses.replace(args, networks=(), racks=(), lab=None, metal=(), images=(), fabric_config=None,
                               storage_provision=None, storage_verification=None)
    if part.kind == "su":
        kept = dataclasses.replace(kept, units=tuple(u for u in args.units if u.su == part.su),
                                   kubernetes=None, slurm=None, monitoring=None)
    else:  # services: every SU stack is read, so applied before it
        for name in part.reads:
            if name != SITE:
                reads[name] = _reference(base, name, "su", lambda value: value)
        kept = dataclasses.replace(kept, units=())
    return DeclaredStack(Site(plan.cluster, kept, ssh_config=ssh), part, reads)


def _same_cluster(value: Any, cluster: str, base: str) -> str:
    if value != cluster:
        raise ValueError(f"stack {part_stack(base, SITE)} holds cluster {value!r}, not {cluster!r}")
    return str(value)
