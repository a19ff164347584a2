"""An integer past Python's int-string limit (4,300 digits) in any integer field, of the inventory or of a catalog
file, read by either YAML reader (libyaml's fast path or ruamel's reference): FILE:LINE:COL where it is written,
exit 1, never a traceback. The fast path declines such a text, so the reference words the refusal."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, assert_refused, line_of, run_cli, workdir

from clusterforge.model.yamlfast import load_plain
from clusterforge.model.yamlsafe import MAX_INTEGER_DIGITS, oversized_integer

HUGE = "9" * 5000
# A tab in a comment sends a text to the reference reader (yamlfast declines every tab)
READERS = {"fast": "", "reference": "# \t\n"}
# (id, the text replaced, its replacement): plain integers YAML 1.2 reads, in inventory fields
INVENTORY = [
    ("nodes", "nodes: 4", f"nodes: {HUGE}"),
    ("nodes-negative", "nodes: 4", f"nodes: -{HUGE}"),
    ("nodes-underscores", "nodes: 4", f"nodes: 1_{HUGE}"),
    ("team-gpus", "{name: inference, gpus: 2}", f"{{name: inference, gpus: {HUGE}}}"),
    ("a-list-item", "time_servers: [198.18.8.1]", f"time_servers: [{HUGE}]"),
    ("a-key", "owner: platform-team", f"owner: platform-team\n  ? {HUGE}\n  : 1"),  # explicit (a plain key is short)
]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(("old", "new"), [case[1:] for case in INVENTORY], ids=[case[0] for case in INVENTORY])
def test_a_huge_integer_in_the_inventory_is_refused_where_it_is_written(tmp_path: Path, capsys, reader, old, new):
    text = READERS[reader] + LAB_TEXT.replace(old, new, 1)
    path = workdir(tmp_path) / "hostile.yaml"
    path.write_text(text)
    if reader == "fast":
        assert load_plain(text, ()) is None  # declined: the reference reads it
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, path, line_of(text, HUGE), "", f"no field takes more than {MAX_INTEGER_DIGITS}")


@pytest.mark.parametrize("reader", READERS)
def test_a_huge_integer_in_a_catalog_file_is_refused_in_that_file(tmp_path: Path, capsys, reader):
    path = workdir(tmp_path) / "hostile.yaml"
    path.write_text(LAB_TEXT)
    servers = tmp_path / "catalog" / "servers.yaml"
    text = READERS[reader] + servers.read_text().replace("count: 6", f"count: {HUGE}", 1)
    servers.write_text(text)
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, servers, line_of(text, HUGE), "", "an integer of 5000 digits")


@pytest.mark.parametrize("plain", ["1" * MAX_INTEGER_DIGITS, "-" + "1" * MAX_INTEGER_DIGITS, "1e" + "9" * 40,
                                   "x" * 40, "12.5", "0x" + "f" * 30])
def test_numbers_within_the_limit_and_text_are_not_refused(plain: str):
    assert oversized_integer(plain) is None


@pytest.mark.parametrize("plain", ["1" * (MAX_INTEGER_DIGITS + 1), "+" + "1" * 40, "0x" + "f" * 40, "0o" + "7" * 40,
                                   "0b" + "1" * 40, "1_" * 40])
def test_every_integer_form_past_the_limit_is_refused(plain: str):
    assert oversized_integer(plain)
