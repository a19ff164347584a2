"""NVIDIA driver: userland packages at the pinned version and held; the kernel module where this
host loads it; nvidia-smi sees cf_gpu_count GPUs of cf_gpu_model, in persistence mode, running
the pinned driver.

Containers (the lab) install the userland only: there is no kernel module to require and, without
/dev/nvidia*, no GPU to query, so those checks say the planned GPUs were not checked (SIMULATED in the lab, a
failure on a real target); they never pass by pretending. A declared userland-only driver outside a container
needs no kernel module: that check skips with the reason.
"""

from __future__ import annotations

import pytest

from clusterforge.verify.gpu_names import gpu_model_matches
from clusterforge.verify.hosts._gates import (
    GPUS,
    kernel_module_expected,
    require_gpu_planned,
    require_gpus_visible,
    unchecked,
)
from clusterforge.verify.hosts._parsers import upstream_version, version_matches_pin

# The userland every driver install ships, whatever the package names of the source
# (Debian non-free, Ubuntu -server, NVIDIA's CUDA repo): found by file, then mapped to its package.
COMPONENTS = {
    "nvidia-smi": ("command", "nvidia-smi"),
    "nvml": ("library", "libnvidia-ml.so.1"),
    "libcuda": ("library", "libcuda.so.1"),
}
SMI_FIELDS = ("index", "name", "persistence_mode", "driver_version")


def _pin(host_vars):
    sw = host_vars.get("cf_software") or {}
    return str(sw.get("nvidia_driver_version") or ""), str(sw.get("nvidia_driver_branch") or "")


def _component_path(facts, component):
    kind, name = COMPONENTS[component]
    return facts.which(name) if kind == "command" else facts.shared_library(name)


def _component_package(facts, host_vars, component):
    require_gpu_planned(host_vars)
    path = _component_path(facts, component)
    assert path, f"{COMPONENTS[component][1]} is not installed (not on PATH / not in the ldconfig cache)"
    package = facts.owning_package(path)
    assert package, f"{path} belongs to no installed package (copied or injected by a container runtime?)"
    return package


@pytest.mark.parametrize("component", list(COMPONENTS))
def test_driver_component_packaged(facts, host_vars, component):
    _component_package(facts, host_vars, component)


@pytest.mark.parametrize("component", list(COMPONENTS))
def test_driver_component_at_pinned_version(facts, host_vars, component):
    version, branch = _pin(host_vars)
    package = _component_package(facts, host_vars, component)
    installed = facts.package_version(package) or ""
    assert version_matches_pin(upstream_version(installed), version, branch), (
        f"{package} {installed} is not the pinned driver {version or 'branch ' + branch}"
    )


@pytest.mark.parametrize("component", list(COMPONENTS))
def test_driver_component_held(facts, host_vars, component):
    package = _component_package(facts, host_vars, component)
    assert facts.package_held(package), (
        f"{package} is not held (dpkg --get-selections / apt-mark showhold): an upgrade can move the driver"
    )


def test_nvidia_kernel_module_loaded(facts, host_vars):
    require_gpu_planned(host_vars)
    if not facts.gpu_device_nodes() and not kernel_module_expected(facts, host_vars):
        if facts.container():
            unchecked("the NVIDIA kernel module of the planned GPUs",
                      f"userland-only driver in a {facts.container()} container and no /dev/nvidia*", GPUS)
        pytest.skip("declared nvidia_kernel_module: skip and no /dev/nvidia*: no kernel module is required")
    assert "nvidia" in facts.proc_modules(), "the nvidia kernel module is not loaded (/proc/modules)"


def test_nvidia_smi_gpu_count(facts, host_vars):
    require_gpus_visible(facts, host_vars)
    gpus = facts.nvidia_smi(SMI_FIELDS)
    assert len(gpus) == int(host_vars["cf_gpu_count"]), (
        f"nvidia-smi lists {len(gpus)} GPU(s), the inventory plans {host_vars['cf_gpu_count']}"
    )


def _gpu(facts, host_vars, gpu_index):
    require_gpus_visible(facts, host_vars)
    gpus = {int(g["index"]): g for g in facts.nvidia_smi(SMI_FIELDS)}
    assert gpu_index in gpus, f"nvidia-smi lists no GPU {gpu_index} (it lists {sorted(gpus)})"
    return gpus[gpu_index]


def test_gpu_model(facts, host_vars, gpu_index):
    gpu = _gpu(facts, host_vars, gpu_index)
    assert gpu_model_matches(str(host_vars["cf_gpu_model"]), gpu["name"]), (
        f"GPU {gpu_index} is {gpu['name']!r}, the inventory plans {host_vars['cf_gpu_model']}"
    )


def test_gpu_persistence_mode_enabled(facts, host_vars, gpu_index):
    gpu = _gpu(facts, host_vars, gpu_index)
    assert gpu["persistence_mode"] == "Enabled", (
        f"GPU {gpu_index} persistence mode is {gpu['persistence_mode']} (nvidia-persistenced not running?)"
    )


def test_running_driver_is_pinned_version(facts, host_vars, gpu_index):
    gpu = _gpu(facts, host_vars, gpu_index)
    version, branch = _pin(host_vars)
    assert version_matches_pin(gpu["driver_version"], version, branch), (
        f"GPU {gpu_index} runs driver {gpu['driver_version']}, pinned {version or 'branch ' + branch}"
    )
