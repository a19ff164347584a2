"""`clusterforge replace HOST`: an RMA — provision and verify one host again, its identity unchanged.

The host's name, addresses and role come from the declaration, so the replacement is the same
node to the cluster. On the lab target the host is first re-imaged (back to the base image, a new
machine-id and SSH host key, as a swapped machine has); on real hosts the operator has swapped
the machine and put its new host key in known_hosts (never trusted on first use). Then the site
playbook runs on that host alone, with per-task progress, and the host checks run on it. The node is
first drained in each declared scheduler this run reaches (clusterforge.schedulers: Kubernetes with
``--kubeconfig`` or ``--stack``, Eviction API, PodDisruptionBudgets honoured; Slurm through its controller,
its jobs waited for, never cancelled; ``--no-slurm`` skips it); a blocked drain stops the replacement.
After the health gate each scheduler puts its own parts back on the new machine (Slurm: playbooks/slurm.yml,
slurmd and MUNGE with the stack's key: ``--stack``, default the inventory's stem) and takes the node back.

Exit codes: 0 provisioned and every check passed, 1 provisioning or a check failed, 2 usage,
3 the lab or the checks cannot run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from clusterforge.cli._args import check_concerns, check_stack, check_tags, complete_concerns
from clusterforge.cli._common import Format, emit_json, err, format_option, load, out, say, usage_error
from clusterforge.cli.ops import DoctorTarget as HostTarget
from clusterforge.targets import reach
from clusterforge.vocab import DeviceKind

__all__ = ["register"]


def replace(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    host: str = typer.Argument(..., help="the server being replaced, e.g. su01-r01-gpu02"),
    target: HostTarget = typer.Option(HostTarget.lab, "--target", "-t",
                                      help="lab (re-image the lab host) | ssh (real hosts)"),
    ssh_config: Path | None = typer.Option(None, "--ssh-config", help="OpenSSH config for the ssh target"),
    tags: list[str] = typer.Option([], "--tags", help="only these site playbook tags (repeatable)"),
    check: list[str] = typer.Option([], "--check", "-k", autocompletion=complete_concerns,
                                    help="only these host check modules (repeatable)"),
    json_path: Path | None = typer.Option(None, "--json", help="write the host checks' JSON report here"),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help="drain the node first, uncordon it after"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="drain through this stack's kubeconfig"),
    slurm: bool = typer.Option(True, "--slurm/--no-slurm",
                               help="drain, re-converge and resume the node in Slurm when the declaration asks for it"),
    format: Format = format_option(),
) -> None:
    """Re-provision and re-verify one replaced host with its planned identity (RMA)."""
    from clusterforge.cli.verify import results_table
    from clusterforge.provision import run_site
    from clusterforge.render import render_tree, write_tree
    from clusterforge.verify.runner import VerifyError, run_checks

    check_concerns(check)  # before the host is re-imaged or provisioned
    check_tags(tags)
    if stack is not None:
        check_stack(stack)
    where = reach(HostTarget(target).value)
    spec, plan, _ = load(inventory)
    device = next((d for d in plan.devices if d.name == host), None)
    if device is None or device.kind not in (DeviceKind.SERVER, DeviceKind.STORAGE):
        usage_error(f"not a server of {inventory}: {host}")
    addresses = ", ".join(f"{i.name} {i.ip}" for i in device.interfaces if i.ip)
    say(err, f"replace {host}: identity from the declaration: {addresses}")
    from clusterforge.cli.roll import DRAIN_TIMEOUT_S, SLURM_SWITCH, node_controls
    from clusterforge.schedulers import DrainRefused, Reach, ResumeFailed, drain_nodes, rejoin_node, resume_nodes

    controls = node_controls(Reach(plan, where, ssh_config, kubeconfig, stack, inventory.stem,
                                   frozenset() if slurm else frozenset({SLURM_SWITCH})))
    try:
        drain_nodes(controls, [host], "clusterforge replace", DRAIN_TIMEOUT_S, say=lambda line: say(err, line))
    except DrainRefused as exc:
        say(out, f"replace {host}: {exc}; nothing was changed ({exc.held})")
        raise typer.Exit(1) from None
    tree = render_tree(plan)
    with tempfile.TemporaryDirectory(prefix="cf-replace-") as tmp:
        rendered = Path(tmp) / "rendered"
        write_tree(rendered, tree.files())
        if where.lab and host in (getattr(plan, "bmcs", {}) or {}):
            ssh_config = _reinstall_metal(plan, tree, host)
        elif where.lab:
            from clusterforge.lab import LabError, reimage
            from clusterforge.lab.from_plan import lab_topology
            from clusterforge.lab.manager import as_running

            topology = as_running(lab_topology(plan, tree))  # the golden images the running lab boots
            try:
                lab = reimage(topology, host, progress=lambda h, m: say(err, f"lab {h or topology.name}: {m}"))
            except LabError as exc:
                say(err, f"lab: {exc}")
                raise typer.Exit(3) from None
            ssh_config = lab.ssh_config
        result = run_site(rendered / "ansible" / "inventory.yml", Path(tmp) / "runner", limit=host,
                          tags=list(tags) or None, extravars={"cf_lab": True} if where.lab else None,
                          ssh_config=ssh_config, progress=lambda line: say(err, f"provision {line}"))
        if not result.ok:
            failed = {**result.failed_hosts, **result.unreachable_messages}
            if format is Format.json:
                emit_json({"host": host, "ok": False, "provision": {"status": result.status, "failed": failed}})
                raise typer.Exit(1)
            for name, why in sorted(failed.items()):
                say(out, f"FAIL provision {name}: {why}")
            say(out, f"replace {host}: provisioning failed ({result.status}, rc {result.rc}; {result.artifact_dir})")
            raise typer.Exit(1)
        say(err, f"replace {host}: provisioned in {result.duration_s:.0f} s"
                 f" ({result.changed_per_host.get(host, 0)} tasks changed); checking it")
        try:
            checked = run_checks(rendered, where.name, [host], ssh_config, json_path, concerns=list(check) or None)
        except VerifyError as exc:
            say(err, f"verify: {exc}")
            raise typer.Exit(3) from None
        if checked.ok:  # the health gate passed: the schedulers' own parts back on the machine, then schedulable
            checked.errors.extend(rejoin_node(controls, host, rendered, Path(tmp), say=lambda line: say(err, line)))
        if checked.ok:
            try:
                resume_nodes(controls, [host], say=lambda line: say(err, line))
            except ResumeFailed as exc:
                checked.errors.append(str(exc))
    if format is Format.json:
        emit_json({"host": host, "ok": checked.ok, "provision": {"status": result.status,
                   "changed": result.changed_per_host.get(host, 0), "seconds": round(result.duration_s, 1)},
                   "checks": {"passed": checked.passed, "failed": checked.failed, "skipped": checked.skipped,
                              "failures": checked.failures}})
        if not checked.ok:
            raise typer.Exit(1)
        return
    out.print(results_table(checked))
    for line in checked.failures:
        say(out, f"FAIL {line}")
    if not checked.ok:
        raise typer.Exit(1)
    say(out, f"replace {host}: provisioned and verified ({checked.passed} checks passed); name and addresses"
             " as declared. Run `clusterforge up` to record the new machine in the stack.")


def _reinstall_metal(plan, tree, host: str) -> Path:
    """A bare-metal server of the lab is re-imaged through its BMC: network boot, its disk image (the golden
    image its profile boots, when built) or the installer, SSH with a new host key, as a swapped machine has
    (clusterforge.baremetal.install). Returns the lab's ssh_config."""
    from clusterforge import paths
    from clusterforge.baremetal.install import install
    from clusterforge.baremetal.os_image import forget_host_key
    from clusterforge.lab import LabError
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.lab.image import is_built
    from clusterforge.pulumi.images import lab_images
    from clusterforge.pulumi.metal import lab_bmc_password, metal_servers
    from clusterforge.pulumi.providers.metal_server import install_request, lab_site

    password = lab_bmc_password(plan.cluster)
    images = {h: spec.name for spec in lab_images(plan, tree) if is_built(spec.name) for h in spec.hosts}
    _, metal = metal_servers(plan, lab_topology(plan, tree), password, images)
    forget_host_key(plan.cluster, host)
    args = next(m for m in metal if m.server == host)
    say(err, f"replace {host}: a bare-metal server: re-imaging it through its BMC (network install)")
    try:
        install(install_request(args.request_json, password), lab_site(),
                progress=lambda h, m: say(err, f"{h or host}: {m}"))
    except LabError as exc:  # InstallError and the BMC's errors are one line naming the server
        say(out, f"replace {host}: {exc}")
        raise typer.Exit(1) from None
    return paths.lab_ssh_config(plan.cluster)


def register(app: typer.Typer) -> None:
    app.command("replace")(replace)
