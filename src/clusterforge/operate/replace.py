"""An RMA: one host provisioned and verified again, its identity (name, addresses, role) from the declaration.

The node is drained in each scheduler the run reaches; on the lab target the host is re-imaged first (a container
back to its base image, a bare-metal server installed again through its BMC), on real hosts the operator has
swapped the machine. Then the site playbook runs on that host alone and the host checks run on it; after the
health gate each scheduler puts its own parts back on the machine and takes the node back.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterforge.operate.roll import DRAIN_TIMEOUT_S
from clusterforge.plan import Plan
from clusterforge.schedulers import NodeControl
from clusterforge.targets import Reach

__all__ = ["ReplaceStopped", "Replaced", "replace_host"]

Say = Callable[[str], Any]


class ReplaceStopped(Exception):
    """The replacement stopped before its checks: one line, the exit status, and whether it is the result
    (stdout) or a note on why it could not go on (stderr)."""

    def __init__(self, line: str, code: int, result: bool) -> None:
        super().__init__(line)
        self.line, self.code, self.result = line, code, result


@dataclass(frozen=True)
class Replaced:
    host: str
    provision: Any  # clusterforge.provision.ProvisionResult
    checked: Any | None  # clusterforge.verify.runner.VerifyResult; None when provisioning failed


def _reinstall_metal(plan: Plan, tree: Any, host: str, say: Say) -> Path:
    """A bare-metal server of the lab is re-imaged through its BMC: network boot, its disk image (the golden
    image its profile boots, when built) or the installer, SSH with a new host key, as a swapped machine has
    (clusterforge.baremetal.install). Returns the lab's ssh_config."""
    from clusterforge import paths
    from clusterforge.baremetal.install import install
    from clusterforge.baremetal.os_image import forget_host_key
    from clusterforge.hostio import HostError
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
    say(f"replace {host}: a bare-metal server: re-imaging it through its BMC (network install)")
    try:
        install(install_request(args.request_json, password), lab_site(),
                progress=lambda h, m: say(f"{h or host}: {m}"))
    except HostError as exc:  # InstallError and the BMC's errors are one line naming the server
        raise ReplaceStopped(f"replace {host}: {exc}", 1, result=True) from None
    return paths.lab_ssh_config(plan.cluster)


def _reimage(plan: Plan, tree: Any, host: str, say: Say) -> Path:
    """The lab host back from its base image, as a swapped machine comes; returns the lab's ssh_config."""
    if host in (getattr(plan, "bmcs", {}) or {}):
        return _reinstall_metal(plan, tree, host, say)
    from clusterforge.lab import LabError, reimage
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.lab.manager import as_running

    topology = as_running(lab_topology(plan, tree))  # the golden images the running lab boots
    try:
        lab = reimage(topology, host, progress=lambda h, m: say(f"lab {h or topology.name}: {m}"))
    except LabError as exc:
        raise ReplaceStopped(f"lab: {exc}", 3, result=False) from None
    return lab.ssh_config


def replace_host(plan: Plan, host: str, where: Reach, ssh_config: Path | None, controls: tuple[NodeControl, ...],
                 tags: Sequence[str], checks: Sequence[str], json_path: Path | None, say: Say) -> Replaced:
    """Drain, re-image (lab), provision, check and take back ``host``; progress lines go to ``say``.
    Raises ReplaceStopped when it cannot go on (a refused drain, a failed re-image, checks that cannot run)."""
    from clusterforge.provision import run_site
    from clusterforge.render import render_tree, write_tree
    from clusterforge.schedulers import DrainRefused, ResumeFailed, drain_nodes, rejoin_node, resume_nodes
    from clusterforge.verify.runner import VerifyError, run_checks

    try:
        drain_nodes(controls, [host], "clusterforge replace", DRAIN_TIMEOUT_S, say=say)
    except DrainRefused as exc:
        raise ReplaceStopped(f"replace {host}: {exc}; nothing was changed ({exc.held})", 1, result=True) from None
    tree = render_tree(plan)
    with tempfile.TemporaryDirectory(prefix="cf-replace-") as tmp:
        rendered = Path(tmp) / "rendered"
        write_tree(rendered, tree.files())
        if where.lab:
            ssh_config = _reimage(plan, tree, host, say)
        result = run_site(rendered / "ansible" / "inventory.yml", Path(tmp) / "runner", limit=host,
                          tags=list(tags) or None, extravars={"cf_lab": True} if where.lab else None,
                          ssh_config=ssh_config, progress=lambda line: say(f"provision {line}"))
        if not result.ok:
            return Replaced(host, result, None)
        say(f"replace {host}: provisioned in {result.duration_s:.0f} s"
            f" ({result.changed_per_host.get(host, 0)} tasks changed); checking it")
        try:
            checked = run_checks(rendered, where.name, [host], ssh_config, json_path, concerns=list(checks) or None)
        except VerifyError as exc:
            raise ReplaceStopped(f"verify: {exc}", 3, result=False) from None
        if checked.ok:  # the health gate passed: the schedulers' own parts back on the machine, then schedulable
            checked.errors.extend(rejoin_node(controls, host, rendered, Path(tmp), say=say))
        if checked.ok:
            try:
                resume_nodes(controls, [host], say=say)
            except ResumeFailed as exc:
                checked.errors.append(str(exc))
    return Replaced(host, result, checked)
