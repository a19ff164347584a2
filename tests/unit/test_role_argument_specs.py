"""Every role option that has a default in defaults/main.yml documents the same default in its argument
spec (ansible-doc shows only the spec's; scripts/sync-argument-specs.py writes them)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ROLES = sorted(p for p in (ROOT / "roles").iterdir() if (p / "meta" / "argument_specs.yml").is_file())


@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_spec_defaults_match_the_role_defaults(role: Path) -> None:
    defaults = yaml.safe_load((role / "defaults" / "main.yml").read_text()) or {}
    spec = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())
    options = {name: option for entry in spec["argument_specs"].values()
               for name, option in (entry.get("options") or {}).items()}
    assert options, role.name
    wrong = {name: (option.get("default"), defaults[name]) for name, option in options.items()
             if name in defaults and not option.get("required") and option.get("default", ...) != defaults[name]}
    assert not wrong, f"{role.name}: spec default != defaults/main.yml (run scripts/sync-argument-specs.py): {wrong}"
    undocumented = sorted(set(defaults) - set(options))
    assert not undocumented, f"{role.name}: defaults without an argument spec entry: {undocumented}"
