"""Read the rendered Ansible inventory (``DIR/ansible/inventory.yml`` + group_vars/ + host_vars/).

The host checks take every expectation from here. Only PyYAML is needed, so the checks also
run where Ansible is not installed (the ``local`` target on a GPU machine).

Variable precedence is the part of Ansible's that rendered inventories use, low to high:
group ``all`` (inline, then ``group_vars/all``), the host's other groups from the outermost
to the innermost (ties by name; inline vars, then ``group_vars/<group>``), the host's inline
vars, then ``host_vars/<host>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clusterforge.render.yamltext import UnsafeTolerantLoader

__all__ = ["Inventory", "InventoryError", "inventory_file", "load_inventory"]


class InventoryError(Exception):
    """The rendered inventory is missing or not shaped like one."""


def inventory_file(path: str | Path) -> Path:
    """The inventory.yml for a rendered DIR, DIR/ansible, or the file itself."""
    p = Path(path)
    for candidate in (p, p / "ansible" / "inventory.yml", p / "inventory.yml"):
        if candidate.is_file():
            return candidate
    raise InventoryError(f"no rendered inventory at {p} "
                         "(expected DIR/ansible/inventory.yml from `clusterforge render`)")


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.load(path.read_text(), Loader=UnsafeTolerantLoader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        raise InventoryError(f"{path}: {exc}") from None


def _vars_from(base: Path, name: str) -> dict[str, Any]:
    """group_vars/<name>.yml|.yaml|<name> (a file, or a directory of YAML files in name order)."""
    merged: dict[str, Any] = {}
    for candidate in (base / f"{name}.yml", base / f"{name}.yaml", base / name):
        if candidate.is_file():
            merged.update(_read_yaml(candidate) or {})
        elif candidate.is_dir():
            for part in sorted(candidate.glob("*.y*ml")):
                merged.update(_read_yaml(part) or {})
    return merged


@dataclass
class _Group:
    name: str
    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)
    children: list[str] = field(default_factory=list)
    vars: dict[str, Any] = field(default_factory=dict)


@dataclass
class Inventory:
    path: Path
    groups: dict[str, _Group]

    @property
    def base(self) -> Path:
        return self.path.parent

    def group_hosts(self, group: str) -> list[str]:
        """Hosts of ``group`` and its children, in inventory order, each once."""
        seen: dict[str, None] = {}

        def walk(name: str, trail: tuple[str, ...]) -> None:
            g = self.groups.get(name)
            if g is None or name in trail:
                return
            for h in g.hosts:
                seen.setdefault(h, None)
            for child in g.children:
                walk(child, (*trail, name))

        walk(group, ())
        return list(seen)

    def all_hosts(self) -> list[str]:
        return self.group_hosts("all")

    def _depths(self) -> dict[str, int]:
        depth = {"all": 0}
        frontier = ["all"]
        while frontier:
            nxt = []
            for name in frontier:
                for child in self.groups[name].children:
                    if child not in depth:
                        depth[child] = depth[name] + 1
                        nxt.append(child)
            frontier = nxt
        return depth

    def host_vars(self, host: str) -> dict[str, Any]:
        if host not in self.all_hosts():
            raise InventoryError(f"host {host!r} is not in {self.path}")
        # The groups that list the host, and every ancestor of those (a child's host is the parent's too).
        names = {"all"} | {g.name for g in self.groups.values() if host in g.hosts}
        grew = True
        while grew:
            parents = {g.name for g in self.groups.values() if any(c in names for c in g.children)}
            grew = not parents <= names
            names |= parents
        depth = self._depths()
        ordered = sorted(names, key=lambda n: (depth.get(n, 1), n))
        merged: dict[str, Any] = {}
        for name in ordered:
            merged.update(self.groups[name].vars)
            merged.update(_vars_from(self.base / "group_vars", name))
        for g in self.groups.values():
            inline = g.hosts.get(host)
            if inline:
                merged.update(inline)
        merged.update(_vars_from(self.base / "host_vars", host))
        merged.setdefault("inventory_hostname", host)
        return merged


def _parse_group(name: str, body: Any, groups: dict[str, _Group]) -> None:
    g = groups.setdefault(name, _Group(name))
    if body is None:
        return
    if not isinstance(body, Mapping):
        raise InventoryError(f"group {name!r} must be a mapping")
    for host, hvars in (body.get("hosts") or {}).items():
        g.hosts[str(host)] = dict(hvars or {})
    g.vars.update(body.get("vars") or {})
    for child, child_body in (body.get("children") or {}).items():
        if child not in g.children:
            g.children.append(child)
        _parse_group(child, child_body, groups)


def load_inventory(path: str | Path) -> Inventory:
    file = inventory_file(path)
    data = _read_yaml(file)
    if not isinstance(data, Mapping) or "all" not in data:
        raise InventoryError(f"{file}: expected a YAML inventory with a top-level 'all' group")
    groups: dict[str, _Group] = {}
    for name, body in data.items():
        _parse_group(str(name), body, groups)
    # Ungrouped top-level groups are children of all.
    for name in list(groups):
        if name != "all" and not any(name in g.children for g in groups.values()):
            groups["all"].children.append(name)
    return Inventory(file, groups)
