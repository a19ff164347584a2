"""A highly available control plane on real processes: three lab control nodes (systemd-nspawn hosts on one
management bridge, the lab's own machinery) run playbooks/kubernetes.yml's control-plane role as `up` would:
etcd in a quorum of three, an API server on each, keepalived holding the plan's virtual address and HAProxy on
each passing it to the API servers. Then the control node holding the address is powered off: the API keeps
answering through that address (a write, which needs etcd's quorum, goes through), and verify's control-plane
checks fail on that node's API server and etcd member, naming it, and on nothing else.

Before that, the plan's one GPU server joins as a real kubelet (playbooks/k8s-nodes.yml) through the virtual
address, declared with `k8s_gpu_mode: dra`: its GPUs are DRA devices published by cf-sim-dra-driver, the lab's
SIMULATED DRA kubelet plugin (the GPUs are the only simulated part), and verify's Kubernetes checks run in DRA
mode: the node's ResourceSlice holds its planned GPU count and a probe pod claiming one GPU through the team's
ResourceClaimTemplate is allocated a device of that node and exits 0.

Its own small lab, not the session's shared one (inventory/lab.yaml has one control node): inventory/lab.yaml
with three control nodes, one GPU server, no Slurm, storage or Kueue, and the management network moved to
198.18.80.0/24 so it never meets the shared lab's addresses; only the three control nodes and the GPU server
(its management interface alone) are brought up (the switches are left out: nothing here needs them). The time
play is skipped; the registry runs (the node pulls its sandbox and probe images from it).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.lab]

ROOT = Path(__file__).resolve().parents[2]
MANAGEMENT = "198.18.80.0/24"
# k8s_gpu_mode is an Ansible variable (roles/k8s_gpu; an inventory's group_vars set it): DRA here
GPU_MODE = {"k8s_gpu_mode": "dra"}


def _declaration(tmp: Path) -> Path:
    text = (ROOT / "inventory" / "lab.yaml").read_text()
    text = text.replace("name: lab\n", "name: labha\n", 1).replace("control:\n  nodes: 1", "control:\n  nodes: 3")
    text = re.sub(r"\nstorage:\n(  .*\n)+", "\n", text).replace("  storage_servers_max: 1\n", "")
    text = text.replace("    nodes: 4\n    racks: 2", "    nodes: 1\n    racks: 1").replace("  kueue: true\n", "")
    text = text.replace("schedulers: [kubernetes, slurm]", "schedulers: [kubernetes]")
    text = text.replace("slurm:\n  hardware: simulated\n", "")
    text = text.replace("  - {name: research, gpus: 6}\n  - {name: inference, gpus: 2}",
                        "  - {name: research, gpus: 2}")
    text = text.replace("supernet: 198.18.8.0/24", f"supernet: {MANAGEMENT}").replace("[198.18.8.1]", "[198.18.80.1]")
    shutil.copytree(ROOT / "inventory" / "catalog", tmp / "catalog")
    path = tmp / "labha.yaml"
    path.write_text(text)
    return path


def _accepts(address: str, port: int) -> bool:
    """Whether a TCP connection to ``address:port`` is accepted within 2 s."""
    try:
        with socket.create_connection((address, port), timeout=2):
            return True
    except OSError:
        return False


def _ssh(ssh_config: Path, host: str, command: str, timeout_s: int = 120) -> tuple[int, str, str]:
    proc = subprocess.run(["ssh", "-F", str(ssh_config), "-o", "BatchMode=yes", host, command], capture_output=True,
                          text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def ha_lab(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):
    kubernetes = pytest.importorskip("kubernetes")
    from clusterforge.lab import debris, down, missing_prerequisites, netns, up
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.lab.util import lab_dir
    from clusterforge.loading import load_and_plan
    from clusterforge.provision import run_site
    from clusterforge.provision.runner import write_private_extravars
    from clusterforge.pulumi.kube.binaries import MissingBinaries, kube_extravars, kubernetes_bin_dir
    from clusterforge.pulumi.kube.component import NODES_PLAYBOOK
    from clusterforge.pulumi.kube.kubeconfig import admin_kubeconfig
    from clusterforge.pulumi.kube.pki import make_bundle
    from clusterforge.render import render_all, render_tree, write_tree

    why = missing_prerequisites()
    if why:
        pytest.skip("the lab cannot run here: " + ", ".join(why))
    tmp = tmp_path_factory.mktemp("labha")
    _, plan, _ = load_and_plan(_declaration(tmp))
    assert plan.kubernetes is not None and plan.kubernetes.control_plane is not None
    control_plane = plan.kubernetes.control_plane
    assert control_plane.ha and control_plane.vip == "198.18.80.79"
    full = lab_topology(plan, render_tree(plan))
    controls = [h for h in full.hosts if h.name.startswith("ctl-")]
    nodes = {n.name for n in plan.kubernetes.nodes}
    assert len(nodes) == 1
    servers = [h.model_copy(update={"interfaces": tuple(i for i in h.interfaces if i.segment == "mgmt"),
                                    "routes": tuple(r for r in h.routes if r.dev == "mgmt0")})
               for h in full.hosts if h.name in nodes]
    gateway = next(c for c in full.control_extra if c.startswith("198.18.80.65/"))
    topology = full.model_copy(update={"hosts": tuple(h.model_copy(update={"fuse": False}) for h in controls)
                                       + tuple(servers),
                                       "segments": tuple(s for s in full.segments if s.name == "mgmt"),
                                       "control_extra": (gateway,)})
    try:
        extravars = kube_extravars(True, kubernetes_bin_dir(), False)
    except MissingBinaries as exc:
        pytest.fail(f"the Kubernetes binaries are not built: {exc}")
    bundle = make_bundle(plan.cluster, [ip for _, ip in control_plane.members], plan.kubernetes.service_ip,
                         control_plane.vip)
    extravars |= {"cf_lab": True, "cf_k8s_pki": bundle, **GPU_MODE}
    out = tmp / "rendered"
    write_tree(out, render_all(plan))
    if netns.list_lab(topology.name) and not (lab_dir(topology.name) / "state.json").exists() \
            and debris.live_pids(topology.name):
        pytest.skip(f"lab {topology.name!r} is running from another lab home; left alone")
    down(topology.name)
    request.addfinalizer(lambda: down(topology.name))
    started = time.monotonic()
    ssh_config = up(topology).ssh_config
    up_s = time.monotonic() - started
    private = tmp / "runner"
    inventory = out / "ansible" / "inventory.yml"

    def run():
        """The control plane's playbook, then the nodes' (the GPU server joins): (result, changed per host, s)."""
        vars_file = write_private_extravars(private, extravars)
        try:
            started = time.monotonic()
            control = run_site(inventory, private, limit="control_nodes", ssh_config=ssh_config,
                               playbook="kubernetes.yml", skip_tags="time")
            control_s = time.monotonic() - started
            if not control.ok:
                return control, control.changed_per_host, (control_s, 0.0)
            started = time.monotonic()
            joined = run_site(inventory, private, limit="servers", ssh_config=ssh_config, playbook=NODES_PLAYBOOK)
            changed = {h: control.changed_per_host.get(h, 0) + joined.changed_per_host.get(h, 0)
                       for h in {*control.changed_per_host, *joined.changed_per_host}}
            return joined, changed, (control_s, time.monotonic() - started)
        finally:
            vars_file.unlink(missing_ok=True)

    first, _, (control_s, nodes_s) = run()
    if not first.ok:
        pytest.fail(f"the Kubernetes playbooks failed on the HA lab: {first.failed_hosts or first.status}")
    second, changed, (control2_s, nodes2_s) = run()
    print(f"\nHA lab: up {up_s:.0f} s, first run: control plane {control_s:.0f} s, GPU node joining {nodes_s:.0f} s;"
          f" second: {control2_s:.0f} s + {nodes2_s:.0f} s")
    path = tmp / "kubeconfig"
    path.touch(mode=0o600)
    path.write_text(admin_kubeconfig(plan.cluster, control_plane.server, bundle))
    api = kubernetes.config.new_client_from_config(str(path))
    return plan, control_plane, (second, changed), api, ssh_config


def test_a_gpu_node_joins_through_the_virtual_address_and_gets_a_simulated_dra_gpu(ha_lab):
    """Runs before the failover test (file order): every control node is up."""
    from clusterforge.pulumi.kube.binaries import pinned_versions
    from clusterforge.render.ansible_inventory import kubernetes_vars
    from clusterforge.verify import dra_checks
    from clusterforge.verify.kube_checks import run_kube_checks, team_quotas

    plan, control_plane, _, api, ssh_config = ha_lab
    (node,) = plan.kubernetes.nodes
    # the kubelet joined through the virtual address: its bootstrap kubeconfig and the one TLS bootstrap wrote
    rc, out, err = _ssh(ssh_config, node.name, "grep -h 'server:' /etc/kubernetes/bootstrap-kubelet.conf"
                        " /etc/kubernetes/kubelet.conf")
    assert rc == 0, err
    assert out.split() == ["server:", control_plane.server] * 2
    expected = kubernetes_vars(plan)
    started = time.monotonic()
    checks = run_kube_checks(api, expected, 120, versions=pinned_versions())
    print(f"\nverify in DRA mode: {time.monotonic() - started:.1f} s")
    print("\n".join(f"{'ok' if c.ok else 'FAILED'}: {c.name}: {c.detail}" for c in checks))
    assert {c.name: c.detail for c in checks if not c.ok} == {}
    names = {c.name for c in checks}
    assert f"probe pod on {node.name}" in names and any(n.startswith("deviceclass ") for n in names)
    assert "runtimeclass nvidia" not in names, "verify did not take the DRA path"
    # each team's quota checked key by key: its GPUs and its devices of each planned DeviceClass
    classes = [c["name"] for c in expected["gpu_device_classes"]]
    assert classes and {f"quota {t['name']} {c}" for t in team_quotas(expected) for c in classes} <= names, names
    # the ResourceSlice: the node's planned GPUs, every one SIMULATED, of the class's product
    assert dra_checks.published_devices(dra_checks.read_slices(api), node.name, dra_checks.driver_of(expected)) \
        == (node.gpus, node.gpus)
    # the driver prepared the probe's claim before its container started, and said the devices are SIMULATED
    rc, out, err = _ssh(ssh_config, node.name, "journalctl -u cf-sim-dra-driver --no-pager -o cat")
    assert rc == 0, err
    assert re.search(r"prepared claim \S+/\S+ \(uid [0-9a-f-]+\): SIMULATED devices gpu-\d+ on node "
                     + re.escape(node.name), out), out[-2000:]


def test_the_api_survives_the_control_node_holding_its_address(ha_lab):
    from kubernetes import client

    from clusterforge.render.ansible_inventory import kubernetes_vars
    from clusterforge.verify.control_plane_checks import control_plane_checks

    plan, control_plane, (second, changed), api, ssh_config = ha_lab
    assert second.ok and {h: n for h, n in changed.items() if n} == {}, "a second run changed things"
    names = [name for name, _ in control_plane.members]
    for name in names:  # every kubeconfig the role wrote names the virtual address
        rc, out, err = _ssh(ssh_config, name, "grep -h 'server:' /etc/kubernetes/admin.conf"
                            " /etc/kubernetes/controller-manager.conf /etc/kubernetes/scheduler.conf")
        assert rc == 0, err
        assert out.split() == ["server:", control_plane.server] * 3
    expected = kubernetes_vars(plan)
    assert {c.name: c.detail for c in control_plane_checks(api.configuration, expected) if not c.ok} == {}
    holders = [n for n in names if _ssh(ssh_config, n, f"ip -o -4 addr show to {control_plane.vip}")[1].strip()]
    assert len(holders) == 1, f"the virtual address is on {holders}"
    down_node = holders[0]
    core = client.CoreV1Api(api)
    with contextlib.suppress(subprocess.TimeoutExpired):  # the connection may end with the host, not return
        _ssh(ssh_config, down_node, "systemctl poweroff", timeout_s=20)
    # systemd's shutdown takes seconds (more on a loaded machine) and stops the services one after another: the
    # node is down once none of its ports accepts (sshd, etcd, the API server, HAProxy); the clock for the API
    # through the address starts there
    down_ip, poweroff = dict(control_plane.members)[down_node], time.monotonic()
    ports = (22, 2379, 6443, 8443)
    while time.monotonic() < poweroff + 120 and any(_accepts(down_ip, port) for port in ports):
        time.sleep(0.5)
    still = [port for port in ports if _accepts(down_ip, port)]
    assert not still, f"{down_node} still accepts on {still} 120 s after `systemctl poweroff`"
    print(f"\n{down_node} down {time.monotonic() - poweroff:.1f} s after `systemctl poweroff`")
    started = time.monotonic()
    deadline, answered = started + 60, None
    while time.monotonic() < deadline:
        try:
            name = f"ha-probe-{int(time.monotonic())}"
            # a timeout on every call: a connection made to the powered-off node just before it went is never
            # answered nor reset (no packet of ours is unacknowledged), and would wait forever
            core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name)),
                                              _request_timeout=(3, 5))
            answered = core.read_namespaced_config_map(name, "default", _request_timeout=(3, 5)).metadata.name
            break
        except Exception:  # refused or reset while the address moves
            time.sleep(1)
    print(f"\n{down_node} down: the API answered a write through {control_plane.server} after"
          f" {time.monotonic() - started:.1f} s")
    assert answered, f"no write through {control_plane.server} within 60 s of {down_node} powering off"
    failed = {c.name: c.detail for c in control_plane_checks(api.configuration, expected) if not c.ok}
    print("\n".join(f"failed: {k}: {v}" for k, v in failed.items()))
    assert set(failed) == {f"apiserver {down_node}", f"etcd {down_node}"}
    assert down_node in failed[f"etcd {down_node}"]
