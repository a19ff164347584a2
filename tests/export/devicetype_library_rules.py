"""The netbox-community devicetype-library's CI rules, derived (not copied) from its tests and lint config.

Sources, read at these commits: tests/definitions_test.py @ 034d1124e72c9fe016487c93e7f380f2fd86f886
(extension, trailing newline, schema, slug, file name, duplicate components, empty strings, power),
tests/device_types.py @ 09323249ac260903bb13e6074f16420ea75ff875 (how the slug and file name are checked)
and tests/yamllint.yaml @ 7b303a5aceafe4056098b069626bcd625e9f0a96 (the yamllint rules, run with --strict
by the library's pre-commit). The JSON schema half is schemas/netbox-devicetype.schema.json.
"""

from __future__ import annotations

import os

import yaml
from yamllint import linter
from yamllint.config import YamlLintConfig

__all__ = ["KNOWN_SLUGS", "YAMLLINT", "problems", "yamllint_problems"]

# yamllint rules of the library (tests/yamllint.yaml): the ones that are on, as configured there.
YAMLLINT = YamlLintConfig("""
rules:
  braces: enable
  brackets: enable
  colons: enable
  commas: enable
  document-start: {level: warning}
  empty-lines: enable
  hyphens: enable
  indentation: {spaces: 2, indent-sequences: true}
  key-duplicates: enable
  new-line-at-end-of-file: enable
  new-lines: enable
  trailing-spaces: enable
  truthy: enable
""")

# (slug, file) pairs the library already has for models in clusterforge's catalog
# (clusterforge/export/devicetype_library.py lists where each was read).
KNOWN_SLUGS = {
    ("nvidia-sn5600", "device-types/Nvidia/SN5600.yaml"), ("nvidia-qm9700", "device-types/Nvidia/QM9700.yaml"),
    ("mellanox-sn2201", "device-types/Nvidia/SN2201.yaml"), ("sn4700", "device-types/Mellanox/SN4700.yml"),
}
COMPONENTS = ("interfaces", "power-ports", "power-outlets", "console-ports", "console-server-ports", "front-ports",
              "rear-ports", "module-bays", "device-bays", "inventory-items")


def _slugified(text: str) -> str:
    """device_types.py's model slugify: casefold, then its fixed replacements, then a trailing '-' dropped."""
    out = text.casefold().replace(" ", "-").replace("sfp+", "sfpp").replace("poe+", "poep").replace("-+", "-plus")
    out = out.replace("+", "-plus-").replace("_", "-").replace("&", "-and-").replace("!", "").replace("/", "-")
    out = out.replace(",", "").replace("'", "").replace("*", "-")
    return out[:-1] if out.endswith("-") else out


def _manufacturer_slug(text: str) -> str:
    out = text.casefold().replace(" ", "-").replace("sfp+", "sfpp").replace("poe+", "poep").replace("-+", "-plus-")
    return out.replace("+", "-plus").replace("_", "-").replace("!", "").replace("/", "-").replace(",", "") \
        .replace("'", "").replace("*", "-").replace("&", "and")


def yamllint_problems(text: str) -> list[str]:
    """--strict: warnings fail too."""
    return [f"{p.line}:{p.column} {p.rule}: {p.desc}" for p in linter.run(text, YAMLLINT)]


def _empty_strings(value, where: str = "") -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _empty_strings(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _empty_strings(v, f"{where}[{i}]")]
    return [f"empty string at {where}"] if value == "" else []


def problems(path: str, text: str) -> list[str]:
    """Every rule of the library's CI (except the JSON schema) that ``path`` with ``text`` breaks."""
    found: list[str] = []
    if path.rsplit(".", 1)[-1] not in ("yaml", "yml"):
        found.append("extension is not .yaml/.yml")
    if not text.endswith("\n"):
        found.append("no trailing newline")
    found += [f"yamllint {p}" for p in yamllint_problems(text)]
    data = yaml.safe_load(text)
    slug, model = data.get("slug", ""), data.get("model", "")
    part = str(data.get("part_number", ""))
    slug_model, slug_part = _slugified(model), _slugified(part)
    known = [(s, f) for s, f in KNOWN_SLUGS if s == slug]
    if known:
        if path not in known[0][1]:
            found.append(f"slug {slug} is the library's for {known[0][1]}")
    else:
        if not slug.startswith(_manufacturer_slug(data.get("manufacturer", ""))):
            found.append(f"slug {slug} does not start with the manufacturer")
        if not (slug.endswith(slug_model) or (part and slug.endswith(slug_part))):
            found.append(f"slug {slug} does not end with the model {slug_model!r} or part number {slug_part!r}")
    filename = os.path.basename(path).rsplit(".", 1)[0].casefold()
    if filename not in (slug_model, slug_part, part.casefold()) or not filename:
        found.append(f"file name {filename!r} is neither the model {slug_model!r} nor the part number {part!r}")
    for kind in COMPONENTS:
        names = [c.get("name") for c in data.get(kind, [])]
        if len(names) != len(set(names)):
            found.append(f"duplicate {kind} names")
    found += _empty_strings(data)
    if not data.get("power-ports") and data.get("is_powered", True) and not data.get("module-bays"):
        found.append("no power source (power-ports)")
    return found
