"""Every command agrees with `validate` and locates what it refuses: a catalog vendor that would name a directory
outside the device-type export is refused by the grammar at its field, by validate and export alike; a fabric
problem caused by an inventory line (a slower leaf model for the servers' NICs) is reported at inventory lines,
not in a catalog file the change did not touch."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, assert_refused, line_of, run_cli, workdir

LAB_MODEL = "  hgx-h200-2gpu:\n"


@pytest.mark.parametrize("vendor", ["'..'", "'../../etc'", "a/b", "'.hidden'", '"x\\ny"', "'-x'"])
@pytest.mark.parametrize("command", [["validate"], ["export", "device-types"]], ids=["validate", "export"])
def test_a_vendor_that_is_no_directory_name_is_refused_at_its_field(tmp_path: Path, capsys, vendor: str,
                                                                    command: list[str]):
    path = workdir(tmp_path) / "lab.yaml"
    path.write_text(LAB_TEXT)
    servers = tmp_path / "catalog" / "servers.yaml"
    text = servers.read_text()
    at = text.index("vendor: generic", text.index(LAB_MODEL))
    servers.write_text(text[:at] + f"vendor: {vendor}" + text[at + len("vendor: generic"):])
    out = tmp_path / "out"
    args = [*command, str(path), *(["--out", str(out)] if command[0] == "export" else [])]
    outcome = run_cli(capsys, *args)
    assert_refused(outcome, servers, line_of(servers.read_text(), f"vendor: {vendor}"),
                   "catalog.servers.hgx-h200-2gpu.vendor", "not a valid vendor")
    assert not out.exists()


def test_the_exported_vendors_directories_stay_under_the_export(tmp_path: Path, capsys):
    """The guard: the example catalog's vendors export, each to one directory under device-types/."""
    path = workdir(tmp_path) / "lab.yaml"
    path.write_text(LAB_TEXT)
    out = tmp_path / "out"
    outcome = run_cli(capsys, "export", "device-types", str(path), "--out", str(out))
    assert outcome.code == 0, outcome.err[-2000:]
    files = [p.relative_to(out) for p in out.rglob("*.yaml")]
    assert files and all(len(f.parts) == 3 and f.parts[0] == "device-types" for f in files), files


def test_a_fabric_problem_from_an_inventory_line_is_reported_in_the_inventory(tmp_path: Path, capsys):
    """A 100G leaf model under 400G server NICs: the switch ends at networks.data.leaf_model, the server ends at the
    SU's server_model (naming the catalog NIC group), none in catalog/servers.yaml, which did not change."""
    path = workdir(tmp_path) / "slow-leaf.yaml"
    text = LAB_TEXT.replace("    transport: roce\n    nos: sonic\n    leaf_model: sn5600",
                            "    transport: roce\n    nos: cumulus\n    leaf_model: sn2700", 1)
    assert text != LAB_TEXT
    path.write_text(text)
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, path, line_of(text, "leaf_model: sn2700"), "networks.data.leaf_model",
                   "runs at 400 Gb/s, the link at 100 Gb/s")
    assert_refused(outcome, path, line_of(text, "server_model: hgx-h200-2gpu"), "scalable_units.0.server_model",
                   "rail0 runs at 400 Gb/s, the link at 100 Gb/s (server model hgx-h200-2gpu:"
                   " catalog.servers.hgx-h200-2gpu.nics.data.speed_gbps)")
    assert {Path(m["file"]).name for m in outcome.problems} == {path.name}
