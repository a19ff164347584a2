"""testinfra host checks, one module per concern (kernel, driver, cuda, fabricmanager,
container_runtime, network, roce, mounts, time). Expectations come from the rendered
inventory's host_vars (docs/CONTRACTS.md); ``conftest.py`` parametrizes every test per host and
per planned item. Run them with :func:`clusterforge.verify.runner.run_checks`, ``clusterforge
verify``, or :func:`run_checks` below (by inventory group, as the Pulumi Verification resource does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CONCERNS: tuple[str, ...] = (
    "kernel", "driver", "cuda", "fabricmanager", "container_runtime", "network", "roce", "mounts", "time",
)  # fmt: skip

__all__ = ["CONCERNS", "run_checks"]


def run_checks(inventory_path: str | Path, limit: str = "servers", ssh_config: str | Path | None = None,
               target: str | None = None, **options: Any):
    """Check every host of inventory group ``limit``; returns a runner.VerifyResult.

    ``target`` defaults to ``lab`` when ``ssh_config`` is the lab ssh_config of this inventory's
    cluster (``.lab/<cf_cluster>/ssh_config``), else ``ssh``. Other options go to
    :func:`clusterforge.verify.runner.run_checks`.
    """
    from clusterforge.verify.hosts._inventory import load_inventory
    from clusterforge.verify.runner import run_checks as run

    ssh = Path(ssh_config) if ssh_config else None
    if target is None:
        target = "ssh"
        cluster = load_inventory(inventory_path).groups["all"].vars.get("cf_cluster")
        if ssh is not None and cluster:
            from clusterforge.lab.sshcfg import ssh_config_path

            if ssh.resolve() == ssh_config_path(cluster).resolve():
                target = "lab"
    return run(Path(inventory_path), target, None, ssh, options.pop("report_json", None), group=limit, **options)
