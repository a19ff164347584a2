"""Arguments checked before any side effect: a `--check` or `--tags` name nothing answers to is a usage
error (exit 2) before a host is provisioned, drained or re-imaged."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from clusterforge.cli._common import usage_error

__all__ = ["check_concerns", "check_file", "check_stack", "check_tags", "complete_concerns", "inventory_groups"]


def check_concerns(names: Iterable[str]) -> None:
    from clusterforge.verify.hosts import CONCERNS

    unknown = [name for name in names if name not in CONCERNS]
    if unknown:
        usage_error(f"unknown --check {', '.join(unknown)}; choose from {', '.join(CONCERNS)}")


def complete_concerns(incomplete: str = "") -> list[str]:
    """The host check names starting with ``incomplete``: shell completion for every ``--check`` of host checks."""
    from clusterforge.verify.hosts import CONCERNS

    return [name for name in CONCERNS if name.startswith(incomplete)]


def check_tags(tags: Iterable[str]) -> None:
    from clusterforge.provision.tags import site_tags

    wanted = [tag.strip() for value in tags for tag in value.split(",")]
    known = site_tags()
    unknown = [tag for tag in wanted if tag not in known]
    if unknown:
        usage_error(f"unknown --tags {', '.join(unknown)}; the site playbook's tags: {', '.join(sorted(known))}")


def inventory_groups(inventory_text: str) -> set[str]:
    """Every group name of a rendered inventory.yml (all, servers, su01, su01_r01, role_server, ...)."""
    import yaml

    groups: set[str] = set()

    def walk(name: str, node: object) -> None:
        groups.add(name)
        children = node.get("children") if isinstance(node, dict) else None
        for child, sub in (children or {}).items():
            walk(child, sub)

    try:
        document = yaml.safe_load(inventory_text) or {}
    except yaml.YAMLError:  # a tagged value (!unsafe) never names a group
        document = {}
    for name, node in document.items():
        walk(name, node)
    return groups


# Pulumi's stack-name grammar (letters, digits, '-', '_', '.'), and never a path step: the name is a directory
# of the state dir (stacks/<stack>), so '..' or '.x' would leave it or hide in it.
STACK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def check_stack(name: str, derived_from: str = "") -> str:
    if not STACK.fullmatch(name) or ".." in name:
        where = f" (the stem of {derived_from}; pass --stack)" if derived_from else ""
        usage_error(f"stack name {name[:80]!r}{where} is not allowed: 1-100 of letters, digits, '-', '_' and '.',"
                    " starting with a letter or digit")
    return name


def check_file(option: str, path: Path | None) -> Path | None:
    """A file option (`--kubeconfig`, `--ssh-config`) that names no regular file is a usage error, said before
    any host is reached; None passes (the option was not given)."""
    if path is not None and not path.is_file():
        usage_error(f"{option} {str(path)[:300]}: {'not a file' if path.exists() else 'no such file'}")
    return path
