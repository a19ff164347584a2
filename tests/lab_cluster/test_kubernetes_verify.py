"""`verify`'s Kubernetes checks (clusterforge.verify.kube_checks) on the lab's control plane: all pass on
the converged layer, and each fails when what it checks is broken on the API server (then repaired)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.lab]

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import CoreV1Api, NodeV1Api  # noqa: E402


@pytest.fixture(scope="module")
def expected():
    from clusterforge.loading import load_and_plan
    from clusterforge.paths import checkout_root
    from clusterforge.render.ansible_inventory import kubernetes_vars

    return kubernetes_vars(load_and_plan(checkout_root() / "inventory" / "lab.yaml")[1])


def _failed(kube_cluster, expected, timeout_s: float = 5.0) -> dict[str, str]:
    from clusterforge.verify.kube_checks import run_kube_checks

    # without the cluster DNS's probe pod: no fault below is in DNS (test_cluster_dns.py breaks nothing)
    return {c.name: c.detail for c in run_kube_checks(kube_cluster.api, expected, timeout_s, pinned_versions(),
                                                      dns=False) if not c.ok}


def pinned_versions():
    from clusterforge.pulumi.kube.binaries import pinned_versions as pinned

    return pinned()


def test_every_check_passes_on_the_converged_layer(kube_cluster, expected):
    from clusterforge.verify.kube_checks import run_kube_checks

    checks = run_kube_checks(kube_cluster.api, expected, 120, versions=pinned_versions())
    assert {c.name: c.detail for c in checks if not c.ok} == {}
    assert any(c.name == "device plugin" and "SIMULATED" in c.detail for c in checks)
    assert all("ran and exited 0: allocated 1 GPU(s)" in c.detail for c in checks if c.name.startswith("probe pod"))
    # each control node's API server and etcd member, the API address; a node, its probe pod, the RuntimeClass,
    # the device plugin, a quota per team, the over-quota probe; the cluster DNS's Service, Deployment and probe
    members = [m["name"] for m in expected["control_plane"]["members"]]
    assert {c.name for c in checks} >= {f"{what} {m}" for m in members for what in ("apiserver", "etcd")}
    assert (2 * len(members) + 1 + 2 * len(expected["gpu_nodes"]) + 2 + len(expected["teams"]) + 1 + 3) == len(checks)
    domain = expected["dns"]["domain"]
    assert any(c.name == f"dns resolves kubernetes.default.svc.{domain}" and c.detail.endswith(expected["service_ip"])
               for c in checks)


RESTART = "systemctl restart cf-sim-gpu-plugin"


def test_a_node_advertising_the_wrong_gpu_count_fails(kube_cluster, expected):
    """The device plugin on one node advertises one GPU (a drop-in): the kubelet reports it, the check fails;
    without the drop-in the planned count is back."""
    import time

    node = expected["gpu_nodes"][0]
    drop = "/run/systemd/system/cf-sim-gpu-plugin.service.d"
    rc, _, err = kube_cluster.sh(node["name"], f"mkdir -p {drop} && printf '[Service]\\nExecStart=\\n"
                                 f"ExecStart=/usr/local/bin/cf-sim-gpu-plugin --count=1 --id-prefix=WRONG\\n'"
                                 f" > {drop}/count.conf && systemctl daemon-reload && {RESTART}")
    assert rc == 0, err
    try:
        deadline, failed = time.monotonic() + 60, {}
        while f"node {node['name']}" not in failed and time.monotonic() < deadline:
            failed = _failed(kube_cluster, expected)
            time.sleep(2)
        assert "nvidia.com/gpu 1, planned 2" in failed[f"node {node['name']}"]
    finally:
        kube_cluster.sh(node["name"], f"rm -rf {drop} && systemctl daemon-reload && {RESTART}")
    deadline = time.monotonic() + 60
    while f"node {node['name']}" in _failed(kube_cluster, expected) and time.monotonic() < deadline:
        time.sleep(2)
    assert f"node {node['name']}" not in _failed(kube_cluster, expected)


def test_a_missing_runtime_class_fails(kube_cluster, expected):
    api = NodeV1Api(kube_cluster.api)
    saved = api.read_runtime_class("nvidia")
    api.delete_runtime_class("nvidia")
    try:
        assert "runtimeclass nvidia" in _failed(kube_cluster, expected)
    finally:
        saved.metadata = kubernetes.client.V1ObjectMeta(name="nvidia", labels=saved.metadata.labels,
                                                        annotations=saved.metadata.annotations)
        api.create_runtime_class(saved)


def test_a_node_whose_container_runtime_is_stopped_fails_its_probe_pod(kube_cluster, expected):
    node = expected["gpu_nodes"][-1]["name"]
    rc, _, err = kube_cluster.sh(node, "systemctl stop containerd")
    assert rc == 0, err
    try:
        failed = _failed(kube_cluster, expected, timeout_s=20)
        assert f"probe pod on {node}" in failed, failed
    finally:
        kube_cluster.sh(node, "systemctl start containerd")


def test_a_quota_other_than_declared_fails_and_the_probe_sees_it(kube_cluster, expected):
    from clusterforge.verify.kube_checks import team_quotas

    core = CoreV1Api(kube_cluster.api)
    team = min(team_quotas(expected), key=lambda t: t["gpus"])  # the declared quota, or Kueue's ceiling
    core.patch_namespaced_resource_quota("gpu-quota", team["name"],
                                         {"spec": {"hard": {"requests.nvidia.com/gpu": "100"}}})
    try:
        failed = _failed(kube_cluster, expected)
        assert f"quota {team['name']}" in failed
        assert f"probe over quota ({team['name']})" in failed  # the over-quota pod was admitted
    finally:
        core.patch_namespaced_resource_quota("gpu-quota", team["name"],
                                             {"spec": {"hard": {"requests.nvidia.com/gpu": str(team["gpus"])}}})


def test_a_node_that_left_is_reported_and_the_next_run_registers_it(kube_cluster, expected):
    """A deleted Node is not registered again by its kubelet on its own (a kubelet registers when it starts);
    the next run finds it missing and restarts that kubelet, which registers the node with its labels."""
    core = CoreV1Api(kube_cluster.api)
    node = expected["gpu_nodes"][-1]["name"]
    core.delete_node(node)
    assert "not registered" in _failed(kube_cluster, expected).get(f"node {node}", "")
    again = kube_cluster.run(control_plane=False, nodes=node)  # the nodes' playbook on that node, as `up` runs it
    assert again.ok, again.failed_hosts
    assert again.changed_per_host[node] > 0
    assert f"node {node}" not in _failed(kube_cluster, expected, timeout_s=90)


def test_a_stopped_api_server_is_drift_and_the_next_run_starts_it(kube_cluster, lab_cluster, expected):
    """What `drift`/`up` read (HostProvision's services probe) sees the stopped units; the playbook's next run
    (what `up` then does) starts them again and the API answers."""
    import subprocess
    import time

    from clusterforge.pulumi.kube.component import CONTROL_PLANE_UNITS
    from clusterforge.pulumi.providers._host_probe import inactive_units

    control = expected["control_nodes"][0]["name"]
    units = list(CONTROL_PLANE_UNITS)
    probe = lambda: inactive_units([control], str(lab_cluster.ssh_config), units)  # noqa: E731
    assert probe() == {}
    # killed, then held down (a plain stop waits out the API server's graceful drain of its in-flight
    # requests, over 60 s here; the kill alone would be undone by Restart=always within 2 s)
    subprocess.run(["ssh", "-F", str(lab_cluster.ssh_config), "-o", "BatchMode=yes", control,
                    "systemctl kill --signal=SIGKILL kube-apiserver etcd; systemctl stop kube-apiserver etcd"],
                   check=True, capture_output=True, timeout=120)
    try:
        found = probe()
        # what needs the API server (controller-manager, scheduler) may be restarting by now as well
        assert list(found) == [control] and found[control].endswith(" not running"), found
        assert {"etcd", "kube-apiserver"} <= set(found[control].removesuffix(" not running").split(", ")), found
    finally:
        again = kube_cluster.run(nodes=None)  # the control plane's playbook: what starts its units
    assert again.ok, again.failed_hosts
    deadline = time.monotonic() + 60
    while probe() and time.monotonic() < deadline:
        time.sleep(2)
    assert probe() == {}
    assert CoreV1Api(kube_cluster.api).read_node(expected["gpu_nodes"][0]["name"]).metadata.name


def test_a_restart_recorded_by_a_killed_run_is_done_by_the_next(kube_cluster, lab_cluster, expected):
    """A run killed after writing a changed file and before restarting its service leaves the restart recorded
    on the host (roles/k8s_control_plane: restart-pending); the next run, which finds every file unchanged,
    restarts that service, clears the record and reports the change; the run after it changes nothing."""
    import subprocess

    control = expected["control_nodes"][0]["name"]

    def on_control(command: str) -> str:
        return subprocess.run(["ssh", "-F", str(lab_cluster.ssh_config), "-o", "BatchMode=yes", control, command],
                              check=True, capture_output=True, text=True, timeout=60).stdout.strip()

    started = "systemctl show --property=ActiveEnterTimestampMonotonic --value kube-scheduler"
    before = on_control(started)
    on_control("printf 'kube-scheduler\\n' > /etc/kubernetes/restart-pending")  # as a killed run leaves it
    again = kube_cluster.run(nodes=None)  # the control plane's playbook, the one that records restarts
    assert again.ok, again.failed_hosts
    assert again.changed_per_host[control] > 0, again.changed_per_host
    assert on_control(started) != before  # restarted
    assert on_control("test -e /etc/kubernetes/restart-pending && echo left || echo cleared") == "cleared"
    assert set(kube_cluster.run(nodes=None).changed_per_host.values()) == {0}
