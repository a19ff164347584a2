"""A hostile corpus, generated from inventory/lab.yaml: every case is refused with FILE:LINE:COL: field: message,
exit 1, never a traceback, never an output written (issue 13's classes, one test each)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, ROOT, assert_refused, line_of, run_cli, workdir

from clusterforge.model.yamlsafe import MAX_BYTES, MAX_DEPTH

VRF_INJECTION = "mgmt\\nusername evil privilege 15 nopassword"
TEMPLATE = "{{ lookup('pipe', 'id') }}"

# (id, text replaced in lab.yaml, replacement, field, message fragment, line: None = the replaced text's line)
EDITS = [
    ("nul", "owner: platform-team", "owner: platform\x00team", "", "control character U+0000", None),
    ("escape-char", "owner: platform-team", "owner: plat\x1b[31mform", "", "control character U+001B", None),
    ("bidi-override", "owner: platform-team", "owner: platform\u202eteam", "", "control character U+202E", None),
    ("bidi-escaped", "catalog: {}", 'catalog:\n  cables:\n    dac: {description: "\\u202eevil", price: 1,'
     " max_length_m: 3}", "catalog.cables.dac.description", "control characters", 2),
    ("c1-control", "owner: platform-team", "owner: plat\x85form", "", "control character U+0085", None),
    ("vrf-newline", "    vrf: mgmt\n  oob", f'    vrf: "{VRF_INJECTION}"\n  oob', "networks.management.vrf",
     "not a valid VRF name; allowed:", None),
    ("name-newline", "name: lab\nsite:", 'name: "lab\\nevil: 1"\nsite:', "name", "not a valid name; allowed:", None),
    ("team-newline", "{name: research, gpus: 6}", '{name: "research\\n- evil", gpus: 6}', "teams.0.name",
     "not a valid name", None),
    ("version-template", 'nvidia_driver_version: "535.261.03"', f'nvidia_driver_version: "{TEMPLATE}"',
     "software.nvidia_driver_version", "not a valid driver version; allowed:", None),
    ("cuda-template", 'cuda_version: "11.8"', 'cuda_version: "{% raw %}"', "software.cuda_version",
     "not a valid version", None),
    ("k8s-word", 'cuda_version: "11.8"', 'cuda_version: "11.8"\n  kubernetes_version: latest',
     "software.kubernetes_version", "not a valid version; allowed: 2-4 dot-separated numbers", 1),
    ("driver-branch", 'nvidia_driver_version: "535.261.03"', 'nvidia_driver_version: "550.54.15"',
     "software.nvidia_driver_version", "is not of branch 535", None),
    ("open-on-470", 'nvidia_driver_branch: "535"\n  nvidia_driver_version: "535.261.03"\n'
     "  nvidia_driver_source: debian-nonfree\n  nvidia_kernel_module: skip",
     'nvidia_driver_branch: "470"\n  nvidia_driver_version: "470.256.02"\n'
     "  nvidia_driver_source: debian-nonfree\n  nvidia_kernel_module: open",
     "software.nvidia_kernel_module", "open kernel modules ship from R515", 3),
    ("cuda-13-on-535", 'cuda_version: "11.8"', 'cuda_version: "13.0"', "software.cuda_version",
     "CUDA 13.0 needs driver branch 580", None),
    ("os-shell", "os: debian-12", "os: debian-12; reboot", "software.os", "not a valid OS release", None),
    ("mount-dotdot", "mount: /mnt/hot", "mount: /mnt/../etc", "storage.tiers.0.mount", "not a valid mount path",
     None),
    ("mount-newline", "mount: /mnt/hot", 'mount: "/mnt/hot\\n/dev/sda / ext4"', "storage.tiers.0.mount",
     "not a valid mount path", None),
    ("export-space", "export: /export/hot", "export: /export/hot *(rw)", "storage.tiers.0.export",
     "not a valid export", None),
    ("owner-formula", "owner: platform-team", "owner: \"=HYPERLINK('http://x')\"", "site.owner",
     "not a valid owner", None),
    ("cidr-garbage", "supernet: 198.18.0.0/22", "supernet: banana", "networks.data.supernet", "not a CIDR prefix",
     None),
    ("cidr-octet", "supernet: 198.18.0.0/22", "supernet: 300.18.0.0/22", "networks.data.supernet",
     "not an IPv4 address", None),
    ("cidr-ipv6", "loopbacks: 198.18.5.0/26", "loopbacks: fd00::/64", "networks.loopbacks", "IPv6 is not planned",
     None),
    ("cidr-host-bits", "fabric_links: 198.18.4.0/24", "fabric_links: 198.18.4.1/24", "networks.fabric_links",
     "host bits set; did you mean 198.18.4.0/24", None),
    ("cidr-multicast", "supernet: 198.18.0.0/22", "supernet: 224.1.0.0/22", "networks.data.supernet", "multicast",
     None),
    ("cidr-loopback", "supernet: 198.18.12.0/24", "supernet: 127.1.0.0/24", "networks.storage.supernet", "loopback",
     None),
    ("cidr-too-short", "supernet: 198.18.8.0/24", "supernet: 0.0.0.0/0", "networks.management.supernet",
     "is not a usable pool", None),
    ("inf", "capacity_tb: 1,", "capacity_tb: .inf,", "storage.tiers.0.capacity_tb", "finite number", None),
    ("nan", "rack_power_limit_w: 20000", "rack_power_limit_w: .nan", "site.facility.rack_power_limit_w",
     "finite number", None),
    ("absurd-int", "{name: research, gpus: 6}", "{name: research, gpus: 1000000000000000000000000000}",
     "teams.0.gpus", "less than or equal", None),
    ("absurd-float", "staff_per_year: 20000", "staff_per_year: 1e300", "site.costs.staff_per_year",
     "less than or equal", None),
    ("duplicate-team", "{name: inference, gpus: 2}", "{name: research, gpus: 2}", "teams.1.name",
     "duplicate team name 'research'", None),
    ("duplicate-mount", "mount: /mnt/cold", "mount: /mnt/hot", "storage.tiers.1.mount",
     "duplicate storage tier mount", None),
    ("quota", "{name: research, gpus: 6}", "{name: research, gpus: 9}", "teams.0.gpus", "exceed the cluster's 8",
     None),
    ("quota-sum", "{name: inference, gpus: 2}", "{name: inference, gpus: 3}", "teams.1.gpus",
     "team quotas reach 9 GPUs", None),
    ("feed-phases", "phases: 3, max_utilisation", "phases: 1, max_utilisation", "site.facility.feed.phases",
     "cannot supply PDU model", None),
    ("feed-voltage", "voltage_v: 415", "voltage_v: 230", "site.facility.feed.voltage_v", "does not match PDU model",
     None),
    ("feed-rating", "amperage_a: 32", "amperage_a: 63", "site.facility.feed.amperage_a",
     "63 A circuit exceeds PDU model 'raritan-px3-415v-32a', rated 32 A", None),
    ("ib-on-sonic", "    transport: roce\n    nos: sonic", "    transport: infiniband\n    nos: sonic",
     "networks.data.nos", "cannot carry transport 'infiniband'", 1),
    ("asn-clash", "  fabric_links: 198.18.4.0/24", "  asn: {leaf_base: 100, spine_base: 100, core: 100}\n"
     "  fabric_links: 198.18.4.0/24", "networks.asn", "share ASN 100", None),
    ("asn-overflow", "  fabric_links: 198.18.4.0/24", "  asn: {leaf_base: 4294967000}\n  fabric_links: 198.18.4.0/24",
     "networks.asn.leaf_base", "above 4294967294", None),
    ("ecn-order", "  fabric_links: 198.18.4.0/24", "  qos: {ecn_min_bytes: 2000000, ecn_max_bytes: 1000}\n"
     "  fabric_links: 198.18.4.0/24", "networks.qos.ecn_max_bytes", "below ECN min", None),
    ("cnp-dscp", "  fabric_links: 198.18.4.0/24", "  qos: {cnp_dscp: 26}\n  fabric_links: 198.18.4.0/24",
     "networks.qos.cnp_dscp", "share DSCP 26", None),
    ("liquid-unused", "liquid: false}", "liquid: false, liquid_limit_w: 50000}",
     "site.facility.cooling.liquid_limit_w", "never applied", None),
    ("merge-key", "envelope:\n", "envelope:\n  <<: {max_sus: 2}\n", "", "merge key '<<' is not allowed", 1),
    ("python-tag", "name: lab\nsite:", "name: !!python/object/apply:os.system ['id']\nsite:", "",
     "explicit YAML tag", None),
    ("custom-tag", "owner: platform-team", "owner: !vault platform-team", "", "explicit YAML tag", None),
    ("anchor-alias", "  costs: {", "  costs: &c {", "", "anchor &c is not allowed", None),
    ("catalog-escape", "catalog_files: [catalog/servers.yaml", "catalog_files: [../../../../etc/passwd",
     "catalog_files.0", "leaves the inventory's directory", None),
    ("catalog-absolute", "catalog_files: [catalog/servers.yaml", "catalog_files: [/etc/passwd",
     "catalog_files.0", "relative path", None),
    ("hostile-key", "envelope:\n", '"evil\\nkey": 1\nenvelope:\n', "'evil\\nkey'", "unknown field", None),
    ("complex-key", "envelope:\n", "? [a, b]\n: 1\nenvelope:\n", "", "mapping key must be a plain scalar", None),
]
assert all(case[1] in LAB_TEXT for case in EDITS), [case[0] for case in EDITS if case[1] not in LAB_TEXT]


@pytest.mark.parametrize(("old", "new", "field", "message", "line"), [case[1:] for case in EDITS],
                         ids=[case[0] for case in EDITS])
def test_hostile_edit_is_refused_where_it_is(tmp_path: Path, capsys, old, new, field, message, line):
    path = workdir(tmp_path) / "hostile.yaml"
    path.write_text(LAB_TEXT.replace(old, new, 1))
    expected = line_of(LAB_TEXT, old) + (line or 0)
    assert_refused(run_cli(capsys, "validate", str(path)), path, expected, field, message)


INJECTIONS = ["vrf-newline", "name-newline", "team-newline", "version-template", "mount-newline", "owner-formula"]


@pytest.mark.parametrize("case", [case for case in EDITS if case[0] in INJECTIONS], ids=lambda case: case[0])
def test_injection_never_reaches_an_output(tmp_path: Path, capsys, case):
    """render refuses before writing: no EOS/Cumulus config, host_vars or CSV can carry the injected text."""
    _, old, new, field, message, line = case
    path = workdir(tmp_path) / "hostile.yaml"
    path.write_text(LAB_TEXT.replace(old, new, 1))
    out = tmp_path / "out"
    outcome = run_cli(capsys, "render", str(path), "--out", str(out))
    assert_refused(outcome, path, line_of(LAB_TEXT, old) + (line or 0), field, message)
    assert not out.exists() or not any(out.rglob("*"))


def test_corpus_covers_the_issue_classes():
    ids = {case[0] for case in EDITS}
    assert len(ids) >= 35
    assert {"nul", "vrf-newline", "version-template", "merge-key", "python-tag", "cidr-ipv6", "cidr-host-bits",
            "inf", "duplicate-team", "quota", "feed-phases", "feed-rating", "ib-on-sonic", "catalog-escape"} <= ids


def test_binary_bytes(tmp_path: Path, capsys):
    path = workdir(tmp_path) / "binary.yaml"
    text = LAB_TEXT.replace("owner: platform-team", "owner: platform\udcff")
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert_refused(run_cli(capsys, "validate", str(path)), path, line_of(LAB_TEXT, "owner: platform-team"), "",
                   "not UTF-8 text: byte 0xff")


def test_deep_nesting_is_refused_before_recursion(tmp_path: Path, capsys):
    path = tmp_path / "deep.yaml"
    path.write_text("x: " + "[" * 50_000 + "]" * 50_000 + "\n")
    assert_refused(run_cli(capsys, "validate", str(path)), path, 1, "", f"nested deeper than {MAX_DEPTH} levels")


def test_alias_bomb_is_refused_at_once(tmp_path: Path, capsys):
    rows = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    rows += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(8)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(rows) + "\n")
    started = time.monotonic()
    assert_refused(run_cli(capsys, "validate", str(path)), path, 1, "", "anchor &a is not allowed")
    assert time.monotonic() - started < 5


def test_huge_file_is_refused_unread(tmp_path: Path, capsys):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(10 * MAX_BYTES)  # sparse: 10 MiB by size
    assert_refused(run_cli(capsys, "validate", str(path)), path, 1, "", f"the limit is {MAX_BYTES} bytes")


def test_symlink_loop(tmp_path: Path, capsys):
    (tmp_path / "a.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    assert_refused(run_cli(capsys, "validate", str(tmp_path / "a.yaml")), "a.yaml", 1, "", "cannot read file")


def test_catalog_symlink_out_of_the_directory(tmp_path: Path, capsys):
    directory = tmp_path / "inv"
    directory.mkdir()
    (directory / "catalog").symlink_to(ROOT / "inventory" / "catalog")
    path = directory / "lab.yaml"
    path.write_text(LAB_TEXT)
    assert_refused(run_cli(capsys, "validate", str(path)), path, line_of(LAB_TEXT, "catalog_files"),
                   "catalog_files.0", "leaves the inventory's directory")


@pytest.mark.parametrize("kind", ["directory", "char-device"])
def test_not_a_regular_file(tmp_path: Path, capsys, kind):
    path = tmp_path if kind == "directory" else Path("/dev/zero")
    assert_refused(run_cli(capsys, "validate", str(path)), path, 1, "", "only regular files are read")


def test_named_pipe_never_blocks(tmp_path: Path):
    """A FIFO with no writer: a blocking open would hang for ever; refused at once, in a real process."""
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "clusterforge.cli", "validate", str(fifo)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"{fifo}:1:1: a named pipe; only regular files are read")
    assert time.monotonic() - started < 30


def test_problem_lines_cannot_be_forged(tmp_path: Path, capsys):
    """A value with a newline is echoed escaped: the error output stays one line per problem."""
    path = workdir(tmp_path) / "forge.yaml"
    path.write_text(LAB_TEXT.replace("    vrf: mgmt\n  oob", f'    vrf: "x\\n{path}:1:1: name: ok"\n  oob', 1))
    outcome = run_cli(capsys, "validate", str(path))
    assert outcome.code == 1
    assert len(outcome.problems) == 1 and "\\n" in outcome.err


def test_inline_catalog_entry_is_located_inline_not_in_the_file(tmp_path: Path, capsys):
    """An inline entry overrides the catalog file's entry of that name; its error names the inline line."""
    entry = ("catalog:\n  pdus:\n    raritan-px3-415v-32a: {vendor: x, outlets: 0, phases: 3, rating_a: 32,"
             " voltage_v: 415, weight_kg: 9, price: 1}")
    path = workdir(tmp_path) / "inline.yaml"
    path.write_text(LAB_TEXT.replace("catalog: {}", entry))
    assert_refused(run_cli(capsys, "validate", str(path)), path, line_of(LAB_TEXT, "catalog: {}") + 2,
                   "catalog.pdus.raritan-px3-415v-32a.outlets", "greater than or equal to 1")


def test_catalog_file_section_must_be_a_mapping(tmp_path: Path, capsys):
    directory = workdir(tmp_path)
    (directory / "catalog" / "odd.yaml").write_text("pdus: [1, 2]\n")
    path = directory / "odd.yaml"
    path.write_text(LAB_TEXT.replace("catalog/cables.yaml]", "catalog/cables.yaml, catalog/odd.yaml]"))
    assert_refused(run_cli(capsys, "validate", str(path)), directory / "catalog" / "odd.yaml", 1, "catalog.pdus",
                   "a catalog section maps model names to models")


@pytest.mark.parametrize(("names", "field", "message"), [
    ("[ens1, ens1]", "catalog.servers.hgx-h200-2gpu.nics.data.names.1", "duplicate NIC name 'ens1'"),
    ("[ens1]", "catalog.servers.hgx-h200-2gpu.nics.data.names", "1 names for 2 NICs"),
    ("[ens1, \"ens2; reboot\"]", "catalog.servers.hgx-h200-2gpu.nics.data.names.1", "not a valid NIC name"),
    ("[ens1, averyveryverylongname]", "catalog.servers.hgx-h200-2gpu.nics.data.names.1", "1-15 characters"),
])
def test_nic_names_in_a_catalog_file(tmp_path: Path, capsys, names, field, message):
    directory = workdir(tmp_path)
    servers = directory / "catalog" / "servers.yaml"
    text = servers.read_text()
    old = "    nics:\n      data: {count: 2, speed_gbps: 400}\n      storage: {count: 2, speed_gbps: 100}"
    servers.write_text(text.replace(old, old.replace("speed_gbps: 400}", f"speed_gbps: 400, names: {names}}}"), 1))
    path = directory / "lab.yaml"
    path.write_text(LAB_TEXT)
    assert_refused(run_cli(capsys, "validate", str(path)), servers, line_of(text, old) + 1, field, message)


@pytest.mark.parametrize("line", [100, 1234])
def test_line_numbers_print_verbatim(tmp_path: Path, capsys, line):
    """Rich would print ':100:' as an emoji; problem lines go out as plain text."""
    path = tmp_path / "long.yaml"
    path.write_text("#\n" * (line - 1) + "x: 1\n")
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, path, line, "x", "unknown field")
    assert f"{path}:{line}:1: x: unknown field" in outcome.err


def test_one_model_in_two_catalog_files(tmp_path: Path, capsys):
    """Two catalog files naming the same model: refused at the second (inline entries still override files)."""
    directory = workdir(tmp_path)
    (directory / "catalog" / "more.yaml").write_text("pdus:\n  raritan-px3-415v-32a: {vendor: x, outlets: 36,"
                                                     " phases: 3, rating_a: 32, voltage_v: 415, weight_kg: 9,"
                                                     " price: 1}\n")
    path = directory / "two.yaml"
    path.write_text(LAB_TEXT.replace("catalog/cables.yaml]", "catalog/cables.yaml, catalog/more.yaml]"))
    assert_refused(run_cli(capsys, "validate", str(path)), directory / "catalog" / "more.yaml", 2,
                   "catalog.pdus.raritan-px3-415v-32a", "duplicate catalog entry (also in catalog/pdus.yaml)")


@pytest.mark.parametrize("kind", ["fifo", "loop", "directory"])
def test_hostile_catalog_file(tmp_path: Path, capsys, kind):
    """A catalog file that is a named pipe, a symlink loop or a directory: refused at once, located."""
    directory = workdir(tmp_path)
    odd = directory / "catalog" / "odd.yaml"
    if kind == "fifo":
        os.mkfifo(odd)
    elif kind == "loop":
        odd.symlink_to(odd)
    else:
        odd.mkdir()
    path = directory / "odd-catalog.yaml"
    path.write_text(LAB_TEXT.replace("catalog/cables.yaml]", "catalog/cables.yaml, catalog/odd.yaml]"))
    started = time.monotonic()
    outcome = run_cli(capsys, "validate", str(path))
    assert time.monotonic() - started < 10
    if kind == "loop":
        assert_refused(outcome, path, line_of(LAB_TEXT, "catalog_files"), "catalog_files.4", "not readable")
    else:  # at the entry that names it (issue 26: a directory was reported at the directory itself)
        assert_refused(outcome, path, line_of(LAB_TEXT, "catalog_files"), "catalog_files.4", "not a regular file")
