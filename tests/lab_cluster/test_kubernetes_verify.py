"""`verify`'s Kubernetes checks (clusterforge.verify.kube_checks) on the lab's control plane: all pass on
the converged layer, and each fails when what it checks is broken on the API server (then repaired)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.lab]

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import AppsV1Api, CoreV1Api, NodeV1Api  # noqa: E402


@pytest.fixture(scope="module")
def expected():
    from clusterforge.loading import load_and_plan
    from clusterforge.paths import checkout_root
    from clusterforge.render.ansible_inventory import kubernetes_vars

    return kubernetes_vars(load_and_plan(checkout_root() / "inventory" / "lab.yaml")[1])


def _failed(kube_cluster, expected, timeout_s: float = 5.0) -> dict[str, str]:
    from clusterforge.verify.kube_checks import run_kube_checks

    return {c.name: c.detail for c in run_kube_checks(kube_cluster.api, expected, timeout_s) if not c.ok}


def test_every_check_passes_on_the_converged_layer(kube_cluster, expected):
    from clusterforge.verify.kube_checks import run_kube_checks

    checks = run_kube_checks(kube_cluster.api, expected, 60)
    assert {c.name: c.detail for c in checks if not c.ok} == {}
    assert any("simulated kubelet" in c.detail for c in checks)
    assert len(checks) == len(expected["gpu_nodes"]) + 2 + len(expected["teams"]) + 2


def test_a_node_advertising_the_wrong_gpu_count_fails(kube_cluster, expected):
    core = CoreV1Api(kube_cluster.api)
    node = expected["gpu_nodes"][0]
    patch = {"status": {"capacity": {"nvidia.com/gpu": "0"}, "allocatable": {"nvidia.com/gpu": "0"}}}
    core.patch_node_status(node["name"], patch)
    try:
        assert f"node {node['name']}" in _failed(kube_cluster, expected)
    finally:
        gpus = str(node["gpu_count"])
        core.patch_node_status(node["name"], {"status": {"capacity": {"nvidia.com/gpu": gpus},
                                                         "allocatable": {"nvidia.com/gpu": gpus}}})


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


def test_a_daemonset_off_the_gpu_nodes_fails(kube_cluster, expected):
    apps = AppsV1Api(kube_cluster.api)
    name, ns = "nvidia-device-plugin-daemonset", "kube-system"
    selector = apps.read_namespaced_daemon_set(name, ns).spec.template.spec.node_selector
    apps.patch_namespaced_daemon_set(name, ns, {"spec": {"template": {"spec": {"nodeSelector": {"no-such": "node"}}}}})
    try:
        assert f"daemonset {name}" in _failed(kube_cluster, expected)
    finally:
        apps.patch_namespaced_daemon_set(name, ns, {"spec": {"template": {"spec": {
            "nodeSelector": {**{k: None for k in ("no-such",)}, **selector}}}}})


def test_a_quota_other_than_declared_fails_and_the_probe_sees_it(kube_cluster, expected):
    core = CoreV1Api(kube_cluster.api)
    team = min(expected["teams"], key=lambda t: t["gpus"])
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
    core = CoreV1Api(kube_cluster.api)
    node = expected["gpu_nodes"][-1]["name"]
    core.delete_node(node)
    assert "not registered" in _failed(kube_cluster, expected).get(f"node {node}", "")
    again = kube_cluster.run()
    assert again.ok, again.failed_hosts
    assert f"node {node}" not in _failed(kube_cluster, expected, timeout_s=60)


# Last in the session on purpose: the API server is down for the playbook's run, and a simulated kubelet
# (kwok) does not report its pods Ready again once the node lifecycle controller has marked them not ready.
def test_a_stopped_api_server_is_drift_and_the_next_run_starts_it(kube_cluster, lab_cluster, expected):
    """What `drift`/`up` read (HostProvision's services probe) sees the stopped units; the playbook's next run
    (what `up` then does) starts them again and the API answers."""
    import subprocess
    import time

    from clusterforge.pulumi.kube.component import CONTROL_PLANE_UNITS
    from clusterforge.pulumi.providers._host_probe import inactive_units

    control = expected["control_nodes"][0]["name"]
    units = [*CONTROL_PLANE_UNITS, "kwok"]
    probe = lambda: inactive_units([control], str(lab_cluster.ssh_config), units)  # noqa: E731
    assert probe() == {}
    # killed, then held down (a plain stop waits out the API server's graceful drain of its in-flight
    # requests, over 60 s here; the kill alone would be undone by Restart=always within 2 s)
    subprocess.run(["ssh", "-F", str(lab_cluster.ssh_config), "-o", "BatchMode=yes", control,
                    "systemctl kill --signal=SIGKILL kube-apiserver etcd; systemctl stop kube-apiserver etcd"],
                   check=True, capture_output=True, timeout=120)
    try:
        found = probe()
        # what needs the API server (controller-manager, scheduler, kwok) may be restarting by now as well
        assert list(found) == [control] and found[control].endswith(" not running"), found
        assert {"etcd", "kube-apiserver"} <= set(found[control].removesuffix(" not running").split(", ")), found
    finally:
        again = kube_cluster.run()
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
    again = kube_cluster.run()
    assert again.ok, again.failed_hosts
    assert again.changed_per_host[control] > 0, again.changed_per_host
    assert on_control(started) != before  # restarted
    assert on_control("test -e /etc/kubernetes/restart-pending && echo left || echo cleared") == "cleared"
    assert kube_cluster.run().changed_per_host == {control: 0}
