"""k8s_control_plane's binaries, run by ansible-playbook (the role in its image mode, which installs the binaries
and ends) on this machine over the local connection: with the build's SHA256SUMS only a binary the host lacks or
holds another build of is copied (one sha256sum on the host, no copy task at all when every sum matches); without
that file every binary goes through `copy`, which still changes only what differs."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NAMES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")


def _build(src: Path, sums: bool) -> None:
    src.mkdir()
    for name in NAMES:
        (src / name).write_text(f"#!/bin/sh\necho {name} v1\n")
        (src / name).chmod(0o755)
    if sums:
        (src / "SHA256SUMS").write_text("".join(
            f"{hashlib.sha256((src / n).read_bytes()).hexdigest()}  {n}\n" for n in NAMES))


def _run(tmp_path: Path, src: Path, dest: Path) -> dict[str, list[str]]:
    """The role once; each task's name -> the items (or the host) it changed, and the binaries it was given."""
    playbook = tmp_path / "play.yml"
    playbook.write_text(json.dumps([{
        "hosts": "localhost", "gather_facts": False,
        "roles": [{"role": "k8s_control_plane", "vars": {
            "k8s_control_plane_binaries_only": True, "k8s_control_plane_kwok_enabled": False,
            "k8s_control_plane_bin_src": str(src), "k8s_control_plane_bin_dir": str(dest),
            "k8s_control_plane_pki": {}, "k8s_control_plane_cluster_name": "lab",
            "k8s_control_plane_etcd_members": [], "k8s_control_plane_simulated_nodes": []}}]}]))
    env = {**os.environ, "ANSIBLE_ROLES_PATH": str(REPO / "roles"), "ANSIBLE_STDOUT_CALLBACK": "json",
           "ANSIBLE_LOCALHOST_WARNING": "False", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_HOME": str(tmp_path / "ah")}
    out = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                          "-e", f"ansible_python_interpreter={sys.executable}", str(playbook)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    seen: dict[str, list[str]] = {}
    for task in json.loads(out.stdout)["plays"][0]["tasks"]:
        result = task["hosts"].get("localhost")
        if result is None:  # meta tasks (end_role) report no host
            continue
        name = task["task"]["name"].removeprefix("k8s_control_plane : ")
        items = result.get("results")
        if items is not None:
            seen[name] = [r["item"] for r in items if r.get("changed")]
            seen[name + " (given)"] = [r["item"] for r in items]
        elif not result.get("skipped"):
            seen[name] = ["localhost"] if result.get("changed") else []
    return seen


COPY = "Install the control-plane binaries the host lacks or holds another build of."
READ = "Read the SHA-256 sums of the control-plane binaries on the host (one command for them all)."


def test_with_the_builds_sums_only_a_differing_binary_is_copied(tmp_path: Path):
    src, dest = tmp_path / "bin", tmp_path / "host"
    _build(src, sums=True)
    dest.mkdir()
    first = _run(tmp_path, src, dest)
    assert first[COPY] == list(NAMES) and READ in first, first
    assert all((dest / n).read_bytes() == (src / n).read_bytes() for n in NAMES)
    second = _run(tmp_path, src, dest)
    assert second[COPY + " (given)"] == [] and second[READ] == [], second  # every sum matched: nothing to copy
    (dest / "kube-scheduler").write_text("another build\n")
    (dest / "kubectl").unlink()
    third = _run(tmp_path, src, dest)
    assert third[COPY + " (given)"] == ["kube-scheduler", "kubectl"] == third[COPY], third
    assert (dest / "kube-scheduler").read_bytes() == (src / "kube-scheduler").read_bytes()


def test_without_the_sums_every_binary_goes_through_copy(tmp_path: Path):
    src, dest = tmp_path / "bin", tmp_path / "host"
    _build(src, sums=False)
    dest.mkdir()
    assert _run(tmp_path, src, dest)[COPY] == list(NAMES)
    (dest / "etcd").write_text("another build\n")
    again = _run(tmp_path, src, dest)
    assert READ not in again and again[COPY + " (given)"] == list(NAMES) and again[COPY] == ["etcd"], again
