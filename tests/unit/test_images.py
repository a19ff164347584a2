"""Which golden image a server boots: profiles without identity, names that follow what builds them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from clusterforge import paths
from clusterforge.loading import load_and_plan
from clusterforge.pulumi.images import (
    IDENTITY_KEYS,
    build_inputs_hash,
    host_images,
    image_profile,
    image_roles,
    plan_images,
)
from clusterforge.render import render_tree
from clusterforge.render.yamltext import to_ansible_yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lab_servers() -> dict[str, str]:
    _, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    tree = render_tree(plan)
    return {d.name: tree.host_vars(d.name) for d in plan.devices if d.kind == "server"}


def test_profile_drops_identity_and_keeps_software(lab_servers):
    host, text = sorted(lab_servers.items())[0]
    host_vars = yaml.safe_load(text)
    profile = image_profile(host_vars)
    assert not set(IDENTITY_KEYS) & set(profile)
    assert profile["cf_software"] == host_vars["cf_software"]
    assert profile["cf_roce"]["interfaces"] == [] and host_vars["cf_roce"]["interfaces"]
    assert profile["cf_storage"]["mounts"] == [] and host_vars["cf_storage"]["mounts"]


def test_one_image_for_one_profile(lab_servers):
    specs = plan_images(lab_servers, "sha256:roles", "rootfs")
    assert len(specs) == 1
    assert set(specs[0].hosts) == set(lab_servers)
    assert host_images(specs) == {h: specs[0].name for h in lab_servers}
    assert specs[0].name.startswith("gpu-") and len(specs[0].name) == 20


def test_name_follows_software_roles_and_rootfs_not_identity(lab_servers):
    host, text = sorted(lab_servers.items())[0]
    base = plan_images({host: text}, "sha256:roles", "rootfs")[0].name
    moved = yaml.safe_load(text)
    moved.update(ansible_host="198.18.9.99", cf_name="other", cf_rack="su09-r09")
    assert plan_images({host: to_ansible_yaml(moved)}, "sha256:roles", "rootfs")[0].name == base
    upgraded = yaml.safe_load(text)
    upgraded["cf_software"] = {**upgraded["cf_software"], "cuda_version": "12.2"}
    assert plan_images({host: to_ansible_yaml(upgraded)}, "sha256:roles", "rootfs")[0].name != base
    assert plan_images({host: text}, "sha256:other-roles", "rootfs")[0].name != base
    assert plan_images({host: text}, "sha256:roles", "other-rootfs")[0].name != base


def test_two_profiles_two_images(lab_servers):
    (a, ta), (b, tb) = sorted(lab_servers.items())[:2]
    other = yaml.safe_load(tb)
    other["cf_software"] = {**other["cf_software"], "nvidia_driver_branch": "550"}
    specs = plan_images({a: ta, b: to_ansible_yaml(other)}, "h", "r")
    assert len(specs) == 2 and {s.hosts for s in specs} == {(a,), (b,)}


def test_image_playbook_runs_existing_roles_and_no_kubernetes():
    roles = image_roles(paths.playbooks_dir() / "image.yml")
    assert roles[:4] == ["time_sync", "nouveau_blacklist", "nvidia_driver", "cuda_toolkit"]
    assert all((paths.roles_dir() / r / "tasks" / "main.yml").is_file() for r in roles)
    assert "k8s_gpu" not in roles and "storage_server" not in roles


def test_inputs_hash_follows_image_roles_only(tmp_path):
    shutil.copytree(paths.playbooks_dir(), tmp_path / "playbooks")
    shutil.copytree(paths.roles_dir(), tmp_path / "roles")
    before = build_inputs_hash(tmp_path / "playbooks", tmp_path / "roles", tmp_path)
    with open(tmp_path / "roles" / "k8s_gpu" / "defaults" / "main.yml", "a") as f:
        f.write("\n# not in the image\n")
    assert build_inputs_hash(tmp_path / "playbooks", tmp_path / "roles", tmp_path) == before
    with open(tmp_path / "roles" / "cuda_toolkit" / "defaults" / "main.yml", "a") as f:
        f.write("\n# in the image\n")
    assert build_inputs_hash(tmp_path / "playbooks", tmp_path / "roles", tmp_path) != before


def test_host_image_diff_reads_the_cache(tmp_path, monkeypatch):
    """A new name replaces the image; an image gone from the cache is drift the update rebuilds."""
    import json

    from clusterforge.lab import image
    from clusterforge.pulumi.providers.host_image import HostImageProvider

    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path))
    provider = HostImageProvider()
    props = {"name": "gpu-00000000000000aa", "profile": {}, "hosts": ["h1"], "work_dir": "/w", "extravars": {}}
    renamed = provider.diff("id", props, {**props, "name": "gpu-00000000000000bb"})
    assert renamed.changes and renamed.replaces == ["name"]
    missing = provider.diff("id", props, props)
    assert missing.changes and not missing.replaces
    image.layer(props["name"]).mkdir(parents=True)
    (image.image_dir(props["name"]) / image.STAMP).write_text(json.dumps({"name": props["name"]}))
    assert not provider.diff("id", props, props).changes
    assert provider.diff("id", props, {**props, "hosts": ["h1", "h2"]}).changes


def test_commands_on_a_running_lab_take_its_images(tmp_path, monkeypatch, lab_servers):
    """`replace` and `lab up|status` plan the lab without images; the lab `up` booted from images is the same
    lab and is used as it runs; another lab of that name is not."""
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.lab.manager import as_running
    from clusterforge.lab.state import LabState
    from clusterforge.pulumi.images import booting

    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path))
    _, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    planned = lab_topology(plan, render_tree(plan))
    assert as_running(planned) == planned  # nothing runs
    running = booting(planned, plan_images(lab_servers, "h", "r"))
    LabState(planned.name).update(topology=running.model_dump(mode="json"))
    assert as_running(planned) == running
    assert {h.image for h in as_running(planned).hosts if h.kind == "server"} != {None}
    other = planned.model_copy(update={"hosts": planned.hosts[1:]})
    assert as_running(other) == other


def _fake_bin_dir(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "v1.0-etcdv3-kwokv0" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("etcd", "kube-apiserver", "kubectl"):
        (bin_dir / name).write_bytes(name.encode())
    return bin_dir


def test_control_image_profile_holds_software_only(tmp_path):
    """The control nodes' image: which software (Kubernetes binaries, Slurm controller packages), never a host's
    identity, configuration or secrets; its own playbook, and the binaries' directory as an extra var."""
    from clusterforge.pulumi.images import CONTROL_IMAGE_PLAYBOOK, control_image

    bin_dir = _fake_bin_dir(tmp_path)
    spec = control_image(["ctl-02", "ctl-01"], kubernetes=True, slurm=True, bin_dir=bin_dir, inputs_hash="h",
                         rootfs_hash="r")
    assert spec is not None and spec.name.startswith("ctl-") and len(spec.name) == 20
    assert spec.hosts == ("ctl-01", "ctl-02") and spec.playbook == CONTROL_IMAGE_PLAYBOOK
    assert spec.extravars == {"cf_k8s_bin_dir": str(bin_dir)}
    assert set(spec.profile) == {"cf_image_kubernetes", "cf_image_slurm", "cf_image_k8s_binaries"}
    assert set(spec.profile["cf_image_k8s_binaries"]["files"]) == {"etcd", "kube-apiserver", "kubectl"}
    slurm_only = control_image(["ctl-01"], kubernetes=True, slurm=True, bin_dir=None, inputs_hash="h", rootfs_hash="r")
    assert slurm_only is not None and slurm_only.extravars == {} and not slurm_only.profile["cf_image_kubernetes"]
    assert control_image(["ctl-01"], kubernetes=False, slurm=False, bin_dir=bin_dir, inputs_hash="h",
                         rootfs_hash="r") is None
    assert control_image([], kubernetes=True, slurm=True, bin_dir=bin_dir, inputs_hash="h", rootfs_hash="r") is None
    # monitoring planned: node_exporter, Prometheus and Alertmanager in the image (playbooks/image-control.yml),
    # an image even without a scheduler; without it the profile (and so the name) is what it was before
    watched = control_image(["ctl-01"], kubernetes=False, slurm=False, bin_dir=None, inputs_hash="h", rootfs_hash="r",
                            monitoring=True)
    assert watched is not None and watched.profile["cf_image_monitoring"] is True
    assert "cf_image_monitoring" not in spec.profile


def test_control_image_name_follows_binaries_schedulers_roles_and_rootfs_not_hosts(tmp_path):
    import os

    from clusterforge.pulumi.images import control_image

    bin_dir = _fake_bin_dir(tmp_path)

    def name(hosts=("ctl-01",), kubernetes=True, slurm=True, inputs="h", rootfs="r"):
        spec = control_image(list(hosts), kubernetes=kubernetes, slurm=slurm, bin_dir=bin_dir, inputs_hash=inputs,
                             rootfs_hash=rootfs)
        assert spec is not None
        return spec.name

    base = name()
    assert name(hosts=("ctl-01", "ctl-02", "ctl-03")) == base  # the same software on every control node
    assert len({base, name(kubernetes=False), name(slurm=False), name(inputs="h2"), name(rootfs="r2")}) == 5
    watched = control_image(["ctl-01"], kubernetes=True, slurm=True, bin_dir=bin_dir, inputs_hash="h",
                            rootfs_hash="r", monitoring=True)
    assert watched is not None and watched.name != base
    st = (bin_dir / "kubectl").stat()
    os.utime(bin_dir / "kubectl", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a rebuilt binary
    assert name() != base


def test_control_inputs_hash_follows_the_control_roles_only(tmp_path):
    from clusterforge.pulumi.images import CONTROL_IMAGE_PLAYBOOK

    shutil.copytree(paths.playbooks_dir(), tmp_path / "playbooks")
    shutil.copytree(paths.roles_dir(), tmp_path / "roles")
    control_roles = image_roles(tmp_path / "playbooks" / CONTROL_IMAGE_PLAYBOOK)
    assert control_roles == ["time_sync", "k8s_control_plane", "slurm_controller", "node_exporter", "monitoring"]

    def inputs(playbook=CONTROL_IMAGE_PLAYBOOK):
        return build_inputs_hash(tmp_path / "playbooks", tmp_path / "roles", tmp_path, playbook)

    before, gpu = inputs(), inputs("image.yml")
    with open(tmp_path / "roles" / "slurm_controller" / "defaults" / "main.yml", "a") as f:
        f.write("\n# in the control image\n")
    assert inputs() != before and inputs("image.yml") == gpu  # the GPU image is not rebuilt for it


def test_slurm_nodes_boot_an_image_with_slurmd_and_the_others_do_not(lab_servers):
    """A Slurm node's image has slurmd's packages (cf_image_slurm, playbooks/image.yml): a server that is one and
    a server that is not boot different images, and the flag is the only difference in their profiles."""
    first, second = sorted(lab_servers)[:2]
    pair = {first: lab_servers[first], second: lab_servers[second]}
    with_slurm = {s.name: s for s in plan_images(pair, "sha256:roles", "rootfs", frozenset({first}))}
    by_host = host_images(with_slurm.values())
    assert by_host[first] != by_host[second]
    slurm_profile, plain_profile = dict(with_slurm[by_host[first]].profile), dict(with_slurm[by_host[second]].profile)
    assert slurm_profile.pop("cf_image_slurm") is True and plain_profile.pop("cf_image_slurm") is False
    assert slurm_profile == plain_profile
