"""Deterministic YAML text for rendered files (libyaml's C emitter: fast enough for 100k files).

``to_ansible_yaml`` is for files Ansible reads (inventory, host_vars): any string that could open a
Jinja2 expression (it contains ``{``) is written with Ansible's ``!unsafe`` tag, so Ansible never
templates it. The declaration's grammars already refuse ``{{``/``{%``/``{#``; this is the second wall.
``UnsafeTolerantLoader`` reads such files back (the tag's value as a plain string).
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["to_yaml", "to_ansible_yaml", "UnsafeTolerantLoader", "UNSAFE_TAG"]

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
UNSAFE_TAG = "!unsafe"


class _AnsibleDumper(_Dumper):  # type: ignore[misc, valid-type]
    pass


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    if "{" in value:
        return dumper.represent_scalar(UNSAFE_TAG, value, style="'")
    return dumper.represent_str(value)


_AnsibleDumper.add_representer(str, _represent_str)


class UnsafeTolerantLoader(_Loader):  # type: ignore[misc, valid-type]
    """A safe loader that reads Ansible's ``!unsafe`` scalars as the plain strings they carry."""


UnsafeTolerantLoader.add_constructor(UNSAFE_TAG, lambda loader, node: loader.construct_scalar(node))


def to_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=4096,
                     explicit_start=True)


def to_ansible_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_AnsibleDumper, sort_keys=False, default_flow_style=False, width=4096,
                     explicit_start=True)
