"""The tags the site playbook answers to: those of its plays and role entries and of every role task file,
so `--tags bogus` is refused before a playbook starts (Ansible would run nothing and call it a success)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from clusterforge import paths
from clusterforge.provision.runner import SITE_PLAYBOOK

__all__ = ["site_tags"]

ANSIBLE_SPECIAL_TAGS = ("all", "always", "never", "tagged", "untagged")


def _tags_in(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        tags = node.get("tags")
        if isinstance(tags, str):
            yield from (t.strip() for t in tags.split(","))
        elif isinstance(tags, list):
            yield from (t for t in tags if isinstance(t, str))
        for value in node.values():
            yield from _tags_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from _tags_in(item)


def _load(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return None


def site_tags(playbooks_dir: Path | None = None, roles_dir: Path | None = None) -> set[str]:
    playbooks = Path(playbooks_dir or paths.playbooks_dir())
    roles = Path(roles_dir or paths.roles_dir())
    found = set(ANSIBLE_SPECIAL_TAGS) | set(_tags_in(_load(playbooks / SITE_PLAYBOOK)))
    for tasks in sorted(roles.glob("*/tasks/*.yml")):
        found |= set(_tags_in(_load(tasks)))
    return {t for t in found if "{{" not in t}
