"""CUDA toolkit: the pinned release (cf_software.cuda_version) is what a login shell gets.

/etc/profile.d/cuda*.sh sets CUDA_HOME and PATH for login shells; the release is read from
``nvcc --version`` run in such a shell, so a stale PATH or a second toolkit shows up.
"""

from __future__ import annotations

from clusterforge.verify.hosts._gates import require_gpu_planned
from clusterforge.verify.hosts._parsers import parse_nvcc_release


def _login(facts, script: str):
    return facts.run("bash -lc %s", script)


def _profile_scripts(facts) -> list[str]:
    r = facts.run("ls -1 /etc/profile.d/cuda*.sh 2>/dev/null; true")
    return r.stdout.split()


def test_cuda_profile_script_present(facts, host_vars):
    require_gpu_planned(host_vars)
    assert _profile_scripts(facts), "no /etc/profile.d/cuda*.sh: login shells get no CUDA_HOME/PATH"


def test_cuda_home_holds_nvcc(facts, host_vars):
    require_gpu_planned(host_vars)
    home = _login(facts, 'printf %s "${CUDA_HOME:-}"').stdout.strip()
    assert home, "CUDA_HOME is not set in a login shell"
    assert facts.run("test -x %s", f"{home}/bin/nvcc").rc == 0, f"CUDA_HOME={home} has no executable bin/nvcc"


def test_nvcc_release_is_pinned(facts, host_vars):
    require_gpu_planned(host_vars)
    want = str((host_vars.get("cf_software") or {}).get("cuda_version"))
    r = _login(facts, "nvcc --version")
    assert r.rc == 0, f"nvcc --version failed in a login shell (rc {r.rc}): {(r.stderr or r.stdout).strip()[:200]}"
    assert parse_nvcc_release(r.stdout) == want, (
        f"nvcc reports release {parse_nvcc_release(r.stdout)}, the inventory pins CUDA {want}"
    )


def test_cuda_toolkit_held(facts, host_vars):
    require_gpu_planned(host_vars)
    nvcc = _login(facts, "command -v nvcc").stdout.strip()
    assert nvcc, "nvcc is not on a login shell's PATH"
    package = facts.owning_package(nvcc)
    assert package, f"{nvcc} belongs to no installed package"
    assert facts.package_held(package), f"{package} is not held: an upgrade can move the toolkit"
