"""When a check does not apply to a host, say why (pytest.skip with a reason); never pass instead.

Two kinds of "cannot check", kept apart:

* nothing is planned to check (no GPU planned, RoCE off, no NTP servers declared): ``pytest.skip`` with the
  reason, on every target;
* a planned fact this host does not let the check read (no /dev/nvidia* on a host planned with GPUs, no RDMA
  device where RoCE is planned): :func:`unchecked`, naming the fact, why, and the part of the host it needs.
  The conftest resolves it by the target's reach (:func:`resolve`): where the reach simulates that part (the
  lab: ``clusterforge.targets.SIMULATED_PARTS``) the outcome is SIMULATED; on the lab otherwise a skip with the
  reason; on any other reach a failure naming the host, the fact and why.

Skips, simulated checks and failures are reported per host in the verify report with their reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

import pytest

from clusterforge.targets import SIMULATED_PARTS, Reach
from clusterforge.verify.hosts._facts import HostFacts

# The parts of a host a check may need (clusterforge.targets.SIMULATED_PARTS).
GPUS = "gpus"
RDMA_NICS = "rdma_nics"
HOST_KERNEL = "host_kernel"


class Unchecked(Exception):  # noqa: N818 - an outcome, like pytest's Skipped
    """A planned fact a check cannot read on this host; resolved by the conftest (see :func:`resolve`).

    A plain exception, not a skip: were it ever not resolved, the check errors instead of passing or skipping.
    """

    def __init__(self, fact: str, why: str, part: str | None = None) -> None:
        if part is not None and part not in SIMULATED_PARTS:
            raise ValueError(f"unknown part {part!r}; expected one of {', '.join(SIMULATED_PARTS)}")
        super().__init__(f"{fact}: {why}")
        self.fact, self.why, self.part = fact, why, part


def unchecked(fact: str, why: str, part: str | None = None) -> NoReturn:
    """This check cannot read ``fact`` here, because ``why``; ``part``: the part of the host it needs (a key of
    clusterforge.targets.SIMULATED_PARTS) when a simulated one explains it."""
    raise Unchecked(fact, why, part)


@dataclass(frozen=True)
class Resolution:
    outcome: str  # simulated | skipped | failed
    message: str
    simulated: str | None = None  # what was simulated (SIMULATED_PARTS's words), for a simulated outcome


def resolve(exc: Unchecked, reach: Reach, host: str) -> Resolution:
    """What an unchecked planned fact on ``host`` is under ``reach``: SIMULATED where the reach simulates the part
    it needs, a skip with the reason on the lab otherwise, a failure on any other reach."""
    if exc.part is not None and exc.part in reach.simulates:
        what = SIMULATED_PARTS[exc.part]
        return Resolution("simulated", f"SIMULATED {what.split(':', 1)[0]}: {exc.fact} not checked: {exc.why}",
                          what)
    if not reach.fails_unchecked:
        return Resolution("skipped", f"{exc.fact} not checked: {exc.why}")
    return Resolution("failed", f"UNCHECKED on {host}: {exc.fact} cannot be checked: {exc.why} (target "
                                f"{reach.name}: outside the lab a planned fact that cannot be checked fails)")


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
    fact = f"the {host_vars.get('cf_gpu_count')} planned GPU(s)"
    if container:
        unchecked(fact, f"no /dev/nvidia* in this {container} container (no GPU passed through)", GPUS)
    if not kernel_module_expected(facts, host_vars):
        unchecked(fact, "no /dev/nvidia* and the inventory declares a userland-only driver (nvidia_kernel_module: "
                  "skip)", GPUS)
    pytest.fail(f"no /dev/nvidia* on a host planned with {host_vars.get('cf_gpu_count')} GPU(s): "
                "the NVIDIA kernel module is not loaded or the GPUs are not bound to it")


def require_systemd(facts: HostFacts) -> None:
    if not facts.systemd_running():
        unchecked("the planned systemd units", "systemd is not PID 1 here (/run/systemd/system missing)")
