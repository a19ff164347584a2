"""The lab's monitoring for real: Prometheus and Alertmanager on ctl-01 (playbooks/monitoring.yml, the rendered
tree's monitoring/ files, the packages from the control image) scraping the real node_exporter of every lab host
(site.yml on the GPU and storage servers, monitoring.yml on the control node) and the SIMULATED dcgm-exporter of
every GPU server (site.yml: roles/dcgm_exporter's cf-sim-dcgm-exporter on lab hosts, no GPU there). Every planned
host's target is up with its planned identity; every GPU series says it is simulated; a second run of the playbook
changes nothing; a healthy lab raises no alert; a simulated GPU set to 90 C raises GpuTemperatureCritical for its
host and GPU; node_exporter stopped on a GPU server raises NodeDown for that host, Alertmanager delivers it to the
LAB ONLY alert receiver on ctl-01 (roles/monitoring's cf-lab-alert-receiver) and the time from the stop to the
delivery is printed; starting it again resolves the alert.

The lab shortens the waits (LAB ONLY, playbooks/monitoring.yml): inventory/lab.yaml declares a 5 s scrape
interval; NodeDown is installed with `for: 15s` and GpuTemperatureCritical with `for: 10s` on lab hosts instead of
the rendered 2 minutes; Alertmanager's group_wait is 1 s and group_interval 5 s instead of 30 s and 5 minutes;
every other rule is as rendered.

The monitoring playbook runs after the session's Kubernetes and Slurm (as `up` orders them): the API server, every
kubelet and Kueue are up targets scraped with Prometheus's service account token (its file 0640 root:prometheus),
cf-slurm-exporter is up on the Slurm controller, and a Job through a team's LocalQueue and a batch job under the
team's Slurm account each add to that team's queue-wait series (Kueue's kueue_admission_wait_time_seconds,
cf-slurm-exporter's slurm_job_wait_seconds and slurm_job_run_seconds, with team="<team>"). One monitoring per
session (the monitoring_cluster fixture)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.lab]


ROOT = Path(__file__).resolve().parents[2]
LAB_YAML = ROOT / "inventory" / "lab.yaml"


def _plan():
    from clusterforge.loading import load_and_plan

    return load_and_plan(LAB_YAML)[1]


PLAN = _plan()
assert PLAN.monitoring is not None, "inventory/lab.yaml plans monitoring on ctl-01"
NODE_TARGETS = {t.host: t for t in PLAN.monitoring.targets if t.job == "node"}
DCGM_TARGETS = {t.host: t for t in PLAN.monitoring.targets if t.job == "dcgm"}
GPU_SERVERS = sorted(h for h, t in NODE_TARGETS.items() if dict(t.labels).get("role") == "server")
GPUS = {d.name: PLAN.server_facts(d).gpu_count for d in PLAN.devices if d.name in DCGM_TARGETS}
EXPORTER_UNIT = "prometheus-node-exporter"  # roles/node_exporter/vars/Debian.yml
SIM_STATE = "/var/lib/cf-sim-dcgm-exporter/state.json"  # roles/dcgm_exporter/vars/main.yml
_MONITORING_DEFAULTS = Path(__file__).resolve().parents[2] / "roles" / "monitoring" / "defaults" / "main.yml"
# the LAB ONLY alert receiver on the monitoring host
RECEIVER = (f"http://{PLAN.monitoring.address}:"
            f"{yaml.safe_load(_MONITORING_DEFAULTS.read_text())['monitoring_lab_receiver_port']}")
# the scheduler jobs' targets by job, then host (the API server, kubelets, Kueue, cf-slurm-exporter)
SCHEDULER_TARGETS = {job: {t.host: t for t in PLAN.monitoring.targets if t.job == job}
                     for job in ("kube-apiserver", "kubelet", "kueue", "slurm")}
TEAM = max(PLAN.slurm.accounts, key=lambda a: a.gpus).name if PLAN.slurm else "research"
# the lab's waits: a scrape every 5 s, NodeDown's `for` of 15 s, a rule evaluation every 5 s; the deadlines leave
# this shared 2-core machine several times that
UP_WITHIN_S = 60.0
FIRE_WITHIN_S = 120.0
RESOLVE_WITHIN_S = 90.0
_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the lab is reached directly, never by a proxy


def _get(url: str) -> object:
    with _HTTP.open(url, timeout=10) as response:
        return json.load(response)


def _node_targets(prometheus: str) -> dict[str, dict]:
    """Prometheus's active targets of the node job, by their `host` label."""
    data = _get(f"{prometheus}/api/v1/targets?state=active")["data"]["activeTargets"]
    return {t["labels"].get("host", ""): t for t in data if t["labels"].get("job") == "node"}


def _wait_up(prometheus: str, job: str, planned: dict) -> dict[str, dict]:
    """The job's active targets by host once every planned one is up."""
    deadline = time.monotonic() + UP_WITHIN_S
    while True:
        data = _get(f"{prometheus}/api/v1/targets?state=active")["data"]["activeTargets"]
        targets = {t["labels"].get("host", ""): t for t in data if t["labels"].get("job") == job}
        down = {h: (targets[h]["health"], targets[h]["lastError"]) if h in targets else "no target"
                for h in planned if h not in targets or targets[h]["health"] != "up"}
        if not down:
            return targets
        assert time.monotonic() < deadline, f"{job} targets not up within {UP_WITHIN_S:.0f} s: {down}"
        time.sleep(2)


def _wait_nodes_up(prometheus: str) -> dict[str, dict]:
    return _wait_up(prometheus, "node", NODE_TARGETS)


def _host_filesystems() -> dict[int, float]:
    """This machine's own filesystems (the ones every lab host's root and bind mounts live on), read here with
    statvfs and not through the lab: size in bytes -> free fraction (what node_exporter computes from the same
    call: f_bavail and f_blocks times the block size). Pseudo, network and FUSE filesystems are left out."""
    pseudo = {"tmpfs", "ramfs", "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "overlay", "nsfs",
              "mqueue", "debugfs", "tracefs", "securityfs", "pstore", "bpf", "autofs", "fusectl", "configfs",
              "hugetlbfs", "binfmt_misc", "efivarfs"}
    found: dict[int, float] = {}
    for line in Path("/proc/self/mounts").read_text().splitlines():
        _, mountpoint, fstype, *_ = line.split()
        if fstype in pseudo or fstype.startswith(("fuse", "nfs", "cifs", "9p")):  # local disks only: a network
            continue  # or FUSE mount of a stopped lab host could hang statvfs
        try:
            st = os.statvfs(mountpoint.replace("\\040", " "))
        except OSError:
            continue
        if st.f_blocks:
            found[st.f_blocks * st.f_frsize] = st.f_bavail / st.f_blocks
    return found


def _true_disk_alert(prometheus: str, alert: dict, host_fs: dict[int, float]) -> tuple[str | None, str]:
    """(Why a FilesystemNearlyFull is a true alert on a healthy lab, or None when it is not one; what the series
    reads, for the failure message).

    Every lab host's filesystems are this machine's disk (nspawn roots, bind mounts and the GlusterFS bricks on it),
    so on a machine whose own disk is less than 10 % free the lab's hosts rightly say so. True only when this
    machine has a filesystem, read here with statvfs, that is nearly full now (within two points of the threshold:
    files come and go while the suite runs), whose free fraction the alerted series shows (within a point), and
    whose size the series' size is a simple fraction of (1 for a local mount; for a GlusterFS volume whose bricks
    share that one disk, what the volume's layout makes of them: the lab's replica-2 volume reads 1/2, its
    distributed one 1)."""
    from clusterforge.render.monitoring.rules import FILESYSTEM_FREE_FRACTION  # FilesystemNearlyFull's threshold

    labels = alert["labels"]
    if labels.get("alertname") != "FilesystemNearlyFull":
        return None, ""
    selector = ",".join(f"{k}={json.dumps(labels[k])}" for k in ("instance", "mountpoint", "device", "fstype")
                        if k in labels)
    sizes = _query(prometheus, f"node_filesystem_size_bytes{{{selector}}}")
    avails = _query(prometheus, f"node_filesystem_avail_bytes{{{selector}}}")
    if len(sizes) != 1 or len(avails) != 1:
        return None, f"{len(sizes)} size and {len(avails)} avail series"
    size, avail = float(sizes[0]["value"][1]), float(avails[0]["value"][1])
    reads = f"{avail:.0f} of {size:.0f} bytes free; this machine: {host_fs}"
    for host_size, free in host_fs.items():
        share = Fraction(size / host_size).limit_denominator(8)
        if (free < FILESYSTEM_FREE_FRACTION + 0.02 and 0 < share <= 8 and abs(size / host_size - share) < 1e-4
                and abs(avail / size - free) < 0.01):
            return (f"{labels.get('host')}:{labels.get('mountpoint')} ({labels.get('fstype')}, {share} x this"
                    f" machine's {host_size / 2**30:.1f} GiB disk, {free:.1%} free now; the series reads"
                    f" {avail / size:.1%})"), reads
    return None, reads


def _query(prometheus: str, expr: str) -> list[dict]:
    return _get(f"{prometheus}/api/v1/query?{urllib.parse.urlencode({'query': expr})}")["data"]["result"]


def _notified(since: float) -> list[tuple[float, dict]]:
    """(arrival, alert) of every alert the lab alert receiver was delivered at or after ``since`` (Unix seconds;
    the lab's hosts share this machine's clock)."""
    return [(n["received"], alert) for n in _get(f"{RECEIVER}/notifications?since={since}")
            for alert in n["payload"]["alerts"]]


def _ends(alert: dict) -> datetime:
    """An Alertmanager alert's endsAt (nanoseconds cut to what datetime holds)."""
    text = re.sub(r"(\.\d{6})\d+", r"\1", alert["endsAt"]).replace("Z", "+00:00")
    return datetime.fromisoformat(text)


def _active(alertmanager: str, name: str) -> list[dict]:
    """The alerts of that name Alertmanager holds as active now."""
    now = datetime.now(UTC)
    return [a for a in _get(f"{alertmanager}/api/v2/alerts")
            if a["labels"].get("alertname") == name and a["status"]["state"] == "active" and _ends(a) > now]


def _node_down(alertmanager: str) -> dict[str, dict]:
    """The NodeDown alerts Alertmanager holds as active now, by host."""
    return {a["labels"].get("host", ""): a for a in _active(alertmanager, "NodeDown")}


def test_the_monitoring_playbook_converges_and_a_second_run_changes_nothing(monitoring_cluster):
    first, second = monitoring_cluster.first, monitoring_cluster.second
    assert first.ok and second.ok, second.failed_hosts or second.status
    assert monitoring_cluster.host in first.changed_per_host
    changed = {h: n for h, n in second.changed_per_host.items() if n}
    assert not changed, f"the second run changed {changed}: {second.changes}"


def test_every_planned_node_exporter_is_up_with_its_planned_identity(monitoring_cluster):
    targets = _wait_nodes_up(monitoring_cluster.prometheus)
    assert set(targets) == set(NODE_TARGETS), "one node target per planned host, no other"
    for host, planned in NODE_TARGETS.items():
        target = targets[host]
        assert target["scrapeUrl"] == f"http://{planned.address}/metrics"
        assert target["labels"]["instance"] == host
        for key, value in planned.labels:  # host, role, rack and (GPU servers) su
            assert target["labels"].get(key) == value, (host, key, target["labels"])
    # the series come from the host the labels name: node_exporter reports its own host name. (Series without a
    # host label are the Debian package's own config's, which scraped localhost from the image's boot until the
    # playbook replaced it; a restart leaves them no staleness marker, so they stay visible for 5 minutes.)
    query = urllib.parse.urlencode({"query": 'node_uname_info{job="node",host!=""}'})
    series = _get(f"{monitoring_cluster.prometheus}/api/v1/query?{query}")["data"]["result"]
    names = {s["metric"]["host"]: s["metric"]["nodename"].split(".")[0] for s in series}
    assert names == {host: host for host in NODE_TARGETS}


def test_prometheus_and_alertmanager_listen_on_the_planned_address(monitoring_cluster):
    data = _get(f"{monitoring_cluster.prometheus}/api/v1/targets?state=active")["data"]["activeTargets"]
    own = {t["labels"]["job"]: t for t in data if t["labels"]["job"] in ("prometheus", "alertmanager")}
    assert set(own) == {"prometheus", "alertmanager"}
    deadline = time.monotonic() + UP_WITHIN_S
    while any(t["health"] != "up" for t in own.values()):
        assert time.monotonic() < deadline, {j: t["lastError"] for j, t in own.items()}
        time.sleep(2)
        data = _get(f"{monitoring_cluster.prometheus}/api/v1/targets?state=active")["data"]["activeTargets"]
        own = {t["labels"]["job"]: t for t in data if t["labels"]["job"] in own}
    status = _get(f"{monitoring_cluster.alertmanager}/api/v2/status")
    assert status["cluster"]["status"] == "disabled"  # one Alertmanager, no gossip (roles/monitoring)


def test_every_gpu_server_serves_simulated_dcgm_series_with_its_planned_identity(monitoring_cluster):
    targets = _wait_up(monitoring_cluster.prometheus, "dcgm", DCGM_TARGETS)
    assert set(targets) == set(DCGM_TARGETS) == set(GPU_SERVERS)
    for host, planned in DCGM_TARGETS.items():
        assert targets[host]["scrapeUrl"] == f"http://{planned.address}/metrics"
        assert {k: targets[host]["labels"].get(k) for k, _ in planned.labels} == dict(planned.labels)
    # one temperature series per planned GPU, every one (and every series of the job) marked simulated
    series = _query(monitoring_cluster.prometheus, 'DCGM_FI_DEV_GPU_TEMP{job="dcgm"}')
    gpus = sorted((s["metric"]["host"], s["metric"]["gpu"]) for s in series)
    assert gpus == sorted((h, str(i)) for h, n in GPUS.items() for i in range(n))
    assert all(s["metric"].get("simulated") == "true" for s in series)
    # (the job's own series, up and scrape_*, are Prometheus's: only the exporter's DCGM series are asked about)
    assert _query(monitoring_cluster.prometheus, 'count({job="dcgm",__name__=~"DCGM_.+",simulated!="true"})') == []
    # and says so in its help text (Prometheus's metadata from the scrape)
    metadata = _get(f"{monitoring_cluster.prometheus}/api/v1/metadata?metric=DCGM_FI_DEV_GPU_TEMP")["data"]
    assert metadata and all(m["help"].startswith("SIMULATED") for m in metadata["DCGM_FI_DEV_GPU_TEMP"]), metadata


def test_the_api_server_kubelets_kueue_and_slurm_exporter_are_up_with_prometheus_s_token(monitoring_cluster):
    assert all(SCHEDULER_TARGETS.values()), f"inventory/lab.yaml plans every scheduler job: {SCHEDULER_TARGETS}"
    for job, planned in SCHEDULER_TARGETS.items():
        targets = _wait_up(monitoring_cluster.prometheus, job, planned)
        assert set(targets) == set(planned), job
        for host, target in planned.items():
            scheme = "http" if job == "slurm" else "https"
            assert targets[host]["scrapeUrl"] == f"{scheme}://{target.address}/metrics", (job, host)
            assert {k: targets[host]["labels"].get(k) for k, _ in target.labels} == dict(target.labels)
    # the token: readable by root and Prometheus only, and it reads metrics but no object
    rc, out, err = monitoring_cluster.sh(monitoring_cluster.host, "stat -c '%a %U %G' /etc/prometheus/kubernetes.token"
                                         " && kubectl --kubeconfig=/etc/kubernetes/admin.conf auth can-i list secrets"
                                         " --as=system:serviceaccount:kube-system:prometheus --all-namespaces; true")
    assert out.split("\n")[:2] == ["640 root prometheus", "no"], (out, err)
    # and never logged: neither playbook run's artifacts (events, stdout) hold it
    rc, token, err = monitoring_cluster.sh(monitoring_cluster.host, "cat /etc/prometheus/kubernetes.token")
    assert rc == 0 and len(token) > 100, err
    for result in (monitoring_cluster.first, monitoring_cluster.second):
        leaked = [str(p) for p in Path(result.artifact_dir).rglob("*")
                  if p.is_file() and token[:64] in p.read_text(errors="replace")]
        assert leaked == []
    # what each series is: the Kubernetes components' own and Slurm's read by cf-slurm-exporter
    assert _query(monitoring_cluster.prometheus, 'count(apiserver_request_total{job="kube-apiserver"})')
    assert _query(monitoring_cluster.prometheus, 'count by (host) (kubelet_running_pods{job="kubelet"})')
    assert _query(monitoring_cluster.prometheus, 'kueue_cluster_queue_nominal_quota{job="kueue",team!=""}')
    read = '{job="slurm",__name__=~"slurm_(queue_pending|queue_running|nodes_down|nodes_drain)"}'
    gauges = {s["metric"]["__name__"]: s for s in _query(monitoring_cluster.prometheus, read)}
    assert set(gauges) == {"slurm_queue_pending", "slurm_queue_running", "slurm_nodes_down", "slurm_nodes_drain"}
    metadata = _get(f"{monitoring_cluster.prometheus}/api/v1/metadata?metric=slurm_queue_pending")["data"]
    assert "cf-slurm-exporter" in metadata["slurm_queue_pending"][0]["help"], metadata


def _count(prometheus: str, expr: str) -> float:
    result = _query(prometheus, expr)
    return float(result[0]["value"][1]) if result else 0.0


def _grows(prometheus: str, expr: str, before: float) -> float:
    deadline = time.monotonic() + FIRE_WITHIN_S
    while (now := _count(prometheus, expr)) <= before:
        assert time.monotonic() < deadline, f"{expr} still {now} (before: {before}) after {FIRE_WITHIN_S:.0f} s"
        time.sleep(2)
    return now


def test_a_team_s_kueue_and_slurm_jobs_add_to_its_queue_wait_and_run_time_series(monitoring_cluster, kube_cluster,
                                                                                slurm_cluster):
    from kubernetes import client

    prometheus = monitoring_cluster.prometheus
    kueue_wait = f'sum(kueue_admission_wait_time_seconds_count{{job="kueue",team="{TEAM}"}})'
    slurm_wait = f'sum(slurm_job_wait_seconds_count{{job="slurm",team="{TEAM}"}})'
    slurm_run = f'sum(slurm_job_run_seconds_count{{job="slurm",team="{TEAM}"}})'
    before = {e: _count(prometheus, e) for e in (kueue_wait, slurm_wait, slurm_run)}
    started = time.monotonic()
    control = next(d for d in PLAN.devices if d.kind == "control")
    batch = client.BatchV1Api(kube_cluster.api)
    name = "cf-monitoring-queue-wait"
    container = client.V1Container(
        name="probe", image=f"{control.management_ip}:5000/clusterforge/cf-gpu-probe:1",
        resources=client.V1ResourceRequirements(requests={"nvidia.com/gpu": "1"}, limits={"nvidia.com/gpu": "1"}))
    job = client.V1Job(metadata=client.V1ObjectMeta(name=name, labels={"kueue.x-k8s.io/queue-name": TEAM}),
                       spec=client.V1JobSpec(backoff_limit=0, template=client.V1PodTemplateSpec(spec=client.V1PodSpec(
                           runtime_class_name="nvidia", restart_policy="Never", termination_grace_period_seconds=1,
                           containers=[container]))))
    batch.create_namespaced_job(TEAM, job)
    rc, out, err = slurm_cluster.sh(f"sbatch --parsable --account={TEAM} --output=/dev/null --wrap='sleep 1'")
    assert rc == 0, err
    try:
        after = {e: _grows(prometheus, e, before[e]) for e in before}
    finally:
        batch.delete_namespaced_job(name, TEAM, propagation_policy="Background", grace_period_seconds=0)
        slurm_cluster.sh(f"scancel {out.strip()}")
    # the team's series are the team's: every queue-wait series names a planned team
    teams = {s["metric"].get("team") for s in _query(prometheus, "kueue_admission_wait_time_seconds_count")
             + _query(prometheus, "slurm_job_wait_seconds_count")}
    assert teams <= set(PLAN.monitoring.teams), teams
    print(f"{TEAM}: Kueue admission waits {before[kueue_wait]:.0f} -> {after[kueue_wait]:.0f}, Slurm job waits"
          f" {before[slurm_wait]:.0f} -> {after[slurm_wait]:.0f}, Slurm run times {before[slurm_run]:.0f} ->"
          f" {after[slurm_run]:.0f}, within {time.monotonic() - started:.1f} s of the submissions")


def test_a_healthy_lab_raises_no_alert(monitoring_cluster):
    """Every target up, a rule evaluation after that: nothing pending or firing — except FilesystemNearlyFull for a
    filesystem that is this machine's own disk and really is less than 10 % free (checked here with statvfs, printed):
    the lab's hosts live on this machine's disk, and saying so is the rule doing its job."""
    _wait_nodes_up(monitoring_cluster.prometheus)
    _wait_up(monitoring_cluster.prometheus, "dcgm", DCGM_TARGETS)
    for job, planned in SCHEDULER_TARGETS.items():
        _wait_up(monitoring_cluster.prometheus, job, planned)
    evaluated_after = datetime.now(UTC)
    deadline = time.monotonic() + UP_WITHIN_S
    while True:  # every rule group evaluated since (the lab evaluates every 5 s)
        groups = _get(f"{monitoring_cluster.prometheus}/api/v1/rules")["data"]["groups"]
        if groups and all(_ends({"endsAt": g["lastEvaluation"]}) > evaluated_after for g in groups):
            break
        assert time.monotonic() < deadline, [(g["name"], g["lastEvaluation"]) for g in groups]
        time.sleep(1)
    alerts = _get(f"{monitoring_cluster.prometheus}/api/v1/alerts")["data"]["alerts"]
    host_fs = _host_filesystems()
    judged = [_true_disk_alert(monitoring_cluster.prometheus, a, host_fs) for a in alerts]
    for why in sorted({why for why, _ in judged if why is not None}):
        print(f"FilesystemNearlyFull is true here, not a false alarm: {why}")
    raised = sorted((a["labels"]["alertname"], a["state"], a["labels"].get("job", ""), a["labels"].get("host", ""),
                     a["labels"].get("mountpoint", ""), a["labels"].get("fstype", ""), reads)
                    for a, (why, reads) in zip(alerts, judged, strict=True) if why is None)
    assert raised == [], f"a healthy lab raised {raised}"
    assert [a["labels"] for a in alerts if a["labels"].get("job") == "dcgm"] == []


def _health_names_the_alert(lab_cluster, alertmanager: str, host: str, gpu: str) -> float:
    """`clusterforge health` on the hot host and another GPU server, with no alert file (the declaration's
    Alertmanager) and no host checks (--no-verify: the alert is what is asked about): the alert is evidence on the
    hot host only, critical (drain), marked simulated. Its seconds."""
    other = GPU_SERVERS[0]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "clusterforge.cli", "health", str(LAB_YAML), "--target", "lab",
                          "--ssh-config", str(lab_cluster.ssh_config), "--node", host, "--node", other,
                          "--no-verify", "--format", "json"],
                         capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-3000:]  # the worst verdict CRITICAL
    assert f"health: firing alerts from {alertmanager}\n" in run.stderr, run.stderr[-2000:]
    nodes = {n["name"]: n for n in json.loads(run.stdout)["nodes"]}
    hot = {e["check"]: e for e in nodes[host]["evidence"]}
    alert = hot["alert:GpuTemperatureCritical"]
    assert (alert["status"], alert["action"], alert.get("simulated")) == ("fail", "drain", True), alert
    assert f"GPU {gpu} on {host} is at or above 85 C" in alert["summary"] and "SIMULATED" in alert["summary"]
    assert nodes[host]["verdict"] == "CRITICAL", nodes[host]
    assert hot["alert:alertmanager"]["status"] == "ok", hot["alert:alertmanager"]
    cool = {e["check"]: e for e in nodes[other]["evidence"]}
    assert "alert:GpuTemperatureCritical" not in cool and cool["alert:alertmanager"]["status"] == "ok", cool
    return seconds


def test_a_hot_simulated_gpu_raises_gpu_temperature_critical_for_its_host_and_gpu(monitoring_cluster, lab_cluster):
    host = GPU_SERVERS[-1]  # not the host the NodeDown test stops
    gpu = str(GPUS[host] - 1)
    assert not [a for a in _active(monitoring_cluster.alertmanager, "GpuTemperatureCritical")]
    state = json.dumps({gpu: {"DCGM_FI_DEV_GPU_TEMP": 90}})
    rc, _, err = monitoring_cluster.sh(host, f"echo '{state}' > {SIM_STATE}.new && mv {SIM_STATE}.new {SIM_STATE}")
    assert rc == 0, err
    heated, heated_at = time.monotonic(), time.time()
    try:
        while True:
            alerts = _active(monitoring_cluster.alertmanager, "GpuTemperatureCritical")
            if alerts:
                break
            assert time.monotonic() - heated < FIRE_WITHIN_S, f"no GpuTemperatureCritical within {FIRE_WITHIN_S:.0f} s"
            time.sleep(1)
        fired_s = time.monotonic() - heated
        assert [(a["labels"]["host"], a["labels"]["gpu"]) for a in alerts] == [(host, gpu)]
        labels = alerts[0]["labels"]
        assert labels["severity"] == "critical" and labels["job"] == "dcgm" and labels["simulated"] == "true"
        assert alerts[0]["annotations"]["summary"] == f"GPU {gpu} on {host} is at or above 85 C"
        # the lab's GpuTemperatureCritical waits 10 s
        assert fired_s >= 8, f"GpuTemperatureCritical reached Alertmanager {fired_s:.0f} s after the state was set"
        health_s = _health_names_the_alert(lab_cluster, monitoring_cluster.alertmanager, host, gpu)
        while True:
            delivered = [(at - heated_at, a) for at, a in _notified(heated_at)
                         if a["labels"].get("alertname") == "GpuTemperatureCritical" and a["status"] == "firing"]
            if delivered:
                break
            assert time.monotonic() - heated < FIRE_WITHIN_S, "GpuTemperatureCritical not delivered"
            time.sleep(1)
        assert {(a["labels"]["host"], a["labels"]["gpu"]) for _, a in delivered} == {(host, gpu)}
    finally:
        rc, _, err = monitoring_cluster.sh(host, f"rm -f {SIM_STATE}")
    assert rc == 0, err
    cooled = time.monotonic()
    while _active(monitoring_cluster.alertmanager, "GpuTemperatureCritical"):
        assert time.monotonic() - cooled < RESOLVE_WITHIN_S, f"GpuTemperatureCritical for {host} not resolved"
        time.sleep(1)
    print(f"GpuTemperatureCritical for {host} GPU {gpu}: in Alertmanager {fired_s:.1f} s after the state was set,"
          f" delivered to the lab receiver {delivered[0][0]:.1f} s after it; resolved {time.monotonic() - cooled:.1f} s"
          f" after the state was removed; `clusterforge health` named it on {host} in {health_s:.1f} s")


def test_a_stopped_node_exporter_raises_node_down_for_its_host_and_a_restart_resolves_it(monitoring_cluster):
    host = GPU_SERVERS[0]
    planned = dict(NODE_TARGETS[host].labels)
    _wait_nodes_up(monitoring_cluster.prometheus)
    assert host not in _node_down(monitoring_cluster.alertmanager)
    rc, _, err = monitoring_cluster.sh(host, f"systemctl stop {EXPORTER_UNIT}")
    assert rc == 0, err
    stopped, stopped_at = time.monotonic(), time.time()
    try:
        while True:
            alerts = _node_down(monitoring_cluster.alertmanager)
            if host in alerts:
                break
            assert time.monotonic() - stopped < FIRE_WITHIN_S, f"no NodeDown for {host} within {FIRE_WITHIN_S:.0f} s"
            time.sleep(2)
        fired_s = time.monotonic() - stopped
        labels = alerts[host]["labels"]
        assert labels["severity"] == "critical" and labels["job"] == "node" and labels["instance"] == host
        assert {k: labels.get(k) for k in planned} == planned  # host, role, rack, su of the plan
        assert host in alerts[host]["annotations"]["summary"]
        assert set(alerts) == {host}, f"only {host}'s exporter stopped, NodeDown fired for {sorted(alerts)}"
        # the lab's NodeDown waits 15 s (less a scrape in flight and the ssh round trip when measured from here):
        # an alert much sooner would not be the rule's `for` at work
        assert fired_s >= 12, f"NodeDown reached Alertmanager {fired_s:.0f} s after the stop"
        # delivered: Alertmanager posted it to the lab alert receiver, which recorded when it arrived
        while True:
            delivered = [(at, a) for at, a in _notified(stopped_at)
                         if a["labels"].get("alertname") == "NodeDown" and a["status"] == "firing"]
            if delivered:
                break
            assert time.monotonic() - stopped < FIRE_WITHIN_S, f"NodeDown for {host} not delivered"
            time.sleep(1)
        delivered_s = delivered[0][0] - stopped_at
        assert {a["labels"]["host"] for _, a in delivered} == {host}
        assert {k: delivered[0][1]["labels"].get(k) for k in planned} == planned
        assert host in delivered[0][1]["annotations"]["summary"]
    finally:
        rc, _, err = monitoring_cluster.sh(host, f"systemctl start {EXPORTER_UNIT}")
    assert rc == 0, err
    started = time.monotonic()
    while host in _node_down(monitoring_cluster.alertmanager):
        assert time.monotonic() - started < RESOLVE_WITHIN_S, f"NodeDown for {host} not resolved"
        time.sleep(2)
    resolved_s = time.monotonic() - started
    print(f"NodeDown for {host}: in Alertmanager {fired_s:.1f} s after the stop, delivered to the lab receiver"
          f" {delivered_s:.1f} s after the stop (fault to delivery), resolved {resolved_s:.1f} s after the start")
    assert _node_targets(monitoring_cluster.prometheus)[host]["health"] == "up"
