"""When a check does not apply to a host, say why (pytest.skip with a reason); never pass instead.

Skips are reported per host in the verify report with their reason, next to passes and failures.
"""

from __future__ import annotations

from typing import Any

import pytest

from clusterforge.verify.hosts._facts import HostFacts


def kernel_module_expected(facts: HostFacts, host_vars: dict[str, Any]) -> bool:
    """Whether this host should load the NVIDIA kernel module itself.

    Not in a container (the kernel is its host's) and not when the inventory declares a
    userland-only install (``cf_software.nvidia_kernel_module: skip``).
    """
    declared = (host_vars.get("cf_software") or {}).get("nvidia_kernel_module", "auto")
    return declared != "skip" and facts.container() is None


def require_gpu_planned(host_vars: dict[str, Any]) -> None:
    if int(host_vars.get("cf_gpu_count") or 0) == 0:
        pytest.skip("the inventory plans no GPU on this host (cf_gpu_count is 0)")


def require_gpus_visible(facts: HostFacts, host_vars: dict[str, Any]) -> None:
    """Skip GPU-visibility checks where no GPU can be visible; fail where one must be.

    No /dev/nvidia* is expected only in a container without GPUs passed through, or with a
    declared userland-only driver. On a host that loads the module itself, no device nodes
    means the driver is not working: that is a failure, not a skip.
    """
    require_gpu_planned(host_vars)
    if facts.gpu_device_nodes():
        return
    container = facts.container()
    if container:
        pytest.skip(f"no /dev/nvidia* in this {container} container (no GPU passed through): nothing to query")
    if not kernel_module_expected(facts, host_vars):
        pytest.skip("no /dev/nvidia* and the inventory declares a userland-only driver (nvidia_kernel_module: skip)")
    pytest.fail(f"no /dev/nvidia* on a host planned with {host_vars.get('cf_gpu_count')} GPU(s): "
                "the NVIDIA kernel module is not loaded or the GPUs are not bound to it")


def require_systemd(facts: HostFacts) -> None:
    if not facts.systemd_running():
        pytest.skip("systemd is not PID 1 here (/run/systemd/system missing): no units to inspect")
