"""The clusterforge.gpu collection: built with ansible-galaxy from roles/, installed from the
tarball, its roles reached by FQCN only (the repository's roles/ is off the roles path), and its
execution-environment definition accepted by ansible-builder (offline: `create` writes the build
context and validates the schema; nothing is pulled)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.licenses import canonicalize_license_expression

from clusterforge.provision.collection import CollectionError, _fqcn_playbook, build, collection_info

REPO_ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GOLDEN_HOST_VARS = REPO_ROOT / "tests" / "golden" / "lab" / "ansible" / "host_vars" / "su01-r01-gpu01.yml"


def _repo_roles() -> list[str]:
    return sorted(p.name for p in (REPO_ROOT / "roles").iterdir() if (p / "tasks" / "main.yml").is_file())


@pytest.fixture(scope="module")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("collection") / "dist")


@pytest.fixture(scope="module")
def installed(tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Install from the tarball offline; return the environment that sees only the installed copy."""
    root = tmp_path_factory.mktemp("installed")
    empty_roles = root / "no-roles"
    empty_roles.mkdir()
    collections = root / "collections"
    env = {
        **os.environ,
        "ANSIBLE_HOME": str(root / "ansible-home"),
        "ANSIBLE_LOCAL_TEMP": str(root / "tmp"),
        "ANSIBLE_NOCOLOR": "1",
    }
    done = subprocess.run(
        [str(BIN / "ansible-galaxy"), "collection", "install", "--offline", str(tarball), "-p", str(collections)],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The installed copy (kubernetes.core comes from the interpreter's ansible package); no repository roles.
    env["ANSIBLE_COLLECTIONS_PATH"] = str(collections)
    env["ANSIBLE_ROLES_PATH"] = str(empty_roles)
    env["ANSIBLE_CONFIG"] = str(root / "none.cfg")  # no repository ansible.cfg (its roles_path = ../roles)
    return env


def test_tarball_holds_every_role_and_the_fqcn_site_playbook(tarball: Path) -> None:
    info = collection_info()
    assert tarball.name == f"clusterforge-gpu-{info.version}.tar.gz"
    with tarfile.open(tarball) as tar:
        names = set(tar.getnames())
        manifest = json.load(tar.extractfile("MANIFEST.json"))
        site = yaml.safe_load(tar.extractfile("playbooks/site.yml"))
    assert {f"roles/{r}/tasks/main.yml" for r in _repo_roles()} <= names
    assert {f"roles/{r}/meta/argument_specs.yml" for r in _repo_roles()} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    roles_in_site = [entry["role"] for play in site for entry in play.get("roles", [])]
    assert roles_in_site and all(r.startswith("clusterforge.gpu.") for r in roles_in_site), roles_in_site
    meta = manifest["collection_info"]
    assert (meta["namespace"], meta["name"]) == ("clusterforge", "gpu")
    assert meta["dependencies"] == {"kubernetes.core": ">=3.0.0"}
    for key in ("repository", "documentation", "issues"):
        assert meta[key].startswith("https://"), (key, meta[key])
    assert meta["license"] == ["Apache-2.0"]
    assert {"LICENSE", "CHANGELOG.md", "changelogs/changelog.yaml"} <= names
    assert "BUILD-WITH-CLUSTERFORGE" not in names
    with tarfile.open(tarball) as tar:
        assert tar.extractfile("LICENSE").read() == (REPO_ROOT / "LICENSE").read_bytes()
        changelog = yaml.safe_load(tar.extractfile("changelogs/changelog.yaml"))
    assert info.version in changelog["releases"]


def test_ansible_galaxy_build_of_the_skeleton_refuses_with_a_pointer(tmp_path: Path) -> None:
    """`ansible-galaxy collection build collection/` would pack an empty collection; it stops instead."""
    done = subprocess.run(
        [str(BIN / "ansible-galaxy"), "collection", "build", str(REPO_ROOT / "collection"), "--output-path",
         str(tmp_path / "out")],
        env={**os.environ, "ANSIBLE_HOME": str(tmp_path / "home"), "ANSIBLE_NOCOLOR": "1"},
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode != 0, done.stdout
    assert "clusterforge collection build" in done.stdout + done.stderr
    assert not list(tmp_path.rglob("*.tar.gz"))


def test_changelog_fragments_lint(tmp_path: Path) -> None:
    """antsibull-changelog accepts the config, the release history and any pending fragments."""
    tool = BIN / "antsibull-changelog"
    if not tool.exists():
        pytest.fail("antsibull-changelog is not installed (it is in the project's test extras)")
    env = {**os.environ, "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")])}
    for argv in (["lint"], ["lint-changelog-yaml", "changelogs/changelog.yaml"]):
        done = subprocess.run([str(tool), *argv], cwd=REPO_ROOT / "collection", env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and not done.stdout.strip(), (argv, done.stdout + done.stderr)


def test_license_is_an_spdx_identifier() -> None:
    galaxy = yaml.safe_load((REPO_ROOT / "collection" / "galaxy.yml").read_text())
    assert galaxy["license"] and all(canonicalize_license_expression(x) == x for x in galaxy["license"])


def test_collection_version_follows_the_package_version() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert collection_info().version == project["version"]


def test_fqcn_rewrite_refuses_an_unknown_role() -> None:
    with pytest.raises(CollectionError, match="'not_a_role' is not under roles/"):
        _fqcn_playbook("  roles:\n    - {role: not_a_role, tags: [x]}\n", ["nvidia_driver"], "clusterforge.gpu.")


def test_installed_roles_document_their_arguments(installed: dict[str, str]) -> None:
    shown = subprocess.run(
        [str(BIN / "ansible-doc"), "-t", "role", "--json", "clusterforge.gpu.k8s_gpu"],
        env=installed, capture_output=True, text=True, timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    options = json.loads(shown.stdout)["clusterforge.gpu.k8s_gpu"]["entry_points"]["main"]["options"]
    assert options["k8s_gpu_mode"]["choices"] == ["device-plugin", "gpu-operator", "dra"]
    defaults = yaml.safe_load((REPO_ROOT / "roles" / "k8s_gpu" / "defaults" / "main.yml").read_text())
    assert options["k8s_gpu_mode"]["default"] == defaults["k8s_gpu_mode"] == "device-plugin"
    documented = [name for name, option in options.items() if name in defaults]
    assert documented and all(options[n].get("default") == defaults[n] for n in documented)
    listed = subprocess.run(
        [str(BIN / "ansible-doc"), "-t", "role", "--list", "--json", "clusterforge.gpu"],
        env=installed, capture_output=True, text=True, timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    assert sorted(k.split(".")[-1] for k in json.loads(listed.stdout)) == _repo_roles()


def test_short_role_names_do_not_resolve_without_the_repository(installed: dict[str, str], tmp_path: Path) -> None:
    """Guard: the FQCN tests below really use the installed collection, not roles/."""
    playbook = tmp_path / "short.yml"
    playbook.write_text("- hosts: localhost\n  gather_facts: false\n  roles: [k8s_gpu]\n")
    checked = subprocess.run(
        [str(BIN / "ansible-playbook"), "--syntax-check", "-i", "localhost,", str(playbook)],
        env=installed, capture_output=True, text=True, timeout=120,
    )
    assert checked.returncode != 0 and "k8s_gpu" in checked.stdout + checked.stderr


def test_site_playbook_runs_by_fqcn_with_its_group_vars(installed: dict[str, str], tmp_path: Path) -> None:
    """`ansible-playbook clusterforge.gpu.site` (Kubernetes tag) renders the manifests on a local host,
    with the collection's group_vars mapping the rendered cf_* variables."""
    host_vars = yaml.safe_load(GOLDEN_HOST_VARS.read_text())
    inventory = tmp_path / "inventory.yml"
    host = {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "cf_name": "su01-r01-gpu01",
        "cf_gpu_count": 8,
        "cf_gpu_model": "H200",
        "cf_software": host_vars["cf_software"],
    }
    inventory.write_text(yaml.safe_dump({"servers": {"hosts": {"localhost": host}}}))
    manifests, helm = tmp_path / "manifests", tmp_path / "helm"
    played = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(inventory), "clusterforge.gpu.site", "--tags", "kubernetes",
         "-e", json.dumps({"k8s_gpu_manifest_dir": str(manifests), "k8s_gpu_helm_values_dir": str(helm),
                           "k8s_gpu_mode": "gpu-operator"})],
        env=installed, capture_output=True, text=True, timeout=300,
    )
    assert played.returncode == 0, played.stdout + played.stderr
    assert sorted(p.name for p in manifests.rglob("*.yaml")) == ["su01-r01-gpu01.yaml"]
    values = yaml.safe_load((helm / "gpu-operator-values.yaml").read_text())
    assert values["dcgmExporter"]["enabled"] is True


def _ansible_builder() -> str:
    found = BIN / "ansible-builder"
    if not found.exists():
        pytest.fail("ansible-builder is not installed (it is in the project's test extras)")
    return str(found)


def test_execution_environment_definition_builds_a_context(tarball: Path, tmp_path: Path) -> None:
    """ansible-builder (schema version 3) accepts the definition and lays out the collection tarball
    where the EE's galaxy requirements expect it."""
    work = tmp_path / "repo"
    shutil.copytree(REPO_ROOT / "collection", work / "collection", symlinks=True)
    (work / "dist").mkdir()
    shutil.copy(tarball, work / "dist" / tarball.name)
    context = tmp_path / "context"
    created = subprocess.run(
        [_ansible_builder(), "create", "-f", str(work / "collection" / "execution-environment.yml"),
         "-c", str(context), "--output-filename", "Containerfile"],
        capture_output=True, text=True, timeout=300,
    )
    assert created.returncode == 0, created.stdout + created.stderr
    assert "No matches" not in created.stdout + created.stderr
    build_dir = context / "_build"
    requirements = yaml.safe_load((build_dir / "requirements.yml").read_text())
    files = [c["name"] for c in requirements["collections"] if c.get("type") == "file"]
    assert files == [f"collections/{tarball.name}"]
    assert (build_dir / files[0]).is_file()
    containerfile = (context / "Containerfile").read_text()
    assert "ansible-galaxy collection install" in containerfile and "python3.11" in containerfile
    # The galaxy stage, offline: the requirements install from the context as laid out.
    stage = subprocess.run(
        [str(BIN / "ansible-galaxy"), "collection", "install", "--offline", "-r", "requirements.yml",
         "-p", str(tmp_path / "ee-collections")],
        cwd=build_dir, env={**os.environ, "ANSIBLE_HOME": str(tmp_path / "home")},
        capture_output=True, text=True, timeout=300,
    )
    assert stage.returncode == 0, stage.stdout + stage.stderr
    assert (tmp_path / "ee-collections" / "ansible_collections" / "clusterforge" / "gpu" / "MANIFEST.json").is_file()


def test_execution_environment_schema_rejects_an_unknown_key(tmp_path: Path) -> None:
    """Guard: ansible-builder validates the definition (a typo in a key must fail)."""
    definition = yaml.safe_load((REPO_ROOT / "collection" / "execution-environment.yml").read_text())
    definition["dependencies"]["galaxyy"] = definition["dependencies"].pop("galaxy")
    bad = tmp_path / "collection" / "execution-environment.yml"
    bad.parent.mkdir()
    bad.write_text(yaml.safe_dump(definition))
    created = subprocess.run(
        [_ansible_builder(), "create", "-f", str(bad), "-c", str(tmp_path / "context")],
        capture_output=True, text=True, timeout=300,
    )
    assert created.returncode != 0 and "galaxyy" in created.stdout + created.stderr


def _recap(output: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP lines -> {host: {ok, changed, unreachable, failed, ...}}."""
    recap: dict[str, dict[str, int]] = {}
    for line in output.split("PLAY RECAP", 1)[-1].splitlines():
        host, sep, counts = line.partition(" : ")
        if sep:
            recap[host.strip()] = {k: int(v) for k, v in (kv.split("=") for kv in counts.split())}
    return recap


@pytest.mark.lab
@pytest.mark.slow
def test_collection_converges_on_the_lab_by_fqcn(installed: dict[str, str], lab_cluster, tmp_path: Path) -> None:
    """The installed collection's site playbook (nouveau and Kubernetes roles) converges on the lab's
    servers over SSH; the second run changes nothing."""
    lab = lab_cluster
    env = {**installed, "ANSIBLE_SSH_COMMON_ARGS": f"-F {lab.ssh_config}", "ANSIBLE_PIPELINING": "True",
           "ANSIBLE_FORKS": "20"}
    command = [str(BIN / "ansible-playbook"), "-i", str(lab.inventory_dir / "ansible" / "inventory.yml"),
               "clusterforge.gpu.site", "--tags", "nouveau,kubernetes", "-e", '{"cf_lab": true}']
    recaps = []
    for _ in range(2):
        played = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert played.returncode == 0, played.stdout[-6000:] + played.stderr[-3000:]
        recaps.append(_recap(played.stdout))
    first, second = recaps
    rendered = yaml.safe_load((lab.inventory_dir / "ansible" / "inventory.yml").read_text())
    storage = sorted(rendered["all"]["children"].get("storage_servers", {}).get("hosts") or {})
    # every GPU server and storage server reached (the site playbook builds the storage servers first)
    assert sorted(first) == sorted([*lab.hosts, *storage])
    assert {h: r["changed"] for h, r in second.items() if r["changed"]} == {}
    assert all(r["failed"] == 0 and r["unreachable"] == 0 for r in second.values())
    host = sorted(lab.hosts)[0]
    conf = subprocess.run(["ssh", "-F", str(lab.ssh_config), host, "cat /etc/modprobe.d/blacklist-nouveau.conf"],
                          capture_output=True, text=True, timeout=60)
    assert "blacklist nouveau" in conf.stdout.splitlines(), conf.stdout + conf.stderr
