"""NVIDIA Fabric Manager on NVSwitch systems (cf_nvswitch): enabled, running, and the GPUs'
fabric registration completed.

NVSwitches are counted on the PCI bus (vendor 0x10de, class 0x0680) through sysfs. In a
container the service belongs to the physical host: the service checks are not checked there (SIMULATED in the
lab, a failure on a real target), while the GPUs' own fabric state (nvidia-smi -q, which reflects the host's
Fabric Manager) is still read. Planned NVSwitches that are not visible are likewise not checked.
"""

from __future__ import annotations

import pytest

from clusterforge.verify.hosts._gates import GPUS, HOST_KERNEL, require_gpus_visible, require_systemd, unchecked
from clusterforge.verify.hosts._parsers import parse_fabric_states

SERVICE_DEFAULT = "nvidia-fabricmanager"


def _require_fabric(facts, host_vars) -> None:
    if not host_vars.get("cf_nvswitch"):
        pytest.skip("the inventory plans no NVSwitch on this model (cf_nvswitch false): no Fabric Manager")
    if facts.nvswitch_count() == 0:
        where = f"in this {facts.container()} container" if facts.container() else "on the PCI bus"
        unchecked("the planned NVSwitches (cf_nvswitch)", f"no NVSwitch is visible {where} (vendor 0x10de class "
                  "0x0680)", GPUS)


def _require_service_host(facts) -> None:
    if facts.container():
        unchecked("the Fabric Manager service", f"a {facts.container()} container: Fabric Manager runs on the "
                  "physical host, not here", HOST_KERNEL)
    require_systemd(facts)


def _service(host_vars) -> str:
    return str(host_vars.get("nvidia_fabricmanager_service") or SERVICE_DEFAULT)


def test_fabricmanager_enabled(facts, host_vars):
    _require_fabric(facts, host_vars)
    _require_service_host(facts)
    state = facts.unit_state(_service(host_vars), "is-enabled")
    assert state == "enabled", f"{_service(host_vars)} is {state}, not enabled"


def test_fabricmanager_active(facts, host_vars):
    _require_fabric(facts, host_vars)
    _require_service_host(facts)
    state = facts.unit_state(_service(host_vars), "is-active")
    assert state == "active", f"{_service(host_vars)} is {state}, not active"


def test_gpu_fabric_registration_completed(facts, host_vars, gpu_index):
    if not host_vars.get("cf_nvswitch"):
        pytest.skip("the inventory plans no NVSwitch on this model (cf_nvswitch false)")
    require_gpus_visible(facts, host_vars)
    states = parse_fabric_states(facts.nvidia_smi_q())
    if not states:
        unchecked(f"GPU {gpu_index}'s fabric registration",
                  "nvidia-smi -q has no Fabric section (driver without NVSwitch fabric reporting)")
    assert gpu_index < len(states), f"nvidia-smi -q reports the fabric of {len(states)} GPU(s), not of GPU {gpu_index}"
    state, status = states[gpu_index]
    assert (state, status) == ("Completed", "Success"), (
        f"GPU {gpu_index} fabric state={state or '?'} status={status or '?'} (Fabric Manager not done or failed)"
    )
