"""Hostile values in the fields added since issue 26's corpus: Kubernetes control nodes, teams and their GPU quotas,
plane gateways, liquid cooling (CDU loops), rack-scale systems (declaration and catalog) and, for issue 47, the
`kubernetes:` block (pod and service ranges, node_pod_prefix), teams' queue limits, `monitoring:` and
`remediation:` (max_out_per_su and the rest), and a declared NVLink domain (`nvlink_domain_nodes`). Each is
refused at its field (FILE:LINE:COL: field: message), exit 1, never a traceback. Before this table: a decimal count
(`control.nodes: 1.0`), a team named after a namespace Kubernetes or the GPU stack owns (default, kube-system,
gpu-operator), an external gateway naming nobody, `by` on a fabric gateway and a rack system whose NVLink domain
is not its trays' GPUs were silently accepted. benchmarks/hostile_corpus.py counts this table too."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, ROOT, assert_refused, line_of, run_cli, workdir

GB200_TEXT = (ROOT / "inventory" / "gb200-nvl72-su.yaml").read_text()
BASES = {"lab": LAB_TEXT, "gb200": GB200_TEXT}
TIME = "time_servers: [198.18.8.1]"
POD, SERVICES = "198.18.32.0/20", "198.18.48.0/24"
K8S = f"kubernetes:\n  pod_cidr: {POD}\n  service_cidr: {SERVICES}"
MON = "monitoring:\n  scrape_interval_s: 5"
MGMT_GATEWAY = "gateway: {provider: external, by: the lab machine ctl0}\n    vrf: mgmt\n  oob"

# (id, base, text replaced, replacement, field, message fragment)
DECLARATION = [
    ("control-nodes-2", "lab", "control:\n  nodes: 1", "control:\n  nodes: 2", "control.nodes",
     "Input should be 0, 1 or 3"),
    ("control-nodes-true", "lab", "control:\n  nodes: 1", "control:\n  nodes: true", "control.nodes",
     "the boolean true is not a valid integer"),
    ("control-nodes-1.0", "lab", "control:\n  nodes: 1", "control:\n  nodes: 1.0", "control.nodes",
     "1.0 is not a valid integer"),
    ("control-no-model", "lab", "  server_model: control-1u\n", "", "control",
     "control.nodes > 0 needs control.server_model"),
    ("control-model-unknown", "lab", "  server_model: control-1u\n", "  server_model: nosuch\n",
     "control.server_model", "unknown server model 'nosuch'"),
    ("control-extra-key", "lab", "control:\n  nodes: 1", "control:\n  replicas: 2\n  nodes: 1", "control.replicas",
     "unknown field"),
    ("team-duplicate", "lab", "{name: inference, gpus: 2}", "{name: research, gpus: 2}", "teams.1.name",
     "duplicate team name 'research'"),
    ("team-over-capacity", "lab", "{name: inference, gpus: 2}", "{name: inference, gpus: 200}", "teams.1.gpus",
     "200 GPUs exceed the cluster's 8"),
    ("team-negative", "lab", "{name: inference, gpus: 2}", "{name: inference, gpus: -1}", "teams.1.gpus",
     "greater than or equal to 0"),
    ("team-gpus-string", "lab", "{name: inference, gpus: 2}", "{name: inference, gpus: '2'}", "teams.1.gpus",
     "a string is not a valid integer"),
    ("team-gpus-2.5", "lab", "{name: inference, gpus: 2}", "{name: inference, gpus: 2.5}", "teams.1.gpus",
     "2.5 is not a valid integer"),
    ("team-kube-system", "lab", "{name: inference, gpus: 2}", "{name: kube-system, gpus: 2}", "teams.1.name",
     "'kube-system' is a namespace Kubernetes, the GPU stack or the monitoring stack owns"),
    ("team-kube-prefix", "lab", "{name: inference, gpus: 2}", "{name: kube-anything, gpus: 2}", "teams.1.name",
     "a kube-* name"),
    ("team-default", "lab", "{name: inference, gpus: 2}", "{name: default, gpus: 2}", "teams.1.name",
     "'default' is a namespace Kubernetes, the GPU stack or the monitoring stack owns"),
    ("team-gpu-operator", "lab", "{name: inference, gpus: 2}", "{name: gpu-operator, gpus: 2}", "teams.1.name",
     "'gpu-operator' is a namespace"),
    ("team-upper", "lab", "{name: inference, gpus: 2}", "{name: Inference, gpus: 2}", "teams.1.name",
     "not a valid name"),
    ("team-newline", "lab", "{name: inference, gpus: 2}", '{name: "inf\\nerence", gpus: 2}', "teams.1.name",
     "not a valid name"),
    ("team-jinja", "lab", "{name: inference, gpus: 2}", "{name: \"{{ lookup('pipe','id') }}\", gpus: 2}",
     "teams.1.name", "not a valid name"),
    ("team-no-name", "lab", "{name: inference, gpus: 2}", "{gpus: 2}", "teams.1.name", "required field is missing"),
    ("teams-mapping", "lab", "teams:\n  - {name: research, gpus: 6}\n  - {name: inference, gpus: 2}",
     "teams: {research: 6}", "teams", "Input should be a valid list"),
    ("kubernetes-version-inject", "lab", 'cuda_version: "11.8"',
     'cuda_version: "11.8"\n  kubernetes_version: "1.31; id"', "software.kubernetes_version", "not a valid version"),
    ("gateway-provider-bogus", "lab", MGMT_GATEWAY, MGMT_GATEWAY.replace("provider: external", "provider: bogus"),
     "networks.management.gateway.provider", "Input should be 'fabric' or 'external'"),
    ("gateway-external-nobody", "lab", MGMT_GATEWAY, MGMT_GATEWAY.replace(", by: the lab machine ctl0", ""),
     "networks.management.gateway", "an external gateway needs `by`"),
    ("gateway-by-on-fabric", "lab", MGMT_GATEWAY, MGMT_GATEWAY.replace("provider: external", "provider: fabric"),
     "networks.management.gateway.by", "`by` names an external one's owner"),
    ("gateway-by-shell", "lab", MGMT_GATEWAY, MGMT_GATEWAY.replace("the lab machine ctl0", '"x; rm -rf /"'),
     "networks.management.gateway.by", "not a valid owner"),
    ("gateway-by-jinja", "lab", MGMT_GATEWAY, MGMT_GATEWAY.replace("the lab machine ctl0", '"{{ 7*7 }}"'),
     "networks.management.gateway.by", "not a valid owner"),
    ("gateway-extra-key", "lab", MGMT_GATEWAY, MGMT_GATEWAY.replace("ctl0}", "ctl0, ip: 192.0.2.1}"),
     "networks.management.gateway.ip", "unknown field"),
    ("gateway-data-external", "lab", "    oversubscription: 1.0\n  storage:",
     "    oversubscription: 1.0\n    gateway: {provider: external, by: core}\n  storage:",
     "networks.data.gateway.provider", "the data plane has no gateway to hand to a site router"),
    ("cdus-0", "gb200", "cdus_per_row: 2", "cdus_per_row: 0", "site.facility.cooling.liquid_loop.cdus_per_row",
     "greater than or equal to 1"),
    ("cdus-true", "gb200", "cdus_per_row: 2", "cdus_per_row: true", "site.facility.cooling.liquid_loop.cdus_per_row",
     "the boolean true is not a valid integer"),
    ("cdus-short-of-n+1", "gb200", "cdus_per_row: 2", "cdus_per_row: 1",
     "site.facility.cooling.liquid_loop.cdus_per_row", "allowed: cdus_per_row >= 2"),
    ("cdu-model-unknown", "gb200", "cdu_model: vertiv-xdu1350", "cdu_model: nosuch",
     "site.facility.cooling.liquid_loop.cdu_model", "unknown CDU model 'nosuch'"),
    ("cdu-model-a-pdu", "gb200", "cdu_model: vertiv-xdu1350", "cdu_model: raritan-px3-415v-63a",
     "site.facility.cooling.liquid_loop.cdu_model", "unknown CDU model"),
    ("supply-100c", "gb200", "supply_temperature_c: 30", "supply_temperature_c: 100",
     "site.facility.cooling.liquid_loop.supply_temperature_c", "less than or equal to 60"),
    ("supply-nan", "gb200", "supply_temperature_c: 30", "supply_temperature_c: .nan",
     "site.facility.cooling.liquid_loop.supply_temperature_c", "finite number"),
    ("delta-t-0", "gb200", "delta_t_k: 10", "delta_t_k: 0", "site.facility.cooling.liquid_loop.delta_t_k",
     "greater than 0"),
    ("loop-redundancy-bogus", "gb200", "redundancy: N+1", "redundancy: N+7",
     "site.facility.cooling.liquid_loop.redundancy", "Input should be 'N', 'N+1', 'N+2' or '2N'"),
    ("liquid-limit-without-liquid", "gb200", "liquid: true", "liquid: false", "site.facility.cooling.liquid_limit_w",
     "a liquid limit without liquid cooling is never applied"),
    ("liquid-limit-0", "gb200", "liquid_limit_w: 140000", "liquid_limit_w: 0", "scalable_units.0.nodes_per_rack",
     "exceeds the liquid-cooling limit 0 W"),
    ("air-limit-nan", "gb200", "air_limit_w: 40000", "air_limit_w: .nan", "site.facility.cooling.air_limit_w",
     "finite number"),
    ("rack-system-unknown", "gb200", "rack_system: gb200-nvl72,", "rack_system: nosuch,",
     "scalable_units.0.rack_system", "unknown rack system 'nosuch'"),
    ("rack-system-dropped", "gb200", "rack_system: gb200-nvl72,", "rack_system: null,",
     "scalable_units.0.server_model", "places as a whole rack"),
    ("rack-system-other-tray", "gb200", "rack_system: gb200-nvl72,", "rack_system: gb300-nvl72,",
     "scalable_units.0.server_model", "a gb300-nvl72 rack holds only its own compute trays"),
    ("rack-system-20-per-rack", "gb200", "nodes: 144, racks: 8, nodes_per_rack: 18",
     "nodes: 160, racks: 8, nodes_per_rack: 20", "scalable_units.0.nodes_per_rack", "allowed: nodes_per_rack: 18"),
    # a declared NVLink domain (issue 45's domain drill): whole in its racks, never beside a rack system
    ("nvlink-domain-nodes-3", "lab", "    racks: 2\n", "    racks: 2\n    nvlink_domain_nodes: 3\n",
     "scalable_units.0.nvlink_domain_nodes", "rack 1 of SU 1 holds 2 server(s), not a whole number of 3-server"),
    ("nvlink-domain-nodes-1", "lab", "    racks: 2\n", "    racks: 2\n    nvlink_domain_nodes: 1\n",
     "scalable_units.0.nvlink_domain_nodes", "greater than or equal to 2"),
    ("nvlink-domain-nodes-string", "lab", "    racks: 2\n", "    racks: 2\n    nvlink_domain_nodes: rack\n",
     "scalable_units.0.nvlink_domain_nodes", "a string is not a valid integer"),
    ("nvlink-domain-nodes-2.0", "lab", "    racks: 2\n", "    racks: 2\n    nvlink_domain_nodes: 2.0\n",
     "scalable_units.0.nvlink_domain_nodes", "2.0 is not a valid integer"),
    ("nvlink-domain-nodes-rack-system", "gb200", "rack_system: gb200-nvl72,",
     "rack_system: gb200-nvl72, nvlink_domain_nodes: 18,", "scalable_units.0.nvlink_domain_nodes",
     "a gb200-nvl72 rack is one NVLink domain already"),
    ("rack-system-42u", "gb200", "rack_u: 48", "rack_u: 42", "site.facility.rack_u", "allowed: rack_u >= 48"),
    ("rack-footprint-0", "gb200", "rack_footprint_m2: 0.72", "rack_footprint_m2: 0",
     "site.facility.rack_footprint_m2", "greater than 0"),
    ("time-server-two-in-one", "lab", TIME, "time_servers: ['198.18.8.1 198.18.8.2']", "site.time_servers.0",
     "not a valid time server"),
    ("time-server-newline", "lab", TIME, 'time_servers: ["198.18.8.1\\nNTP=203.0.113.9"]', "site.time_servers.0",
     "not a valid time server"),
    ("time-server-template", "lab", TIME, "time_servers: ['{{ lookup(\"pipe\", \"id\") }}']",
     "site.time_servers.0", "not a valid time server"),
    ("time-server-loopback", "lab", TIME, "time_servers: [127.0.0.1]", "site.time_servers.0",
     "127.0.0.1 is not a unicast host address"),
    ("team-lends-more-than-its-own", "lab", "{name: inference, gpus: 2}",
     "{name: inference, gpus: 2, lending_limit_gpus: 3}", "teams.1.lending_limit_gpus",
     "3 GPUs to lend exceed the team's own 2"),
    ("team-borrow-negative", "lab", "{name: inference, gpus: 2}",
     "{name: inference, gpus: 2, borrowing_limit_gpus: -1}", "teams.1.borrowing_limit_gpus",
     "greater than or equal to 0"),
    ("team-borrow-all", "lab", "{name: inference, gpus: 2}",
     "{name: inference, gpus: 2, borrowing_limit_gpus: all}", "teams.1.borrowing_limit_gpus",
     "a string is not a valid integer"),
    ("team-lend-1.5", "lab", "{name: inference, gpus: 2}", "{name: inference, gpus: 2, lending_limit_gpus: 1.5}",
     "teams.1.lending_limit_gpus", "1.5 is not a valid integer"),
    ("team-borrow-typo", "lab", "{name: inference, gpus: 2}", "{name: inference, gpus: 2, borrow_gpus: 2}",
     "teams.1.borrow_gpus", "unknown field"),
    ("time-server-octet", "lab", TIME, "time_servers: [198.18.8.256]", "site.time_servers.0", "not an IPv4 address"),
    ("time-server-twice", "lab", TIME, "time_servers: [198.18.8.1, 198.18.8.1]", "site.time_servers",
     "198.18.8.1 listed more than once"),
    ("time-servers-9", "lab", TIME, "time_servers: [" + ", ".join(f"ntp{i}.example.net" for i in range(9)) + "]",
     "site.time_servers", "at most 8 items"),
    ("time-server-number", "lab", TIME, "time_servers: [1]", "site.time_servers.0", "valid string"),
    # Kubernetes nodes (issue 47): the pod and service ranges, the per-node block that reaches the kubelet
    ("pod-cidr-ipv6", "lab", K8S, K8S.replace(POD, "fd00::/48"), "kubernetes.pod_cidr", "IPv6 is not planned here"),
    ("pod-cidr-host-bits", "lab", K8S, K8S.replace(POD, "198.18.32.1/20"), "kubernetes.pod_cidr", "host bits set"),
    ("pod-cidr-newline", "lab", K8S, K8S.replace(POD, '"198.18.32.0/20\\n  x: 1"'), "kubernetes.pod_cidr",
     "not a CIDR prefix; expected an IPv4 prefix"),
    ("pod-cidr-jinja", "lab", K8S, K8S.replace(POD, '"{{ 7*7 }}"'), "kubernetes.pod_cidr", "not a CIDR prefix"),
    ("pod-cidr-64", "lab", K8S, K8S.replace(POD, "198.18.32.0/64"), "kubernetes.pod_cidr", "/64 is not a usable pool"),
    ("pod-cidr-loopback", "lab", K8S, K8S.replace(POD, "127.0.0.0/20"), "kubernetes.pod_cidr", "overlaps loopback"),
    ("pod-cidr-number", "lab", K8S, K8S.replace(POD, "3"), "kubernetes.pod_cidr", "valid string"),
    ("pod-cidr-over-services", "lab", K8S, K8S.replace(POD, "198.18.48.0/20"), "kubernetes.service_cidr",
     "overlaps kubernetes.pod_cidr"),
    ("service-cidr-slash-8", "lab", K8S, K8S.replace(SERVICES, "10.0.0.0/8"), "kubernetes.service_cidr",
     "larger than the API server accepts"),
    ("service-cidr-multicast", "lab", K8S, K8S.replace(SERVICES, "224.0.0.0/24"), "kubernetes.service_cidr",
     "overlaps multicast"),
    ("node-pod-prefix-8", "lab", K8S, K8S + "\n  node_pod_prefix: 8", "kubernetes.node_pod_prefix",
     "greater than or equal to 16"),
    ("node-pod-prefix-true", "lab", K8S, K8S + "\n  node_pod_prefix: true", "kubernetes.node_pod_prefix",
     "the boolean true is not a valid integer"),
    ("node-pod-prefix-string", "lab", K8S, K8S + "\n  node_pod_prefix: '24'", "kubernetes.node_pod_prefix",
     "a string is not a valid integer"),
    ("node-pod-prefix-24.5", "lab", K8S, K8S + "\n  node_pod_prefix: 24.5", "kubernetes.node_pod_prefix",
     "24.5 is not a valid integer"),
    ("node-pod-prefix-fills-pods", "lab", K8S, K8S + "\n  node_pod_prefix: 20", "kubernetes.node_pod_prefix",
     "do not fit in pod_cidr"),
    ("kubernetes-extra-key", "lab", K8S, K8S + "\n  node_labels: {a: b}", "kubernetes.node_labels", "unknown field"),
    ("kubernetes-a-list", "lab", "kubernetes:\n  pod_cidr", "kubernetes: [1]\nkubernetes_rest:\n  pod_cidr",
     "kubernetes", "valid dictionary"),
    ("kubernetes-without-kubelets", "lab", "schedulers: [kubernetes, slurm]", "schedulers: [slurm]", "kubernetes",
     "kubernetes settings are never applied"),
    # monitoring
    ("scrape-0", "lab", MON, "monitoring:\n  scrape_interval_s: 0", "monitoring.scrape_interval_s",
     "greater than or equal to 5"),
    ("scrape-1e9", "lab", MON, "monitoring:\n  scrape_interval_s: 1000000000", "monitoring.scrape_interval_s",
     "less than or equal to 300"),
    ("scrape-nan", "lab", MON, "monitoring:\n  scrape_interval_s: .nan", "monitoring.scrape_interval_s",
     "nan is not a valid integer"),
    ("retention-0", "lab", MON, MON + "\n  retention_days: 0", "monitoring.retention_days",
     "greater than or equal to 1"),
    ("monitoring-host-unknown", "lab", MON, MON + "\n  host: nosuch", "monitoring.host", "is not a control node"),
    ("monitoring-host-a-gpu-server", "lab", MON, MON + "\n  host: su01-r01-gpu01", "monitoring.host",
     "is not a control node"),
    ("monitoring-host-shell", "lab", MON, MON + '\n  host: "ctl-01; id"', "monitoring.host", "not a valid name"),
    ("monitoring-extra-key", "lab", MON, MON + "\n  grafana: true", "monitoring.grafana", "unknown field"),
    # remediation
    ("remediation-mode-bogus", "lab", MON, MON + "\nremediation:\n  mode: auto", "remediation.mode",
     "Input should be 'observe' or 'act'"),
    ("max-out-per-su-negative", "lab", MON, MON + "\nremediation:\n  max_out_per_su: -1",
     "remediation.max_out_per_su", "greater than or equal to 0"),
    ("max-out-per-su-0-act", "lab", MON, MON + "\nremediation:\n  mode: act\n  max_out_per_su: 0",
     "remediation.max_out_per_su", "so `mode: act` could never act"),
    ("max-out-per-rack-0-act", "lab", MON, MON + "\nremediation:\n  mode: act\n  max_out_per_rack: 0",
     "remediation.max_out_per_rack", "so `mode: act` could never act"),
    ("max-out-per-su-all", "lab", MON, MON + "\nremediation:\n  max_out_per_su: all", "remediation.max_out_per_su",
     "a string is not a valid integer"),
    ("max-out-per-su-5000", "lab", MON, MON + "\nremediation:\n  max_out_per_su: 5000",
     "remediation.max_out_per_su", "less than or equal to 4096"),
    ("automatic-reimage", "lab", MON, MON + "\nremediation:\n  automatic: [reimage]", "remediation.automatic.0",
     "Input should be 'drain', 'reset_gpu' or 'reboot'"),
    ("automatic-twice", "lab", MON, MON + "\nremediation:\n  automatic: [drain, drain]", "remediation.automatic.1",
     "'drain' is listed twice"),
    ("automatic-4", "lab", MON, MON + "\nremediation:\n  automatic: [drain, reboot, reset_gpu, drain]",
     "remediation.automatic", "at most 3 items"),
    ("cooldown-negative", "lab", MON, MON + "\nremediation:\n  cooldown_s: -5", "remediation.cooldown_s",
     "greater than or equal to 0"),
    ("drain-timeout-1", "lab", MON, MON + "\nremediation:\n  drain_timeout_s: 1", "remediation.drain_timeout_s",
     "greater than or equal to 10"),
    ("remediation-extra-key", "lab", MON, MON + "\nremediation:\n  when: always", "remediation.when",
     "unknown field"),
]
for _case in DECLARATION:
    assert _case[2] in BASES[_case[1]], _case[0]

# (id, text replaced in catalog/racks.yaml under the gb200 example, replacement, field, message fragment)
RACKS_CATALOG = [
    ("layout-overlap", "{kind: compute, count: 8, first_u: 6}", "{kind: compute, count: 8, first_u: 2}",
     "catalog.rack_systems.gb200-nvl72", "U2 holds both a power-shelf and a compute tray"),
    ("layout-past-the-rack", "{kind: power-shelf, count: 4, first_u: 34}", "{kind: power-shelf, count: 4, first_u: 47}",
     "catalog.rack_systems.gb200-nvl72", "runs past the rack's 48 U"),
    ("liquid-fraction-1.5", "liquid_fraction: 0.85", "liquid_fraction: 1.5",
     "catalog.rack_systems.gb200-nvl72.liquid_fraction", "less than or equal to 1"),
    ("peak-nan", "peak_w: 132000", "peak_w: .nan", "catalog.rack_systems.gb200-nvl72.peak_w", "finite number"),
    ("nvlink-gpus-0", "nvlink_gpus: 72", "nvlink_gpus: 0", "catalog.rack_systems.gb200-nvl72.nvlink_gpus",
     "greater than or equal to 1"),
    ("nvlink-gpus-71", "nvlink_gpus: 72", "nvlink_gpus: 71", "catalog.rack_systems.gb200-nvl72.nvlink_gpus",
     "18 compute trays of 4 GPUs are 72 GPUs in the rack's NVLink domain, not 71; allowed: nvlink_gpus: 72"),
    ("power-shelf-unknown", "power_shelf: orv3-33kw", "power_shelf: nosuch",
     "catalog.rack_systems.gb200-nvl72.power_shelf", "unknown power shelf 'nosuch'"),
    ("nvswitch-chips-0", "nvswitch_chips: 2", "nvswitch_chips: 0",
     "catalog.rack_systems.gb200-nvl72.nvlink_switch_tray.nvswitch_chips", "greater than or equal to 1"),
    ("transient-0.5", "transient_factor: 1.0", "transient_factor: 0.5",
     "catalog.rack_systems.gb200-nvl72.transient_factor", "greater than or equal to 1"),
]


def declaration_case(directory: Path, base: str, old: str, new: str) -> Path:
    """The declaration of one DECLARATION case in ``directory`` beside a copy of the catalog."""
    path = workdir(directory) / "hostile.yaml"
    path.write_text(BASES[base].replace(old, new, 1))
    return path


def racks_case(directory: Path, old: str, new: str) -> tuple[Path, Path]:
    """The gb200 example in ``directory`` with one RACKS_CATALOG edit in its catalog's racks.yaml."""
    path = workdir(directory) / "hostile.yaml"
    racks = directory / "catalog" / "racks.yaml"
    text = racks.read_text()
    assert old in text, old
    racks.write_text(text.replace(old, new, 1))
    path.write_text(GB200_TEXT)
    return path, racks


@pytest.mark.parametrize(("base", "old", "new", "field", "message"), [c[1:] for c in DECLARATION],
                         ids=[c[0] for c in DECLARATION])
def test_a_recent_field_is_refused_at_the_field(tmp_path: Path, capsys, base, old, new, field, message):
    path = declaration_case(tmp_path, base, old, new)
    assert_refused(run_cli(capsys, "validate", str(path)), path, None, field, message)


@pytest.mark.parametrize(("old", "new", "field", "message"), [c[1:] for c in RACKS_CATALOG],
                         ids=[c[0] for c in RACKS_CATALOG])
def test_a_rack_system_is_refused_in_its_catalog_file(tmp_path: Path, capsys, old, new, field, message):
    path, racks = racks_case(tmp_path, old, new)
    outcome = run_cli(capsys, "validate", str(path))
    racks_text = racks.read_text()
    assert_refused(outcome, racks, None, field, message)
    hit = next(m for m in outcome.problems if m["path"] == field and message in m["msg"])
    assert int(hit["line"]) in (line_of(racks_text, new), line_of(racks_text, "  gb200-nvl72:"))


def test_a_queue_limit_without_kubernetes_is_refused(tmp_path: Path, capsys):
    """Borrowing and lending limits are Kueue's: a Slurm-only declaration never applies them."""
    path = workdir(tmp_path) / "hostile.yaml"
    text = LAB_TEXT.replace("schedulers: [kubernetes, slurm]", "schedulers: [slurm]", 1)
    text = text.replace("{name: inference, gpus: 2}", "{name: inference, gpus: 2, borrowing_limit_gpus: 2}", 1)
    text = text[:text.index("kubernetes:\n  pod_cidr")] + text[text.index("schedulers: [slurm]"):]
    path.write_text(text)
    assert_refused(run_cli(capsys, "validate", str(path)), path, line_of(text, "borrowing_limit_gpus"),
                   "teams.1.borrowing_limit_gpus", "is a Kubernetes queue limit (Kueue) and is never applied")


def test_kueue_without_teams_is_refused(tmp_path: Path, capsys):
    """kubernetes.kueue queues the teams' GPUs: with no team there is no queue, so it would never be applied."""
    path = workdir(tmp_path) / "hostile.yaml"
    text = LAB_TEXT[:LAB_TEXT.index("\nteams:\n")] + "\n"
    assert "  kueue: true\n" in text
    path.write_text(text)
    assert_refused(run_cli(capsys, "validate", str(path)), path, line_of(text, "kueue: true"), "kubernetes.kueue",
                   "no team is declared")


@pytest.mark.parametrize("value", ["yes please", 2])
def test_kueue_is_a_boolean(tmp_path: Path, capsys, value):
    path = workdir(tmp_path) / "hostile.yaml"
    text = LAB_TEXT.replace("  kueue: true\n", f"  kueue: {value}\n", 1)
    path.write_text(text)
    assert_refused(run_cli(capsys, "validate", str(path)), path, line_of(text, "kueue:"), "kubernetes.kueue",
                   "valid boolean")


def test_the_reserved_team_names_are_the_roles_namespaces():
    """The GPU Operator's namespace a team may not take is the one roles/k8s_gpu deploys it to."""
    import yaml

    from clusterforge.model.software import RESERVED_NAMESPACE_PREFIX, RESERVED_NAMESPACES

    defaults = yaml.safe_load((ROOT / "roles/k8s_gpu/defaults/main.yml").read_text())
    assert defaults["k8s_gpu_gpu_operator_namespace"] in RESERVED_NAMESPACES
    assert defaults["k8s_gpu_namespace"].startswith(RESERVED_NAMESPACE_PREFIX)  # the device plugin's kube-system


def test_every_example_still_validates(capsys):
    for example in sorted((ROOT / "inventory").glob("*.yaml")):
        outcome = run_cli(capsys, "validate", str(example))
        assert outcome.code == 0, (example.name, outcome.err[-2000:])
