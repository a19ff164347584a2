"""Grafana dashboards for the plan's Prometheus, built with grafana-foundation-sdk's builders (typed models
generated from Grafana's dashboard schema), and a file-provisioning document for a Grafana the user runs.

Four dashboards, each for the series the plan's scrape jobs produce and the alert rules read (rules.py):

* gpu: utilisation, memory, temperature against the rules' 80/85 C, power against its limit, Xid, ECC, row
  remapping and PCIe replays, per host and GPU (dcgm-exporter); only with dcgm-exporter targets.
* fabric: per-port bandwidth of the planned interfaces (node_exporter's netdev, InfiniBand's port counters),
  carrier changes and, with RoCE, PFC pause frames on the lossless priority and ECN marks (ethtool).
* scheduling: Kueue's pending and admitted workloads, admission wait and quota use per ClusterQueue (one per
  team), with Kubernetes; the Slurm exporter's queue and node states, with Slurm. Left out with neither.
* nodes: which exporters answer, file-system free space, disk busy time.

The data source is a template variable (``${datasource}``, any Prometheus the Grafana has), never a UID; the
plan's identity labels (su, rack, host; gpu; team) are template variables read from the series. Declared
values reach the JSON only through the serializer (json.dumps escapes them) and into PromQL never: the team
variable lists the plan's teams as options, which Grafana escapes when it interpolates them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.builders import dashboard as builders
from grafana_foundation_sdk.builders import prometheus, stat, timeseries
from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models import dashboard as models

from clusterforge.plan import Plan
from clusterforge.plan.monitoring import MonitoringPlan, ScrapeJob
from clusterforge.render.monitoring import rules

__all__ = ["dashboards", "dashboard_json", "provisioning_document", "DASHBOARDS_DIR", "GRAFANA_DASHBOARDS_PATH",
           "EXPORTER_METRICS"]

DASHBOARDS_DIR = "dashboards"  # monitoring/dashboards/<name>.json
# Where the provisioning document tells Grafana to read them: copy monitoring/dashboards/ there (docs/guide.md)
GRAFANA_DASHBOARDS_PATH = "/var/lib/grafana/dashboards/clusterforge"
DATASOURCE = models.DataSourceRef(type_val="prometheus", uid="${datasource}")
RATE = "$__rate_interval"

# Series the dashboards read that no rule does, with the exporter (and node_exporter collector, which
# roles/node_exporter enables) that produces each; tests/monitoring checks every query against these, the rules'
# metrics and plan.monitoring.DCGM_FIELDS.
EXPORTER_METRICS = {
    "node_network_receive_bytes_total": "node_exporter netdev",
    "node_network_transmit_bytes_total": "node_exporter netdev",
    "node_infiniband_port_data_received_bytes_total": "node_exporter infiniband",
    "node_infiniband_port_data_transmitted_bytes_total": "node_exporter infiniband",
    "kueue_admitted_active_workloads": "kueue",
    "slurm_nodes_alloc": "prometheus-slurm-exporter",
    "slurm_nodes_idle": "prometheus-slurm-exporter",
}

HOSTS = 'su=~"$su",rack=~"$rack",host=~"$host"'
GPUS = HOSTS + ',gpu=~"$gpu"'
GPU_LEGEND = "{{host}} GPU {{gpu}}"
PORT_LEGEND = "{{host}} {{device}}"


def _uid(cluster: str, name: str) -> str:
    """Grafana's UID grammar is at most 40 of [A-Za-z0-9_-]: the dashboard's name and a digest of the cluster's."""
    return f"cf-{name}-{hashlib.sha256(cluster.encode()).hexdigest()[:12]}"


def _query(expr: str, legend: str, ref: str = "A") -> prometheus.Dataquery:
    return prometheus.Dataquery().expr(expr).legend_format(legend).ref_id(ref).datasource(DATASOURCE)


def _thresholds(*steps: tuple[float, str]) -> builders.ThresholdsConfig:
    return builders.ThresholdsConfig().mode(models.ThresholdsMode.ABSOLUTE).steps(
        [models.Threshold(value=None, color="green")] + [models.Threshold(value=v, color=c) for v, c in steps])


def _series(title: str, queries: Sequence[tuple[str, str]], unit: str, *, width: int = 12,
            lines: Sequence[tuple[float, str]] = (), description: str = "") -> timeseries.Panel:
    """A time-series panel of (expr, legend) queries; LINES are threshold lines drawn across it."""
    panel = (timeseries.Panel().title(title).datasource(DATASOURCE).unit(unit).height(8).span(width)
             .line_width(1).fill_opacity(10)
             .targets([_query(expr, legend, chr(ord("A") + i)) for i, (expr, legend) in enumerate(queries)]))
    if description:
        panel = panel.description(description)
    if lines:
        panel = (panel.thresholds(_thresholds(*lines))
                 .thresholds_style(common_builders.GraphThresholdsStyleConfig()
                                   .mode(common.GraphThresholdsStyleMode.DASHED)))
    return panel


def _stat(title: str, expr: str, legend: str, unit: str = "none", *, width: int = 6,
          steps: Sequence[tuple[float, str]] = ()) -> stat.Panel:
    panel = (stat.Panel().title(title).datasource(DATASOURCE).unit(unit).height(5).span(width)
             .with_target(_query(expr, legend)))
    return panel.thresholds(_thresholds(*steps)) if steps else panel


def _label_variable(name: str, label: str, metric: str, selector: str) -> builders.QueryVariable:
    return (builders.QueryVariable(name).label(label).datasource(DATASOURCE)
            .query(f"label_values({metric}{{{selector}}}, {name})")
            .refresh(models.VariableRefresh.ON_TIME_RANGE_CHANGED)
            .sort(models.VariableSort.ALPHABETICAL_ASC).multi(True).include_all(True).all_value(".*"))


def _variables(metric: str, *, gpu: bool = False) -> list[Builder[models.VariableModel]]:
    """The data source, then su, rack and host, each narrowed by the ones before it (and gpu for GPU panels)."""
    out: list[Builder[models.VariableModel]] = [
        builders.DatasourceVariable("datasource").label("Data source").type("prometheus"),
        _label_variable("su", "SU", metric, ""),
        _label_variable("rack", "Rack", metric, 'su=~"$su"'),
        _label_variable("host", "Host", metric, 'su=~"$su",rack=~"$rack"'),
    ]
    if gpu:
        out.append(_label_variable("gpu", "GPU", metric, HOSTS))
    return out


def _dashboard(cluster: str, name: str, title: str, variables: list[Builder[models.VariableModel]],
               rows: Sequence[tuple[str, Sequence[Builder[models.Panel]]]]) -> models.Dashboard:
    board = (builders.Dashboard(f"{cluster} {title}").uid(_uid(cluster, name)).tags(["clusterforge", cluster])
             .description(f"Rendered by clusterforge from the plan of cluster {cluster}; change the declaration,"
                          " not this dashboard.").timezone("utc").time("now-6h", "now").refresh("1m")
             .tooltip(models.DashboardCursorSync.CROSSHAIR).readonly().variables(variables))
    for row, panels in rows:
        board = board.with_row(builders.Row(row))
        for panel in panels:
            board = board.with_panel(panel)
    built = board.build()
    for number, built_panel in enumerate(built.panels or [], start=1):
        built_panel.id_val = number
    return built


def gpu_dashboard(cluster: str) -> models.Dashboard:
    dcgm = "DCGM_FI_DEV_{}{{" + GPUS + "}}"
    used, free = dcgm.format("FB_USED"), dcgm.format("FB_FREE")
    power, limit = dcgm.format("POWER_USAGE"), dcgm.format("POWER_MGMT_LIMIT")
    temp = ((rules.GPU_TEMP_WARNING_C, "orange"), (rules.GPU_TEMP_CRITICAL_C, "red"))
    return _dashboard(cluster, "gpu", "GPUs", _variables("DCGM_FI_DEV_GPU_TEMP", gpu=True), [
        ("Load", [
            _series("GPU utilisation", [(dcgm.format("GPU_UTIL"), GPU_LEGEND)], "percent"),
            _series("Tensor pipe active", [("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{" + GPUS + "}", GPU_LEGEND)],
                    "percentunit"),
            _series("Memory used", [(used, GPU_LEGEND)], "decmbytes"),
            _series("Memory used (share)", [(f"{used} / ({used} + {free})", GPU_LEGEND)], "percentunit",
                    lines=((rules.GPU_MEMORY_FULL_FRACTION, "red"),)),
        ]),
        ("Heat and power", [
            _series("GPU temperature", [(dcgm.format("GPU_TEMP"), GPU_LEGEND)], "celsius", lines=temp,
                    description="Dashed lines: the GpuTemperatureWarning and GpuTemperatureCritical thresholds."),
            _series("Memory temperature", [(dcgm.format("MEMORY_TEMP"), GPU_LEGEND)], "celsius"),
            _series("Power draw", [(power, GPU_LEGEND), (limit, GPU_LEGEND + " limit")], "watt"),
            _series("Power draw / limit", [(f"{power} / {limit}", GPU_LEGEND)], "percentunit",
                    lines=((rules.GPU_BELOW_CAP_FRACTION, "orange"),),
                    description="Busy below the dashed line with lowered clocks: GpuBusyBelowPowerCap fires."),
        ]),
        ("Errors", [
            _stat("GPUs with an Xid", f"count(({dcgm.format('XID_ERRORS')}) > 0) or vector(0)", "",
                  steps=((1, "red"),)),
            _stat("Double-bit ECC errors", f"sum(increase({dcgm.format('ECC_DBE_VOL_TOTAL')}[$__range]))", "",
                  steps=((1, "red"),)),
            _stat("Row-remap failures", f"count(({dcgm.format('ROW_REMAP_FAILURE')}) > 0) or vector(0)", "",
                  steps=((1, "red"),)),
            _stat("PCIe replays", f"sum(increase({dcgm.format('PCIE_REPLAY_COUNTER')}[$__range]))", "",
                  steps=((1, "orange"),)),
            _series("Last Xid", [(f"{dcgm.format('XID_ERRORS')} > 0", GPU_LEGEND)], "none"),
            _series("ECC errors", [(f"increase({dcgm.format('ECC_SBE_VOL_TOTAL')}[{RATE}])", GPU_LEGEND + " SBE"),
                                   (f"increase({dcgm.format('ECC_DBE_VOL_TOTAL')}[{RATE}])", GPU_LEGEND + " DBE")],
                    "short"),
        ]),
    ])


def fabric_dashboard(cluster: str, monitoring: MonitoringPlan) -> models.Dashboard:
    ports = '{plane!="",' + HOSTS + "}"
    ib = "{" + HOSTS + "}"
    legend = PORT_LEGEND + " {{plane}}"
    panels: list[Builder[models.Panel]] = [
        _series("Receive", [(f"rate(node_network_receive_bytes_total{ports}[{RATE}])", legend)], "Bps"),
        _series("Transmit", [(f"rate(node_network_transmit_bytes_total{ports}[{RATE}])", legend)], "Bps"),
        _series("InfiniBand receive", [(f"rate(node_infiniband_port_data_received_bytes_total{ib}[{RATE}])",
                                        PORT_LEGEND + " port {{port}}")], "Bps"),
        _series("InfiniBand transmit", [(f"rate(node_infiniband_port_data_transmitted_bytes_total{ib}[{RATE}])",
                                         PORT_LEGEND + " port {{port}}")], "Bps"),
        _series("Carrier changes", [(f"increase(node_network_carrier_changes_total{ports}[{RATE}])", legend)],
                "short", width=24),
    ]
    rows: list[tuple[str, Sequence[Builder[models.Panel]]]] = [("Ports", panels)]
    if monitoring.pfc_priority is not None:
        pause = f"node_ethtool_rx_prio{int(monitoring.pfc_priority)}_pause"
        rows.append(("RoCE congestion", [
            _series(f"PFC pause frames received (priority {int(monitoring.pfc_priority)})",
                    [(f"rate({pause}{ports}[{RATE}])", legend)], "pps",
                    lines=((rules.PFC_PAUSES_PER_S, "orange"),)),
            _series("ECN-marked packets received", [(f"rate(node_ethtool_rx_ecn_mark{ports}[{RATE}])", legend)],
                    "pps", lines=((rules.ECN_MARKS_PER_S, "orange"),)),
            _series("PFC pause storms", [(f"increase(node_ethtool_tx_pause_storm_error_events{ports}[{RATE}])",
                                          legend)], "short", width=24),
        ]))
    return _dashboard(cluster, "fabric", "Fabric", _variables("node_network_carrier_changes_total"), rows)


def _kueue_row() -> tuple[str, Sequence[Builder[models.Panel]]]:
    team = 'cluster_queue=~"$team"'
    buckets = f"sum by (cluster_queue, le) (rate(kueue_admission_wait_time_seconds_bucket{{{team}}}[{RATE}]))"
    usage = f"sum by (cluster_queue) (kueue_cluster_queue_resource_usage{{{team},resource=\"nvidia.com/gpu\"}})"
    quota = f"sum by (cluster_queue) (kueue_cluster_queue_nominal_quota{{{team},resource=\"nvidia.com/gpu\"}})"
    return ("Kueue", [
        _series("Pending workloads", [(f'sum by (cluster_queue) (kueue_pending_workloads{{{team},status="active"}})',
                                       "{{cluster_queue}}")], "short"),
        _series("Admitted workloads", [(f"sum by (cluster_queue) (kueue_admitted_active_workloads{{{team}}})",
                                        "{{cluster_queue}}")], "short"),
        _series("Admission wait", [(f"histogram_quantile(0.5, {buckets})", "{{cluster_queue}} p50"),
                                   (f"histogram_quantile(0.9, {buckets})", "{{cluster_queue}} p90")], "s"),
        _series("GPU quota used", [(f"{usage} / {quota}", "{{cluster_queue}}")], "percentunit",
                lines=((1, "orange"),), description="Above the line a ClusterQueue borrows from the cohort."),
    ])


def _slurm_row() -> tuple[str, Sequence[Builder[models.Panel]]]:
    return ("Slurm", [
        _series("Jobs", [("sum(slurm_queue_pending)", "pending"), ("sum(slurm_queue_running)", "running")], "short"),
        _series("Nodes", [(f"sum(slurm_nodes_{state})", state) for state in ("alloc", "idle", "drain", "down")],
                "short"),
    ])


def _team_variable(teams: Sequence[str]) -> Builder[models.VariableModel]:
    """The plan's teams (each a ClusterQueue of its name) as the options; the ClusterQueues Kueue reports without."""
    if not teams:
        return _label_variable("cluster_queue", "ClusterQueue", "kueue_pending_workloads", "").name("team")
    if any("," in team for team in teams):  # a custom variable's options are comma-separated; names admit none
        raise ValueError(f"a team name holds a comma: {teams!r}")
    return (builders.CustomVariable("team").label("Team (ClusterQueue)").values(",".join(teams))
            .multi(True).include_all(True).all_value(".*"))


def scheduling_dashboard(cluster: str, plan: Plan, jobs: Sequence[str]) -> models.Dashboard | None:
    rows = []
    variables: list[Builder[models.VariableModel]] = [
        builders.DatasourceVariable("datasource").label("Data source").type("prometheus")]
    if ScrapeJob.KUBE_APISERVER in jobs:
        rows.append(_kueue_row())
        variables.append(_team_variable([queue.team for queue in plan.queueing.queues] if plan.queueing else []))
    if ScrapeJob.SLURM in jobs:
        rows.append(_slurm_row())
    return _dashboard(cluster, "scheduling", "Scheduling", variables, rows) if rows else None


def nodes_dashboard(cluster: str) -> models.Dashboard:
    node = f'job="{ScrapeJob.NODE}",' + HOSTS
    fs = 'fstype!~"tmpfs|ramfs",' + HOSTS
    return _dashboard(cluster, "nodes", "Nodes", _variables("node_filesystem_size_bytes"), [
        ("Reachability", [
            _stat("Hosts up", f"sum(up{{{node}}})", "", width=8),
            _stat("Hosts down", f"count(up{{{node}}} == 0) or vector(0)", "", width=8, steps=((1, "red"),)),
            _stat("Exporters down", f"count(up{{{HOSTS}}} == 0) or vector(0)", "", width=8, steps=((1, "orange"),)),
            _series("Exporters answering", [(f"up{{{HOSTS}}}", "{{host}} {{job}}")], "none", width=24),
        ]),
        ("Storage", [
            _series("File-system free", [(f"node_filesystem_avail_bytes{{{fs}}} / node_filesystem_size_bytes{{{fs}}}",
                                          "{{host}} {{mountpoint}}")], "percentunit",
                    lines=((rules.FILESYSTEM_FREE_FRACTION, "red"),),
                    description="Below the dashed line FilesystemNearlyFull fires."),
            _series("Disk busy", [(f"rate(node_disk_io_time_seconds_total{{{HOSTS}}}[{RATE}])",
                                   "{{host}} {{device}}")], "percentunit",
                    lines=((rules.DISK_BUSY_FRACTION, "orange"),)),
        ]),
    ])


def dashboards(plan: Plan) -> dict[str, models.Dashboard]:
    """The plan's dashboards by name; none without monitoring."""
    monitoring = plan.monitoring
    if monitoring is None:
        return {}
    jobs = monitoring.jobs()
    out: dict[str, models.Dashboard] = {}
    if ScrapeJob.DCGM in jobs:
        out["gpu"] = gpu_dashboard(plan.cluster)
    out["fabric"] = fabric_dashboard(plan.cluster, monitoring)
    scheduling = scheduling_dashboard(plan.cluster, plan, jobs)
    if scheduling is not None:
        out["scheduling"] = scheduling
    out["nodes"] = nodes_dashboard(plan.cluster)
    return out


def dashboard_json(board: models.Dashboard) -> str:
    """The dashboard's JSON model as Grafana reads it (ASCII only: every declared character escaped)."""
    return json.dumps(board, cls=JSONEncoder, indent=2, ensure_ascii=True) + "\n"


def provisioning_document(cluster: str) -> dict[str, object]:
    """Grafana's dashboard provisioning (provisioning/dashboards/*.yaml): one file provider reading
    GRAFANA_DASHBOARDS_PATH into a folder named after the cluster."""
    return {"apiVersion": 1, "providers": [{
        "name": f"clusterforge-{cluster}", "folder": f"clusterforge {cluster}", "type": "file",
        "disableDeletion": False, "allowUiUpdates": False, "updateIntervalSeconds": 60,
        "options": {"path": GRAFANA_DASHBOARDS_PATH, "foldersFromFilesStructure": False},
    }]}
