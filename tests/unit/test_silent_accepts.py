"""Settings that would never be applied, or that promise more than the parts they name give, are refused at the
field that declares them (FILE:LINE:COL: field: message, exit 1) — in the inventory or in the catalog file that
holds them. One case per class: BMC management of a server model without an oob NIC (per model and per SU); a
liquid loop under `liquid: false` or where no rack sends heat to liquid; an RDMA device named twice in a server
model; a tier's per-client throughput above the GPU servers' storage NICs; a relative NFS export; acceptance
floors above the datasheet; a Slurm default time above the partition's maximum; two GPU models with one GRES
type; a team named after a namespace the GPU or monitoring stack deploys to."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hostile_fixtures import LAB_TEXT, ROOT, assert_refused, line_of, run_cli, workdir

BASES = {"lab": LAB_TEXT, "gb200": (ROOT / "inventory" / "gb200-nvl72-su.yaml").read_text(),
         "b200": (ROOT / "inventory" / "dgx-b200-su.yaml").read_text()}
LAB_MODEL = "  hgx-h200-2gpu:\n"  # the lab's server model in catalog/servers.yaml
BMC = "credentials: {username: admin, password: {pulumi: bmcPassword}}"
NO_OOB = ("      oob: {count: 1, speed_gbps: 1}\n    psu: {count: 2, rating_w: 2400}",
          "      oob: {count: 0, speed_gbps: 1}\n    psu: {count: 2, rating_w: 2400}")
LOOP = "liquid_loop: {cdu_model: vertiv-xdu1350, cdus_per_row: 2, supply_temperature_c: 30}"

# (id, base, inventory edit (old, new) or None, servers.yaml edit after the lab's model (old, new) or None,
#  the file the problem is in ("inventory" or "servers"), field, message fragment, the line's text)
CASES = [
    ("bmc-model-without-oob", "lab", ("\nnetworks:\n", f"\nbaremetal:\n  models:\n    hgx-h200-2gpu: {{{BMC}}}\n"
                                      "\nnetworks:\n"), NO_OOB, "inventory", "baremetal.models.hgx-h200-2gpu",
     "this model has no oob NIC", "    hgx-h200-2gpu: {"),
    ("bmc-su-without-oob", "lab", ("    racks: 2\n", f"    racks: 2\n    management: {{{BMC}}}\n"), NO_OOB, "inventory",
     "scalable_units.0.management", "no BMC is planned", "    management: {"),
    ("liquid-loop-liquid-false", "gb200", ("liquid: true", "liquid: false"), None, "inventory",
     "site.facility.cooling.liquid_loop", "a liquid loop without liquid cooling", "      liquid_loop:"),
    ("liquid-loop-no-liquid-rack", "lab", ("cooling: {air_limit_w: 25000, liquid: false}",
                                           f"cooling: {{air_limit_w: 25000, liquid: true, liquid_limit_w: 30000,"
                                           f" {LOOP}}}"), None, "inventory", "site.facility.cooling.liquid_loop",
     "no rack sends heat to liquid", "liquid_loop:"),
    ("rdma-device-twice", "lab", None, ("      data: {count: 2, speed_gbps: 400}",
                                        "      data: {count: 2, speed_gbps: 400, rdma_devices: [mlx5_0, mlx5_0]}"),
     "servers", "catalog.servers.hgx-h200-2gpu.nics.data.rdma_devices.1", "RDMA device 'mlx5_0' is named twice",
     "rdma_devices: [mlx5_0, mlx5_0]"),
    ("rdma-device-in-two-groups", "lab", None,
     ("      data: {count: 2, speed_gbps: 400}\n      storage: {count: 2, speed_gbps: 100}",
      "      data: {count: 2, speed_gbps: 400, rdma_devices: [mlx5_0, mlx5_1]}\n"
      "      storage: {count: 2, speed_gbps: 100, rdma_devices: [mlx5_1, mlx5_2]}"),
     "servers", "catalog.servers.hgx-h200-2gpu.nics.storage.rdma_devices.0", "named twice (also at",
     "rdma_devices: [mlx5_1, mlx5_2]"),
    ("tier-throughput-above-nics", "lab", ("bricks_per_server: 2, throughput_mbps: 40",
                                           "bricks_per_server: 2, throughput_mbps: 30000"), None, "inventory",
     "storage.tiers.0.throughput_mbps", "hgx-h200-2gpu's storage NICs carry (2 x 100 Gb/s = 25,000 MB/s)",
     "throughput_mbps: 30000"),
    ("nfs-relative-export", "b200", ("kind: lustre", "kind: nfs"), None, "inventory", "storage.tiers.0.export",
     "'hot' is relative", "    - {name: hot,"),
    ("burst-floor-above-peak", "lab", None, ("burst_tflops: {fp16: 719, bf16: 746.4,", "burst_tflops: {fp16: 719,"
                                             " bf16: 990,"), "servers",
     "catalog.servers.hgx-h200-2gpu.gpu.acceptance.burst_tflops.bf16", "above the dense bf16 peak 989.4",
     "bf16: 990"),
    ("sustained-floor-above-peak", "lab", None, ("fp32: 48.5, tf32: 323.7", "fp32: 67, tf32: 323.7"), "servers",
     "catalog.servers.hgx-h200-2gpu.gpu.acceptance.sustained_tflops.fp32", "above the dense fp32 peak 66.9",
     "fp32: 67, tf32: 323.7"),
    ("bandwidth-floor-above-datasheet", "lab", None, ("memory_bandwidth_tbps: 3.99", "memory_bandwidth_tbps: 4.9"),
     "servers", "catalog.servers.hgx-h200-2gpu.gpu.acceptance.memory_bandwidth_tbps",
     "above the datasheet HBM bandwidth 4.8", "memory_bandwidth_tbps: 4.9"),
    ("slurm-default-time-above-max", "lab", ("  hardware: simulated\n", "  hardware: simulated\n  partitions:\n"
                                             "    - {name: gpu, max_time: 1-00:00:00, default_time: 2-00:00:00}\n"),
     None, "inventory", "slurm.partitions.0.default_time", "above the partition's max_time 1-00:00:00",
     "    - {name: gpu,"),
    ("slurm-default-minutes-above-max", "lab", ("  hardware: simulated\n", "  hardware: simulated\n  partitions:\n"
                                                "    - {name: gpu, max_time: '90', default_time: '2:00:00'}\n"),
     None, "inventory", "slurm.partitions.0.default_time", "above the partition's max_time 90",
     "    - {name: gpu,"),
    ("team-monitoring", "lab", ("{name: inference, gpus: 2}", "{name: monitoring, gpus: 2}"), None, "inventory",
     "teams.1.name", "'monitoring' is a namespace", "{name: monitoring"),
    ("team-gpu-monitoring", "lab", ("{name: inference, gpus: 2}", "{name: gpu-monitoring, gpus: 2}"), None,
     "inventory", "teams.1.name", "'gpu-monitoring' is a namespace", "{name: gpu-monitoring"),
    ("team-kueue-system", "lab", ("{name: inference, gpus: 2}", "{name: kueue-system, gpus: 2}"), None,
     "inventory", "teams.1.name", "the monitoring stack owns", "{name: kueue-system"),
    ("team-kube-node-lease", "lab", ("{name: inference, gpus: 2}", "{name: kube-node-lease, gpus: 2}"), None,
     "inventory", "teams.1.name", "a kube-* name", "{name: kube-node-lease"),
]


def _edit_after(text: str, anchor: str, old: str, new: str) -> str:
    start = text.index(anchor)
    at = text.index(old, start)
    return text[:at] + new + text[at + len(old):]


def silent_case(directory: Path, base: str, inventory_edit: tuple[str, str] | None,
                servers_edit: tuple[str, str] | None) -> Path:
    """The declaration of one CASES entry in ``directory`` beside a copy of the catalog (benchmarks/hostile_corpus.py
    runs the table too)."""
    path = workdir(directory) / "hostile.yaml"
    text = BASES[base]
    if inventory_edit is not None:
        assert inventory_edit[0] in text, inventory_edit[0]
        text = text.replace(*inventory_edit, 1)
    path.write_text(text)
    servers = directory / "catalog" / "servers.yaml"
    if servers_edit is not None:
        servers.write_text(_edit_after(servers.read_text(), LAB_MODEL, *servers_edit))
    return path


@pytest.mark.parametrize(("base", "inventory_edit", "servers_edit", "where", "field", "message", "line_text"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_a_setting_never_applied_is_refused_at_its_field(tmp_path: Path, capsys, base, inventory_edit, servers_edit,
                                                         where, field, message, line_text):
    path = silent_case(tmp_path, base, inventory_edit, servers_edit)
    file = path if where == "inventory" else tmp_path / "catalog" / "servers.yaml"
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, file, line_of(file.read_text(), line_text), field, message)


def test_two_gpu_models_with_one_gres_type_are_refused(tmp_path: Path, capsys):
    """A second SU of a copy of the lab's model whose GPU is "H200-NVL": both are GRES type gpu:h200."""
    path = workdir(tmp_path) / "hostile.yaml"
    servers = tmp_path / "catalog" / "servers.yaml"
    text = servers.read_text()
    block = text[text.index(LAB_MODEL):text.index("  storage-nvme-2u:\n")]
    copy = block.replace(LAB_MODEL, "  hgx-h200-nvl-2gpu:\n").replace("      model: H200\n", "      model: H200-NVL\n")
    servers.write_text(text.rstrip("\n") + "\n" + copy)
    path.write_text(LAB_TEXT.replace("    racks: 2\n", "    racks: 2\n  - id: 2\n    server_model: hgx-h200-nvl-2gpu\n"
                                     "    nodes: 2\n    racks: 1\n", 1).replace("{name: research, gpus: 6}",
                                                                            "{name: research, gpus: 10}"))
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, servers, line_of(servers.read_text(), "      model: H200-NVL"),
                   "catalog.servers.hgx-h200-nvl-2gpu.gpu.model", "are both GRES type gpu:h200")


def test_one_gpu_model_in_two_server_models_is_one_gres_type_and_allowed(tmp_path: Path, capsys):
    """The guard of the rule above: the same GPU model string in two server models is one GPU model."""
    path = workdir(tmp_path) / "lab.yaml"
    servers = tmp_path / "catalog" / "servers.yaml"
    text = servers.read_text()
    block = text[text.index(LAB_MODEL):text.index("  storage-nvme-2u:\n")]
    servers.write_text(text.rstrip("\n") + "\n" + block.replace(LAB_MODEL, "  hgx-h200-2gpu-b:\n"))
    path.write_text(LAB_TEXT.replace("    racks: 2\n", "    racks: 2\n  - id: 2\n    server_model: hgx-h200-2gpu-b\n"
                                     "    nodes: 2\n    racks: 1\n", 1))
    outcome = run_cli(capsys, "validate", str(path))
    assert outcome.code == 0, outcome.err[-3000:]


def test_every_namespace_the_roles_deploy_to_is_reserved_for_teams():
    """Each role's *_namespace default (the GPU Operator's, the device plugin's, the DCGM exporter's, ...) is a name
    no team may take: a team is a namespace with a GPU quota, which would starve that stack's pods."""
    from clusterforge.model.software import RESERVED_NAMESPACE_PREFIX, RESERVED_NAMESPACES

    found = {}
    for defaults in sorted(ROOT.glob("roles/*/defaults/main.yml")):
        for key, value in (yaml.safe_load(defaults.read_text()) or {}).items():
            if key.endswith("_namespace") and isinstance(value, str):
                found[f"{defaults.parts[-3]}: {key}"] = value
    assert found, "no role names a namespace: the scan is broken"
    unreserved = {where: name for where, name in found.items()
                  if name not in RESERVED_NAMESPACES and not name.startswith(RESERVED_NAMESPACE_PREFIX)}
    assert not unreserved, unreserved


@pytest.mark.parametrize(("text", "minutes"), [("90", 90), ("90:30", 90.5), ("01:30:00", 90), ("2-00", 2880),
                                               ("1-01:30", 1530), ("1-00:00:30", 1440.5), ("INFINITE", float("inf")),
                                               ("UNLIMITED", float("inf"))])
def test_slurm_times_read_in_every_form_of_the_grammar(text: str, minutes: float):
    from clusterforge.model.slurm_checks import slurm_minutes

    assert slurm_minutes(text) == minutes


@pytest.mark.parametrize("server", ["169.254.169.123", "169.254.169.254"])
def test_a_cloud_time_server_on_a_link_local_address_is_accepted(tmp_path: Path, capsys, server: str):
    """Amazon Time Sync answers at 169.254.169.123 (link-local, on every instance): a host address, not refused."""
    from clusterforge.model.timeservers import check_time_server

    assert check_time_server(server) == server
    path = workdir(tmp_path) / "lab.yaml"
    path.write_text(LAB_TEXT.replace("time_servers: [198.18.8.1]", f"time_servers: [{server}]", 1))
    outcome = run_cli(capsys, "validate", str(path))
    assert outcome.code == 0, outcome.err[-2000:]


@pytest.mark.parametrize("server", ["127.0.0.1", "224.0.0.1", "0.1.2.3", "255.255.255.255", "240.0.0.1"])
def test_what_is_no_host_address_is_still_refused(server: str):
    from clusterforge.model.timeservers import check_time_server

    with pytest.raises(ValueError, match="not a unicast host address"):
        check_time_server(server)
