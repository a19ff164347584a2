"""A cluster split into stacks (state: {split: su}): clusterforge.plan.stacks on real plans, the declared field's
hostile values at FILE:LINE:COL, and `--part` refused with the parts named before any engine starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, assert_refused, line_of, run_cli, workdir

from clusterforge.loading import load_and_plan
from clusterforge.plan.stacks import SITE, WHOLE, part_stack, split_stacks

ONE_SU = "scalable_units:\n  - id: 1\n    server_model: hgx-h200-2gpu\n    nodes: 4\n    racks: 2\n"
SECOND_SU = "  - id: 2\n    server_model: hgx-h200-2gpu\n    nodes: 4\n    racks: 2\n"
SPLIT = "state: {split: su}\n"


def declaration(directory: Path, *, split: str | None = SPLIT, sus: int = 2, name: str = "split.yaml") -> Path:
    """inventory/lab.yaml with ``sus`` scalable units (1 or 2) and ``split`` before its `site:`."""
    assert ONE_SU in LAB_TEXT
    text = LAB_TEXT.replace(ONE_SU, ONE_SU + (SECOND_SU if sus == 2 else ""), 1)
    if split is not None:
        text = text.replace("\nsite:\n", f"\n{split}site:\n", 1)
    path = workdir(directory) / name
    path.write_text(text)
    return path


def test_an_unsplit_cluster_is_one_stack_of_every_rack(tmp_path: Path) -> None:
    _, plan, _ = load_and_plan(declaration(tmp_path, split=None))
    split = split_stacks(plan)
    assert split.mode == "none" and split.names() == (WHOLE,)
    assert split.parts[0].racks == tuple(r.name for r in plan.racks)
    assert part_stack("lab", WHOLE) == "lab"


def test_split_by_su_gives_a_site_stack_one_per_su_and_services(tmp_path: Path) -> None:
    _, plan, _ = load_and_plan(declaration(tmp_path))
    split = split_stacks(plan)
    assert split.names() == ("site", "su01", "su02", "services")
    site, su1, su2, services = split.parts
    # every rack in exactly one part; the site's racks are those of no SU
    racks = [r for p in split.parts for r in p.racks]
    assert sorted(racks) == sorted(r.name for r in plan.racks) and len(racks) == len(set(racks))
    assert site.racks == tuple(r.name for r in plan.racks if r.su is None)
    assert all(plan.device(h).rack in su1.racks for h in su1.hosts) and len(su1.hosts) == 4
    assert not set(su1.hosts) & set(su2.hosts)
    assert [d.name for d in plan.devices if d.kind == "storage"] == list(site.hosts)
    assert su1.reads == su2.reads == (SITE,)
    assert services.reads == (SITE, "su01", "su02")
    # the SUs read nothing of each other: one wave, applied side by side
    assert [[p.name for p in wave] for wave in split.waves()] == [["site"], ["su01", "su02"], ["services"]]
    assert part_stack("lab", "su02") == "lab-su02"


def test_a_new_su_is_a_new_stack_and_leaves_the_others_named_as_they_were(tmp_path: Path) -> None:
    _, one, _ = load_and_plan(declaration(tmp_path, sus=1, name="one.yaml"))
    _, two, _ = load_and_plan(declaration(tmp_path, sus=2, name="two.yaml"))
    before, after = split_stacks(one), split_stacks(two)
    assert set(after.names()) - set(before.names()) == {"su02"}
    assert after.part("su01") == before.part("su01")
    # a mode given overrides the declared one; an unknown mode is refused
    assert split_stacks(two, "none").names() == (WHOLE,)
    with pytest.raises(ValueError, match="expected none or su"):
        split_stacks(two, "rack")


@pytest.mark.parametrize(("value", "field", "message"), [
    ("state: {split: rack}\n", "state.split", "Input should be 'none' or 'su'"),
    ("state: {split: [su]}\n", "state.split", "Input should be 'none' or 'su'"),
    ("state: {split: su, by: rack}\n", "state.by", "unknown field"),
    ("state: su\n", "state", ""),
])
def test_a_bad_state_split_is_refused_at_its_field(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str,
                                                   field: str, message: str) -> None:
    path = declaration(tmp_path, split=value)
    assert_refused(run_cli(capsys, "validate", str(path)), path, line_of(path.read_text(), value.strip()), field,
                   message)


def test_part_is_refused_with_the_parts_named_before_the_engine(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    state = ["--state-dir", str(tmp_path / "state"), "--target", "files", "--no-provision", "--no-verify"]
    split = declaration(tmp_path)
    missing = run_cli(capsys, "preview", str(split), *state)
    assert missing.code == 2
    assert f"{split}:{line_of(split.read_text(), SPLIT.strip())}:" in missing.err
    assert "give --part, one of site, su01, su02, services" in missing.err
    assert "apply order: site; su01 su02 (side by side); services" in missing.err
    unknown = run_cli(capsys, "up", str(split), "--part", "su07", "--yes", *state)
    assert unknown.code == 2 and "--part 'su07': not a part of" in unknown.err
    whole = declaration(tmp_path, split=None, name="whole.yaml")
    unsplit = run_cli(capsys, "preview", str(whole), "--part", "su01", *state)
    assert unsplit.code == 2 and "state.split: none: the cluster is one stack" in unsplit.err
    for bad in ("--upload-pack=x", "a b", "a\nb", "x" * 300):
        refused = run_cli(capsys, "up", str(whole), "--revision", bad, "--yes", *state)
        assert refused.code == 2 and "--revision" in refused.err and "not a revision" in refused.err
    assert not (tmp_path / "state" / "stacks").exists()  # refused before any stack was opened
