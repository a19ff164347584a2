"""Wheel build hook: ship templates/, roles/, playbooks/, stacks/cluster/, collection/ and LICENSE inside the
package, the Pulumi engine's build recipe (tools/pulumi-build, tools/launchers, scripts/setup-pulumi.sh) and the
Kubernetes build recipe (tools/k8s-build: the pinned Kubernetes, etcd, kwok, Kueue and CoreDNS modules and the
node tools; scripts/setup-k8s.sh).

They stay at the top of the repository, where they are edited; a regular wheel carries a copy
under ``clusterforge/_data/``, where ``clusterforge.paths`` looks when there is no checkout. An
editable install gets no copy: it runs from the checkout and reads the originals. Symbolic links are
left out (collection/BUILD-WITH-CLUSTERFORGE is one on purpose: see provision/collection.py).
"""

from __future__ import annotations

from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

DATA = ("templates", "roles", "playbooks", "stacks/cluster", "collection", "tools/pulumi-build", "tools/launchers",
        "tools/k8s-build")
FILES = ("LICENSE", "scripts/setup-pulumi.sh", "scripts/setup-k8s.sh")
TARGET = "clusterforge/_data"
SKIPPED = {"__pycache__", ".pytest_cache"}


def _files(root: Path, top: str) -> dict[str, str]:
    found = {}
    for path in sorted((root / top).rglob("*")):
        rel = path.relative_to(root)
        if path.is_symlink() or not path.is_file() or SKIPPED & set(rel.parts) or path.suffix == ".pyc":
            continue
        found[str(path)] = f"{TARGET}/{rel.as_posix()}"
    return found


class PackageDataHook(BuildHookInterface):
    PLUGIN_NAME = "clusterforge-data"

    def initialize(self, version: str, build_data: dict) -> None:
        if version != "standard":
            return
        root = Path(self.root)
        for top in DATA:
            build_data["force_include"].update(_files(root, top))
        for name in FILES:
            build_data["force_include"][str(root / name)] = f"{TARGET}/{name}"
