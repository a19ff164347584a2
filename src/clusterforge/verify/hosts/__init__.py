"""testinfra host checks, one module per concern (kernel, driver, cuda, fabricmanager,
container_runtime, network, roce, mounts, tiers, storage, time). Each module checks the host kinds in
its ``HOST_KINDS`` (default GPU servers; ``storage`` checks the storage servers). Expectations come from the rendered
inventory's host_vars (docs/CONTRACTS.md); ``conftest.py`` parametrizes every test per host and
per planned item. Run them with :func:`clusterforge.verify.runner.run_checks`, ``clusterforge
verify``, or :func:`clusterforge.verify.runner.run_group_checks` (by inventory group). This package
imports nothing from the runner: the runner imports it.
"""

from __future__ import annotations

CONCERNS: tuple[str, ...] = (
    "kernel", "driver", "cuda", "fabricmanager", "container_runtime", "network", "roce", "mounts", "tiers",
    "storage", "time",
)  # fmt: skip

__all__ = ["CONCERNS"]
