"""NVIDIA container toolkit: installed where a GPU is visible, and configured for containerd
(the ``nvidia`` runtime in its config) wherever it is installed; a CDI spec where GPUs are visible.

A host planned without GPUs and with neither a visible GPU nor the toolkit has nothing to check: the tests
skip with that reason. A host planned with GPUs but none visible (a lab container whose playbook leaves the
toolkit out) cannot be checked: SIMULATED in the lab, a failure on a real target.
"""

from __future__ import annotations

import pytest

from clusterforge.verify.hosts._gates import GPUS, unchecked
from clusterforge.verify.hosts._parsers import containerd_nvidia_runtime

RUNTIME_CONFIG_DEFAULT = "/etc/containerd/config.toml"
CDI_SPECS = ("/etc/cdi/nvidia.yaml", "/etc/cdi/nvidia.json", "/var/run/cdi/nvidia.yaml", "/var/run/cdi/nvidia.json")


def _installed(facts) -> bool:
    return facts.which("nvidia-ctk") is not None


def _gpus_planned(host_vars) -> bool:
    return int(host_vars.get("cf_gpu_count") or 0) > 0


def _require_applicable(facts, host_vars) -> None:
    if not facts.gpu_device_nodes() and not _installed(facts):
        why = "no GPU visible (/dev/nvidia*) and nvidia-container-toolkit not installed"
        if _gpus_planned(host_vars):
            unchecked("the container runtime of the planned GPUs", why, GPUS)
        pytest.skip(f"{why} and no GPU planned: nothing to configure")


def _runtime_configs(facts, host_vars) -> dict[str, str]:
    """The containerd config and its drop-ins (nvidia-ctk may write /etc/containerd/conf.d/*.toml)."""
    main = str(host_vars.get("nvidia_container_toolkit_runtime_config") or RUNTIME_CONFIG_DEFAULT)
    paths = [main, *facts.run("ls -1 /etc/containerd/conf.d/*.toml 2>/dev/null; true").stdout.split()]
    texts = {p: facts.read(p) for p in dict.fromkeys(paths)}
    return {p: t for p, t in texts.items() if t is not None}


def test_nvidia_container_toolkit_installed(facts, host_vars):
    _require_applicable(facts, host_vars)
    assert _installed(facts), "a GPU is visible but nvidia-ctk (nvidia-container-toolkit) is not installed"


def test_containerd_has_nvidia_runtime(facts, host_vars):
    _require_applicable(facts, host_vars)
    configs = _runtime_configs(facts, host_vars)
    main = host_vars.get("nvidia_container_toolkit_runtime_config") or RUNTIME_CONFIG_DEFAULT
    assert configs, f"no containerd config ({main})"
    runtimes = {p: containerd_nvidia_runtime(t) for p, t in configs.items()}
    assert any(runtimes.values()), f"no `nvidia` runtime in {', '.join(configs)} (run nvidia-ctk runtime configure)"


def test_containerd_nvidia_runtime_binary(facts, host_vars):
    _require_applicable(facts, host_vars)
    runtimes = [r for r in (containerd_nvidia_runtime(t) for t in _runtime_configs(facts, host_vars).values()) if r]
    assert runtimes, "no `nvidia` runtime in the containerd config"
    binaries = [str((r.get("options") or {}).get("BinaryName", "")) for r in runtimes]
    assert any(b.endswith("nvidia-container-runtime") for b in binaries), (
        f"the nvidia runtime's BinaryName is {binaries}, not nvidia-container-runtime"
    )


def test_cdi_spec_present(facts, host_vars):
    if not facts.gpu_device_nodes():
        why = "no GPU visible (/dev/nvidia*): the CDI spec is generated only where GPUs are"
        if _gpus_planned(host_vars):
            unchecked("the CDI spec of the planned GPUs", why, GPUS)
        pytest.skip(why)
    _require_applicable(facts, host_vars)
    assert any(facts.exists(p) for p in CDI_SPECS), f"no CDI spec for the GPUs ({', '.join(CDI_SPECS)})"
