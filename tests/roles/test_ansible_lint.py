"""ansible-lint's production profile must pass on roles/ and playbooks/, on the collection skeleton
(collection/: galaxy.yml metadata, changelog) and on the assembled collection as it ships."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clusterforge.provision.collection import assemble

REPO_ROOT = Path(__file__).resolve().parents[2]


def _ansible_lint() -> str:
    beside_python = Path(sys.executable).parent / "ansible-lint"
    found = str(beside_python) if beside_python.exists() else shutil.which("ansible-lint")
    if found is None:
        pytest.fail("ansible-lint is not installed (it is in the project's test extras: pip install -e .[test])")
    return found


def _lint(cwd: Path, env: dict[str, str], *targets: str) -> None:
    linted = subprocess.run(
        [_ansible_lint(), "--offline", "--nocolor", "--profile", "production", *targets],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )
    report = linted.stdout + linted.stderr
    assert linted.returncode == 0, report
    assert "Passed" in report and "production" in report, report


@pytest.mark.slow
def test_the_collection_skeleton_and_the_assembled_collection_pass(tmp_path: Path) -> None:
    env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
           "ANSIBLE_HOME": str(tmp_path / "ansible-home"), "NO_COLOR": "1"}
    _lint(REPO_ROOT / "collection", env, ".")
    # ansible_collections/<namespace>/<name>: the site playbook's FQCN roles resolve to this tree
    tree = assemble(tmp_path / "collections" / "ansible_collections" / "clusterforge" / "gpu")
    _lint(tree, {**env, "ANSIBLE_COLLECTIONS_PATH": str(tmp_path / "collections")}, ".")


@pytest.mark.slow
def test_roles_and_playbooks_pass_the_production_profile(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO_ROOT / "playbooks" / "ansible.cfg"),
        "ANSIBLE_ROLES_PATH": str(REPO_ROOT / "roles"),
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
        "ANSIBLE_HOME": str(tmp_path / "ansible-home"),
        "NO_COLOR": "1",
    }
    linted = subprocess.run(
        [_ansible_lint(), "--offline", "--nocolor", "--profile", "production", "roles", "playbooks"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = linted.stdout + linted.stderr
    assert linted.returncode == 0, report
    assert "Passed" in report and "production" in report, report
