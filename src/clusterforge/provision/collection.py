"""Build the clusterforge Ansible collection (clusterforge.gpu) from the repository's roles.

The repository keeps one copy of every role under roles/ and the site playbook under playbooks/;
the collection tree is assembled from them at build time (collection/ holds what only the
collection has: galaxy.yml, meta/runtime.yml, README.md, the changelog; the repository's LICENSE
is added), then ``ansible-galaxy collection build`` packs it. All of it is found through
``clusterforge.paths``, so an installed wheel builds from its package data. ``collection/`` alone
is not a collection: ``ansible-galaxy collection build collection/`` stops at its
``BUILD-WITH-CLUSTERFORGE`` link, whose (missing) target names this command. In the collection
the site playbook calls the roles by FQCN (``clusterforge.gpu.nvidia_driver``) and runs as
``ansible-playbook clusterforge.gpu.site``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from clusterforge import paths
from clusterforge.outdir import check_out_dir, write_file

__all__ = ["CollectionError", "CollectionInfo", "assemble", "build", "collection_info", "fqcn"]

_SKELETON = "collection"
# A link in collection/ whose missing target tells `ansible-galaxy collection build collection/` to use us.
REFUSAL_LINK = "BUILD-WITH-CLUSTERFORGE"
# Files of playbooks/ that belong in the collection (ansible.cfg and the callback stay with the repo).
_PLAYBOOK_FILES = ("site.yml", "group_vars", "vars")
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "*.retry", REFUSAL_LINK)
# a role's library/ becomes the collection's plugins/modules (_modules)
_IGNORED_IN_ROLES = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "*.retry", REFUSAL_LINK, "library")
# `role: name` in a play's roles list (mapping or flow style); FQCNs (with dots) are left alone.
_ROLE_REF = re.compile(r"(\brole:\s*)([a-z_][a-z0-9_]*)(?=\s*[,}\n])")


class CollectionError(Exception):
    """The collection cannot be assembled or built; the message says why."""


@dataclass(frozen=True)
class CollectionInfo:
    namespace: str
    name: str
    version: str

    @property
    def tarball_name(self) -> str:
        return f"{self.namespace}-{self.name}-{self.version}.tar.gz"


def collection_info(repo_root: Path | None = None) -> CollectionInfo:
    galaxy = _root(repo_root) / _SKELETON / "galaxy.yml"
    try:
        data = yaml.safe_load(galaxy.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise CollectionError(f"{galaxy}: {exc}") from exc
    try:
        return CollectionInfo(str(data["namespace"]), str(data["name"]), str(data["version"]))
    except (KeyError, TypeError) as exc:
        raise CollectionError(f"{galaxy}: namespace, name and version are required") from exc


def _root(repo_root: Path | None) -> Path:
    """The directory holding collection/, roles/ and playbooks/: the given one, else clusterforge.paths'."""
    try:
        return Path(repo_root) if repo_root is not None else paths.data_root()
    except paths.DataNotFound as exc:
        raise CollectionError(str(exc)) from exc


def fqcn(role: str, repo_root: Path | None = None) -> str:
    info = collection_info(repo_root)
    return f"{info.namespace}.{info.name}.{role}"


def _roles(repo_root: Path) -> list[str]:
    roles_dir = repo_root / "roles"
    names = sorted(p.name for p in roles_dir.iterdir() if (p / "tasks" / "main.yml").is_file())
    bad = [n for n in names if not re.fullmatch(r"[a-z_][a-z0-9_]*", n)]
    if bad:
        raise CollectionError(f"{roles_dir}: role names {bad} are not valid collection role names ([a-z0-9_])")
    return names


def _modules(repo_root: Path, roles: list[str], out: Path) -> list[str]:
    """The roles' own modules (roles/*/library, where a role links the one it shares) as the collection's
    plugins/modules: a role inside a collection does not load a library/ of its own, and a short module
    name in a collection's role resolves to its collection first."""
    seen: dict[str, bytes] = {}
    for role in roles:
        library = repo_root / "roles" / role / "library"
        for module in sorted(library.glob("*.py")) if library.is_dir() else []:
            data = module.read_bytes()
            if seen.setdefault(module.name, data) != data:
                raise CollectionError(f"{module}: another role's library has a different {module.name}")
    for name, data in sorted(seen.items()):
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(data)
    return [name.removesuffix(".py") for name in sorted(seen)]


def _fqcn_modules(text: str, modules: list[str], prefix: str) -> str:
    """A role's tasks with each task key naming one of the roles' own modules given as its FQCN."""
    names = "|".join(re.escape(m) for m in modules)
    return re.sub(rf"(?m)^(\s*(?:-\s+)?)({names}):(?=\s)", lambda m: f"{m.group(1)}{prefix}{m.group(2)}:", text)


def _fqcn_playbook(text: str, roles: list[str], prefix: str) -> str:
    """The site playbook with every short role name replaced by its FQCN."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in roles:
            raise CollectionError(f"playbooks/site.yml: role {name!r} is not under roles/")
        return f"{match.group(1)}{prefix}{name}"

    return _ROLE_REF.sub(replace, text)


def assemble(tree: Path, repo_root: Path | None = None) -> Path:
    """Lay the collection out under ``tree`` (which must not exist) and return it."""
    repo_root = _root(repo_root)
    info = collection_info(repo_root)
    roles = _roles(repo_root)
    if not (repo_root / _SKELETON).is_dir():
        raise CollectionError(f"{repo_root / _SKELETON} is missing (the collection skeleton: galaxy.yml, meta/)")
    shutil.copytree(repo_root / _SKELETON, tree, ignore=_IGNORED)
    license_file = repo_root / "LICENSE"
    if not license_file.is_file():
        raise CollectionError(f"{license_file} is missing; the collection ships the project's licence")
    shutil.copy2(license_file, tree / "LICENSE")
    for role in roles:
        shutil.copytree(repo_root / "roles" / role, tree / "roles" / role, ignore=_IGNORED_IN_ROLES)
    modules = _modules(repo_root, roles, tree / "plugins" / "modules")
    prefix = f"{info.namespace}.{info.name}."
    for tasks in sorted((tree / "roles").glob("*/tasks/*.yml")) if modules else []:
        tasks.write_text(_fqcn_modules(tasks.read_text(), modules, prefix))
    playbooks = tree / "playbooks"
    playbooks.mkdir()
    for name in _PLAYBOOK_FILES:
        src = repo_root / "playbooks" / name
        if src.is_dir():
            shutil.copytree(src, playbooks / name, ignore=_IGNORED)
        else:
            prefix = f"{info.namespace}.{info.name}."
            (playbooks / name).write_text(_fqcn_playbook(src.read_text(), roles, prefix))
    return tree


def _ansible_galaxy() -> list[str]:
    """ansible-galaxy of this interpreter's ansible-core: the script beside it, else its module."""
    beside = Path(sys.executable).parent / "ansible-galaxy"
    if beside.exists():
        return [str(beside)]
    try:
        import ansible.cli.galaxy  # noqa: F401  (ansible-core is a dependency; the module is its entry point)
    except ImportError as exc:
        raise CollectionError("ansible-galaxy is not installed (it comes with ansible-core)") from exc
    return [sys.executable, "-m", "ansible.cli.galaxy"]


def build(out_dir: Path, repo_root: Path | None = None) -> Path:
    """Assemble and build the collection; the tarball appears in ``out_dir`` whole or not at all."""
    out_dir = Path(out_dir)
    check_out_dir(out_dir)  # a file or / as the output is refused before the build, not after it
    info = collection_info(repo_root)  # before anything is written: a broken install leaves no empty out dir
    _roles(_root(repo_root))
    with tempfile.TemporaryDirectory(prefix="cf-collection-") as tmp:
        tree = assemble(Path(tmp) / "tree", repo_root)
        built = Path(tmp) / "built"
        env = {**os.environ, "ANSIBLE_HOME": str(Path(tmp) / "ansible-home"), "ANSIBLE_NOCOLOR": "1"}
        run = subprocess.run(
            [*_ansible_galaxy(), "collection", "build", str(tree), "--output-path", str(built)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        tarball = built / info.tarball_name
        if run.returncode != 0 or not tarball.is_file():
            raise CollectionError(f"ansible-galaxy collection build failed:\n{run.stdout}{run.stderr}".rstrip())
        return write_file(out_dir, info.tarball_name, tarball.read_bytes())
