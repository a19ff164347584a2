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
    assert roles[:3] == ["nouveau_blacklist", "nvidia_driver", "cuda_toolkit"]
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
