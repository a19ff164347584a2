"""One GPU server of the shared lab switched from the device-plugin API to DRA and back, as an operator does it
(the node's k8s_gpu_mode in its host_vars, then the nodes' playbook on it, as `up` runs it): after each switch the
node offers its SIMULATED GPUs through one API only, the cluster holds the DRA objects only while a node uses DRA,
and a second run changes nothing. The lab is put back as it was even when an assertion fails (the session's other
tests share it)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab]
kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import CoreV1Api, ResourceV1Api  # noqa: E402

from clusterforge.verify.dra_checks import DRA_LABEL, read_slices  # noqa: E402

MARK = "app.kubernetes.io/managed-by=clusterforge"


def _plan():
    from clusterforge.loading import load_and_plan

    return load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "lab.yaml")[1]


PLAN = _plan()
GPU_NODES = {d.name: d.gpus for d in PLAN.devices if d.kind == "server" and d.gpus}
NODE = sorted(GPU_NODES)[-1]


def _offered(core: CoreV1Api) -> str:
    """The node's allocatable nvidia.com/gpu ('0' where the kubelet lists none)."""
    return str((core.read_node(NODE).status.allocatable or {}).get("nvidia.com/gpu", "0"))


def _devices(api) -> list[dict]:
    """The devices of the node's ResourceSlices."""
    return [d for s in read_slices(api) if s["spec"].get("nodeName") == NODE for d in s["spec"].get("devices") or []]


def _device_classes(api) -> list[str]:
    listed = ResourceV1Api(api).list_device_class(label_selector=MARK, _preload_content=False)
    return [c["metadata"]["name"] for c in json.loads(listed.data).get("items") or []]


def _eventually(check, timeout_s: float = 60.0):
    deadline = time.monotonic() + timeout_s
    while not (value := check()) and time.monotonic() < deadline:
        time.sleep(1)
    return value


def test_a_gpu_server_switched_to_dra_and_back_offers_its_gpus_through_one_api(kube_cluster, lab_cluster):
    core = CoreV1Api(kube_cluster.api)
    gpus = GPU_NODES[NODE]
    host_vars = Path(lab_cluster.inventory_dir) / "ansible" / "host_vars" / f"{NODE}.yml"
    original = host_vars.read_text()
    assert _offered(core) == str(gpus) and not _devices(kube_cluster.api), "the lab is not in device-plugin mode"
    try:
        host_vars.write_text(original.rstrip("\n") + "\nk8s_gpu_mode: dra\n")
        to_dra = kube_cluster.run(control_plane=False, nodes=NODE)
        assert to_dra.ok, to_dra.failed_hosts
        # the run itself waits until the kubelet offers no nvidia.com/gpu: read at once, not eventually
        assert _offered(core) == "0"
        devices = _eventually(lambda: _devices(kube_cluster.api), 60)
        assert len(devices) == gpus, devices
        assert all(d.get("attributes", {}).get("simulated", {}).get("bool") is True for d in devices)
        assert _device_classes(kube_cluster.api), "no DeviceClass although a node uses DRA"
        assert core.read_node(NODE).metadata.labels.get(DRA_LABEL[0]) == DRA_LABEL[1]
        rc, out, _ = kube_cluster.sh(NODE, "systemctl show -p LoadState -p ActiveState cf-sim-gpu-plugin.service;"
                                           " ls /etc/systemd/system /var/lib/kubelet/device-plugins")
        assert rc == 0 and "LoadState=not-found" in out and "ActiveState=inactive" in out, out
        assert "cf-sim-gpu-plugin" not in out and "cf-sim-gpu.sock" not in out, out
        again = kube_cluster.run(control_plane=False, nodes=NODE)
        assert again.ok and set(again.changed_per_host.values()) == {0}, again.changed_per_host
    finally:
        host_vars.write_text(original)
        back = kube_cluster.run(control_plane=False, nodes=NODE)
    assert back.ok, back.failed_hosts
    # the run deletes the node's ResourceSlices itself (the kubelet would only 30 s after the driver went)
    assert _devices(kube_cluster.api) == []
    assert _device_classes(kube_cluster.api) == [], "DeviceClasses left although no node uses DRA"
    assert DRA_LABEL[0] not in (core.read_node(NODE).metadata.labels or {})
    assert _eventually(lambda: _offered(core) == str(gpus), 60), _offered(core)
    rc, out, _ = kube_cluster.sh(NODE, "systemctl show -p LoadState cf-sim-dra-driver.service;"
                                       " ls /etc/systemd/system /var/lib/kubelet/plugins_registry")
    assert rc == 0 and "LoadState=not-found" in out and "cf-sim-dra-driver" not in out, out
    last = kube_cluster.run(control_plane=False, nodes=NODE)
    assert last.ok and set(last.changed_per_host.values()) == {0}, last.changed_per_host
