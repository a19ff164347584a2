"""Issue 26's field cases: each refused at its field (FILE:LINE:COL: field: message, what is allowed), exit 1, never
a traceback, in every command that reads a declaration. Before: AddrFormatError tracebacks for prefixes past /32,
and silent accepts (booleans as counts, RoCE on priority 0, a tier on /usr, a NIC named lo, CUDA 12.7)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, ROOT, assert_refused, line_of, run_cli, workdir

from clusterforge.model.host_checks import DRIVER_MAX_CUDA

# (id, text replaced in lab.yaml, replacement, field, message fragment, line offset from the replaced text)
FIELDS = [
    ("supernet-33", "supernet: 198.18.0.0/22", "supernet: 198.18.0.0/33", "networks.data.supernet",
     "/33 is not a usable pool", 0),
    ("loopbacks-99", "loopbacks: 198.18.5.0/26", "loopbacks: 198.18.5.0/99", "networks.loopbacks",
     "/99 is not a usable pool", 0),
    ("fabric-links-40", "fabric_links: 198.18.4.0/24", "fabric_links: 198.18.4.0/40", "networks.fabric_links",
     "/40 is not a usable pool", 0),
    ("max-sus-true", "max_sus: 2", "max_sus: true", "envelope.max_sus", "the boolean true is not a valid integer", 0),
    ("max-sus-yes-quoted", "max_sus: 2", 'max_sus: "2"', "envelope.max_sus", "a string is not a valid integer", 0),
    ("nodes-true", "nodes: 4", "nodes: true", "scalable_units.0.nodes", "the boolean true is not a valid integer", 0),
    ("pdus-per-side-true", "    pue: 1.4", "    pue: 1.4\n    pdus_per_side: true",
     "site.facility.pdus_per_side", "the boolean true is not a valid integer", 1),
    ("team-gpus-false", "{name: research, gpus: 6}", "{name: research, gpus: false}", "teams.0.gpus",
     "the boolean false is not a valid integer", 0),
    ("voltage-true", "voltage_v: 415", "voltage_v: true", "site.facility.feed.voltage_v",
     "the boolean true is not a valid number", 0),
    ("phases-true", "phases: 3", "phases: true", "site.facility.feed.phases", "is not a valid integer", 0),
    ("roce-priority-0", "  fabric_links: 198.18.4.0/24", "  qos: {roce_priority: 0}\n  fabric_links: 198.18.4.0/24",
     "networks.qos.roce_priority", "priority 0 is the default (best-effort) class", 0),
    ("cnp-priority-0", "  fabric_links: 198.18.4.0/24", "  qos: {cnp_priority: 0}\n  fabric_links: 198.18.4.0/24",
     "networks.qos.cnp_priority", "priority 0 is the default (best-effort) class", 0),
    ("roce-dscp-0", "  fabric_links: 198.18.4.0/24", "  qos: {roce_dscp: 0}\n  fabric_links: 198.18.4.0/24",
     "networks.qos.roce_dscp", "DSCP 0 is best effort", 0),
    ("cnp-priority-eq-roce", "  fabric_links: 198.18.4.0/24",
     "  qos: {cnp_priority: 3}\n  fabric_links: 198.18.4.0/24", "networks.qos.cnp_priority",
     "CNP and RoCE share priority 3", 0),
    ("mount-usr", "mount: /mnt/hot", "mount: /usr", "storage.tiers.0.mount", "system directory /usr", 0),
    ("mount-proc", "mount: /mnt/hot", "mount: /proc/hot", "storage.tiers.0.mount", "system directory /proc", 0),
    ("mount-etc", "mount: /mnt/cold", "mount: /etc", "storage.tiers.1.mount", "system directory /etc", 0),
    ("mount-mnt", "mount: /mnt/hot", "mount: /mnt", "storage.tiers.0.mount", "holds other mounts", 0),
    ("mount-nested", "mount: /mnt/cold", "mount: /mnt/hot/cold", "storage.tiers.1.mount",
     "inside tier 'hot''s mount /mnt/hot", 0),
    ("cuda-12.7", 'cuda_version: "11.8"', 'cuda_version: "12.7"', "software.cuda_version",
     "CUDA 12.7 is not a CUDA release; known:", 0),
    ("cuda-99", 'cuda_version: "11.8"', 'cuda_version: "99.1"', "software.cuda_version",
     "CUDA 99.1 is not a CUDA release", 0),
    ("cuda-past-branch", 'cuda_version: "11.8"', 'cuda_version: "12.4"', "software.cuda_version",
     "driver branch 535 runs CUDA up to 12.2", 0),
]
assert all(case[1] in LAB_TEXT for case in FIELDS), [case[0] for case in FIELDS if case[1] not in LAB_TEXT]


@pytest.mark.parametrize(("old", "new", "field", "message", "offset"), [case[1:] for case in FIELDS],
                         ids=[case[0] for case in FIELDS])
def test_field_is_refused_at_the_field(tmp_path: Path, capsys, old, new, field, message, offset):
    path = workdir(tmp_path) / "hostile.yaml"
    path.write_text(LAB_TEXT.replace(old, new, 1))
    assert_refused(run_cli(capsys, "validate", str(path)), path, line_of(LAB_TEXT, old) + offset, field, message)


@pytest.mark.parametrize("command", ["plan", "render", "report", "diff", "export-batfish"])
def test_prefix_past_32_never_a_traceback_in_any_command(tmp_path: Path, capsys, command):
    """netaddr's AddrFormatError escaped the model for /33 and up, through plan/render/report/diff too."""
    path = workdir(tmp_path) / "hostile.yaml"
    path.write_text(LAB_TEXT.replace("supernet: 198.18.0.0/22", "supernet: 198.18.0.0/64", 1))
    out = tmp_path / "out"
    argv = {"plan": ["plan", str(path)], "render": ["render", str(path), "--out", str(out)],
            "report": ["report", str(path), "--out", str(out)], "diff": ["diff", str(ROOT / "inventory/lab.yaml"),
                                                                        str(path)],
            "export-batfish": ["export", "batfish", str(path), "-o", str(out)]}[command]
    assert_refused(run_cli(capsys, *argv), path, line_of(LAB_TEXT, "supernet: 198.18.0.0/22"),
                   "networks.data.supernet", "/64 is not a usable pool")
    assert not out.exists()


def _catalog_with_server_nics(tmp_path: Path, names: str) -> Path:
    path = workdir(tmp_path) / "hostile.yaml"
    servers = tmp_path / "catalog" / "servers.yaml"
    text = servers.read_text()
    anchor = "data: {count: 2, speed_gbps: 400}"
    start = text.index("hgx-h200-2gpu:")
    at = text.index(anchor, start)
    servers.write_text(text[:at] + anchor.replace("}", f", names: {names}}}") + text[at + len(anchor):])
    path.write_text(LAB_TEXT)
    return servers


@pytest.mark.parametrize(("names", "index", "message"), [
    ("[lo, rail1]", 0, "'lo' is the kernel's own"),
    ("[ens1, bond0]", 1, "'bond0' is the name the plan gives the storage bond"),
    ("[stor0, ens2]", 0, "'stor0' is the name the plan gives the storage NIC 0 (unnamed group)"),
    ("[all, ens2]", 0, "'all' is the kernel's own"),
])
def test_nic_names_the_plan_or_kernel_keep(tmp_path: Path, capsys, names, index, message):
    servers = _catalog_with_server_nics(tmp_path, names)
    outcome = run_cli(capsys, "validate", str(tmp_path / "hostile.yaml"))
    line = line_of(servers.read_text(), f"names: {names}")
    assert_refused(outcome, servers, line, f"catalog.servers.hgx-h200-2gpu.nics.data.names.{index}", message)


def test_the_cuda_table_is_the_roles(tmp_path: Path):
    """The model refuses what roles/cuda_toolkit would refuse on the host: one table, checked equal here."""
    import yaml

    defaults = yaml.safe_load((ROOT / "roles/cuda_toolkit/defaults/main.yml").read_text())
    assert defaults["cuda_toolkit_driver_max_cuda"] == DRIVER_MAX_CUDA


def test_catalog_file_count_is_checked_before_any_is_read(tmp_path: Path, capsys):
    """5,000 catalog_files entries took past 30 s (each read before the 32-file limit applied)."""
    path = workdir(tmp_path) / "many.yaml"
    entries = ", ".join(["catalog/servers.yaml"] * 5000)
    path.write_text(LAB_TEXT.replace("catalog_files: [catalog/servers.yaml, catalog/switches.yaml, catalog/pdus.yaml,"
                                     " catalog/cables.yaml]", f"catalog_files: [{entries}]"))
    started = time.monotonic()
    outcome = run_cli(capsys, "validate", str(path))
    assert time.monotonic() - started < 5
    assert_refused(outcome, path, line_of(LAB_TEXT, "catalog_files"), "catalog_files.32",
                   "5000 catalog files; at most 32 are read")
    assert len(outcome.problems) == 1


def test_catalog_bytes_are_bounded_in_all(tmp_path: Path, capsys):
    path = workdir(tmp_path) / "big.yaml"
    for i in range(6):
        (tmp_path / f"pad{i}.yaml").write_text("# " + "x" * (250 * 1024) + "\n{}\n")
    files = ", ".join(f"pad{i}.yaml" for i in range(6))
    path.write_text(LAB_TEXT.replace("catalog_files: [", f"catalog_files: [{files}, "))
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, path, line_of(LAB_TEXT, "catalog_files"), "catalog_files.4",
                   "at most 1048576 in all")


def test_a_directory_in_catalog_files_is_located_at_its_entry(tmp_path: Path, capsys):
    path = workdir(tmp_path) / "dir.yaml"
    path.write_text(LAB_TEXT.replace("catalog_files: [catalog/servers.yaml", "catalog_files: [catalog"))
    assert_refused(run_cli(capsys, "validate", str(path)), path, line_of(LAB_TEXT, "catalog_files"),
                   "catalog_files.0", "not a regular file")


@pytest.mark.parametrize("key", ["null", "~", "3", "true"])
def test_a_key_that_is_not_text_is_located(tmp_path: Path, capsys, key):
    path = workdir(tmp_path) / "key.yaml"
    path.write_text(LAB_TEXT.replace("envelope:\n", f"{key}:\n  x: 1\nenvelope:\n", 1))
    assert_refused(run_cli(capsys, "validate", str(path)), path, line_of(LAB_TEXT, "envelope:\n"), "",
                   "a key must be a field name (text)")


def test_link_speed_is_located_at_the_switch_model(tmp_path: Path, capsys):
    path = workdir(tmp_path) / "links.yaml"
    switches = tmp_path / "catalog" / "switches.yaml"
    text = switches.read_text()
    at = text.index("  sn5600:")
    switches.write_text(text[:at] + text[at:].replace("speed_gbps: 800\n", "speed_gbps: 100\n", 1))
    path.write_text(LAB_TEXT)
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, path, line_of(LAB_TEXT, "leaf_model: sn5600"), "networks.data.leaf_model",
                   "su01-leaf-rail0:Ethernet0 runs at 400 Gb/s, the link at 100 Gb/s")
    assert not [m for m in outcome.problems if m["path"] == "networks"]


def test_a_sonic_port_speed_is_located_at_the_switch_model(tmp_path: Path, capsys):
    """A link speed the HWSKU's breakout mode does not allow: at the plane's model field that put the switch
    there (it was reported at networks.data), the message naming the switch, its port and what it allows."""
    path = workdir(tmp_path) / "speed.yaml"
    switches = tmp_path / "catalog" / "switches.yaml"
    text = switches.read_text()
    at = text.index("  sn5600:")
    switches.write_text(text[:at] + text[at:].replace("speeds_gbps: [800, 400, 200, 100, 50, 40, 25, 10]",
                                                      "speeds_gbps: [800]", 1))
    path.write_text(LAB_TEXT)
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, path, line_of(LAB_TEXT, "leaf_model: sn5600"), "networks.data.leaf_model",
                   "su01-leaf-rail0 Ethernet0: a 400G link, but ACS-SN5600 (sn5600) runs that port at 800G only")
    assert not [m for m in outcome.problems if m["path"] in ("networks", "networks.data")]


def test_feed_utilisation_is_located_at_the_feed(tmp_path: Path, capsys):
    path = workdir(tmp_path) / "feed.yaml"
    path.write_text(LAB_TEXT.replace("max_utilisation: 0.8", "max_utilisation: 0.01"))
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, path, line_of(LAB_TEXT, "max_utilisation"), "site.facility.feed.max_utilisation",
                   "rack site-spine-r01")
    assert not [m for m in outcome.problems if m["path"] in ("networks", "storage.servers")]


@pytest.mark.parametrize("url", ["http://[", "http://[::1", "ftp://x", "http://user:pw@x", "http://x:99999",
                                 "http://x/?q=1", "http://x y", "http://"])
def test_sot_url_refused_before_anything(tmp_path: Path, capsys, url):
    inventory = tmp_path / "missing.yaml"  # never read: the URL is refused first
    outcome = run_cli(capsys, "sot", "push", str(inventory), "--url", url)
    assert outcome.code == 2, outcome.err
    assert "Traceback" not in outcome.err and "expected http(s)://host[:port]" in re.sub(r"\s+", " ", outcome.err)
