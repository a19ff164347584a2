"""Session fixtures shared by every test directory: the lab of inventory/lab.yaml and its converge.

``lab_cluster``: inventory/lab.yaml rendered, brought up as real hosts (systemd-nspawn, FRR,
bridges), torn down at the end of the session (also on failure); skips where the lab cannot run.
``lab_converged``: the site playbook run twice on the lab's servers through ansible-runner.
``monitoring_cluster``: playbooks/monitoring.yml run twice on the lab's control node after the converge.

The test session keeps its labs in their own home (``<lab home>-test``, or $CLUSTERFORGE_TEST_LAB_HOME),
sharing only the rootfs and apt caches, and never touches a lab another home runs (``make up``'s):
a lab test that would collide with one skips and says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAB_INVENTORY = ROOT / "inventory" / "lab.yaml"
LAB_EXTRAVARS = {"cf_lab": True}
SHARED_CACHES = ("rootfs", "aptcache", "images")


def _test_lab_home() -> Path:
    """Point CLUSTERFORGE_LAB_HOME (this process and every child) at the tests' own lab home."""
    from clusterforge.lab.util import lab_home

    shared = lab_home()
    home = Path(os.environ.get("CLUSTERFORGE_TEST_LAB_HOME") or shared.with_name(shared.name + "-test"))
    if home.resolve() != shared.resolve():
        home.mkdir(parents=True, exist_ok=True)
        for cache in SHARED_CACHES:  # downloaded once, used by both homes
            (shared / cache).mkdir(parents=True, exist_ok=True)
            link = home / cache
            if not link.is_symlink() and not link.exists():
                link.symlink_to(shared / cache)
    os.environ["CLUSTERFORGE_LAB_HOME"] = str(home)
    os.environ["CLUSTERFORGE_TEST_LAB_HOME"] = str(home)  # a nested test session keeps this home
    return home


TEST_LAB_HOME = _test_lab_home()


# The session lab (inventory/lab.yaml: containers with etcd, an API server, kubelets, Kueue, Prometheus scraping
# every 5 s, slurmd) keeps running from its first test to the session's end. Its modules run last, so every
# other test runs on a machine the idle lab does not load; whole modules move, keeping each module's order and
# its module-scoped fixtures set up once.
SESSION_LAB_FIXTURES = frozenset({"lab_cluster", "lab_converged", "kube_cluster", "slurm_cluster",
                                  "monitoring_cluster", "lab_inventory"})


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    lab_modules = {item.module for item in items if SESSION_LAB_FIXTURES & set(getattr(item, "fixturenames", ()))}
    items[:] = ([item for item in items if item.module not in lab_modules]
                + [item for item in items if item.module in lab_modules])


def skip_if_lab_owned_elsewhere(lab: str) -> None:
    """Skip when a lab of this name runs from another home: taking it down would break someone's lab.
    One whose processes are all gone (killed without `down`) is debris, which `up` clears."""
    from clusterforge.lab import debris, netns
    from clusterforge.lab.util import lab_dir

    if netns.list_lab(lab) and not (lab_dir(lab) / "state.json").exists() and debris.live_pids(lab):
        pytest.skip(f"lab {lab!r} is running from another lab home (`make up`?); the tests leave it alone"
                    f" (take it down with `make down` to run the lab tests)")


@dataclass(frozen=True)
class LabCluster:
    inventory_dir: Path  # the render root: ansible/, switches/, assets.csv
    ssh_config: Path
    hosts: tuple[str, ...]  # servers
    name: str
    topology: object


@dataclass(frozen=True)
class Converged:
    first: object  # clusterforge.provision.ProvisionResult
    second: object
    inventory_dir: Path
    ssh_config: Path


def _booting_images(plan, tree, topology):
    """The lab's GPU servers and control node boot their golden images, as `clusterforge up` has them do: each
    built here once by its image playbook on a builder host (the roles from a bare rootfs), then found in the
    shared cache."""
    from clusterforge.pulumi.images import booting, lab_images
    from clusterforge.pulumi.providers.host_image import build_image

    specs = lab_images(plan, tree)
    for spec in specs:
        build_image(spec.name, spec.profile, TEST_LAB_HOME / "image-work" / spec.name,
                    {**spec.extravars, **LAB_EXTRAVARS}, playbook=spec.playbook)
    return booting(topology, specs)


@pytest.fixture(scope="session")
def lab_cluster(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> LabCluster:
    from clusterforge.lab import down, missing_prerequisites, up
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.loading import load_and_plan
    from clusterforge.render import render_all, render_tree, write_tree

    why = missing_prerequisites()
    if why:
        pytest.skip("the lab cannot run here: " + ", ".join(why))
    spec, plan, _ = load_and_plan(LAB_INVENTORY)
    files = render_all(plan)
    out = tmp_path_factory.mktemp("lab-cluster") / "rendered"
    write_tree(out, files)
    topology = _booting_images(plan, render_tree(plan), lab_topology(plan, render_tree(plan)))
    skip_if_lab_owned_elsewhere(topology.name)
    down(topology.name)  # start from the base image, whatever an earlier run left
    request.addfinalizer(lambda: down(topology.name))
    result = up(topology)
    servers = tuple(d.name for d in plan.devices if d.kind == "server")
    return LabCluster(out, result.ssh_config, servers, topology.name, topology)


def _lab_ssh(lab_cluster: LabCluster, host: str, command: str, timeout_s: int) -> tuple[int, str, str]:
    """One command on a lab host over the lab's SSH config: (rc, stdout, stderr)."""
    import subprocess

    proc = subprocess.run(["ssh", "-F", str(lab_cluster.ssh_config), "-o", "BatchMode=yes", host, command],
                          capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout, proc.stderr


def _run_twice(run, what: str):
    """A playbook run and its second run (the idempotence the tests check); a failed first run fails the session's
    fixture with the hosts that failed."""
    first = run()
    if not first.ok:
        pytest.fail(f"{what} failed on the lab: {first.failed_hosts or first.status}")
    return first, run()


@pytest.fixture(scope="session")
def lab_converged(lab_cluster: LabCluster, tmp_path_factory: pytest.TempPathFactory) -> Converged:
    from clusterforge.provision import run_site

    private = tmp_path_factory.mktemp("ansible-runner")
    inventory = lab_cluster.inventory_dir / "ansible" / "inventory.yml"
    first = run_site(inventory, private, extravars=LAB_EXTRAVARS, ssh_config=lab_cluster.ssh_config)
    if not first.ok:
        pytest.fail(f"the site playbook failed on the lab: {first.failed_hosts or first.status}")
    second = run_site(inventory, private, extravars=LAB_EXTRAVARS, ssh_config=lab_cluster.ssh_config)
    return Converged(first, second, lab_cluster.inventory_dir, lab_cluster.ssh_config)


@dataclass(frozen=True)
class KubeRun:
    """Both Kubernetes playbooks' run: ok when both are; changed tasks added up per host."""

    ok: bool
    failed_hosts: dict
    changed_per_host: dict
    status: str


@dataclass(frozen=True)
class KubeCluster:
    """The lab's Kubernetes (playbooks/kubernetes.yml on ctl-01, with Kueue where inventory/lab.yaml says
    kubernetes.kueue, then playbooks/k8s-nodes.yml joining the GPU servers with real containerd and kubelets; both
    run twice) and a client of it."""

    first: KubeRun
    second: KubeRun
    kubeconfig: Path  # 0600, in the session's temporary directory (a throwaway CA of this session)
    api: object  # kubernetes.client.ApiClient
    run: object  # (control_plane=True, nodes="servers") -> KubeRun: runs the playbooks again (fault tests)
    sh: object  # (host, command) -> (rc, stdout, stderr) over the lab's SSH


@pytest.fixture(scope="session")
def kube_cluster(lab_cluster: LabCluster, tmp_path_factory: pytest.TempPathFactory) -> KubeCluster:
    """One cluster per test session, shared by every Kubernetes test (never one per test)."""

    kubernetes = pytest.importorskip("kubernetes")
    from clusterforge.loading import load_and_plan
    from clusterforge.provision import run_site
    from clusterforge.provision.runner import write_private_extravars
    from clusterforge.pulumi.kube.binaries import MissingBinaries, kube_extravars, kubernetes_bin_dir
    from clusterforge.pulumi.kube.component import NODES_PLAYBOOK
    from clusterforge.pulumi.kube.kubeconfig import admin_kubeconfig
    from clusterforge.pulumi.kube.pki import make_bundle

    _, plan, _ = load_and_plan(LAB_INVENTORY)
    # the extra vars `up` passes (Kueue where the declaration runs it: inventory/lab.yaml's kubernetes.kueue)
    try:
        extravars = kube_extravars(True, kubernetes_bin_dir(), plan.queueing is not None and plan.queueing.enabled)
    except MissingBinaries as exc:
        pytest.fail(f"the lab's Kubernetes cannot be built: {exc}")
    control = next(d for d in plan.devices if d.kind == "control")
    assert plan.kubernetes is not None
    bundle = make_bundle(plan.cluster, [control.management_ip], plan.kubernetes.service_ip)
    extravars |= {**LAB_EXTRAVARS, "cf_k8s_pki": bundle}
    private = tmp_path_factory.mktemp("kube-runner")
    inventory = lab_cluster.inventory_dir / "ansible" / "inventory.yml"

    def run(control_plane: bool = True, nodes: str | None = "servers") -> KubeRun:
        """Both playbooks as `up` runs them; a fault test may run only the half its fault is in (the control
        plane's playbook alone, or the nodes' playbook limited to some nodes: ``nodes=None`` skips it)."""
        # the secrets only in env/extravars (0600, for the run), as HostProvision passes them
        vars_file = write_private_extravars(private, extravars)
        try:
            changed: dict = {}
            last = None
            if control_plane:
                last = run_site(inventory, private, limit="control_nodes", extravars=None,
                                ssh_config=lab_cluster.ssh_config, playbook="kubernetes.yml")
                changed.update(last.changed_per_host)
                if not last.ok:
                    return KubeRun(False, dict(last.failed_hosts), changed, last.status)
            if nodes is not None:
                last = run_site(inventory, private, limit=nodes, extravars=None, ssh_config=lab_cluster.ssh_config,
                                playbook=NODES_PLAYBOOK)
                for host, count in last.changed_per_host.items():
                    changed[host] = changed.get(host, 0) + count
            assert last is not None, "run() with neither playbook"
            return KubeRun(last.ok, dict(last.failed_hosts), changed, last.status)
        finally:
            vars_file.unlink(missing_ok=True)

    def sh(host: str, command: str) -> tuple[int, str, str]:
        return _lab_ssh(lab_cluster, host, command, timeout_s=180)

    first, second = _run_twice(run, "the Kubernetes playbooks")
    path = tmp_path_factory.mktemp("kube") / "kubeconfig"
    path.touch(mode=0o600)
    assert plan.kubernetes is not None and plan.kubernetes.control_plane is not None
    path.write_text(admin_kubeconfig(plan.cluster, plan.kubernetes.control_plane.server, bundle))
    api = kubernetes.config.new_client_from_config(str(path))
    return KubeCluster(first, second, path, api, run, sh)


@dataclass(frozen=True)
class SlurmCluster:
    """The lab's Slurm (playbooks/slurm.yml on ctl-01 and the GPU servers, run twice) and a runner on ctl-01."""

    first: object  # ProvisionResult of the first run
    second: object
    munge_key: str  # this session's throwaway key
    controller: str
    run: object  # (limit=both groups) -> ProvisionResult: runs the playbook again (fault tests)
    sh: object  # (command) -> (rc, stdout, stderr) on the controller


@pytest.fixture(scope="session")
def slurm_cluster(lab_cluster: LabCluster, tmp_path_factory: pytest.TempPathFactory) -> SlurmCluster:
    """One Slurm per test session, shared by every Slurm test (never one per test)."""

    from clusterforge.loading import load_and_plan
    from clusterforge.provision import run_site
    from clusterforge.provision.runner import write_private_extravars
    from clusterforge.pulumi.providers.munge_key import make_key
    from clusterforge.pulumi.slurm.wiring import SLURM_PLAYBOOK, slurm_extravars

    _, plan, _ = load_and_plan(LAB_INVENTORY)
    if plan.slurm is None:
        pytest.skip(f"{LAB_INVENTORY.name} does not ask for Slurm")
    control = plan.slurm.controllers[0]
    key = make_key()
    extravars = {**LAB_EXTRAVARS, **slurm_extravars(lab=True), "cf_slurm_munge_key": key}
    private = tmp_path_factory.mktemp("slurm-runner")
    inventory = lab_cluster.inventory_dir / "ansible" / "inventory.yml"

    def run(limit: str = "slurm_controller:slurm_nodes"):
        # the key only in env/extravars (0600, for the run), as HostProvision passes it
        vars_file = write_private_extravars(private, extravars)
        try:
            return run_site(inventory, private, limit=limit, extravars=None, ssh_config=lab_cluster.ssh_config,
                            playbook=SLURM_PLAYBOOK)
        finally:
            vars_file.unlink(missing_ok=True)

    def sh(command: str) -> tuple[int, str, str]:
        return _lab_ssh(lab_cluster, control.name, command, timeout_s=120)

    first, second = _run_twice(run, "playbooks/slurm.yml")
    return SlurmCluster(first, second, key, control.name, run, sh)


@dataclass(frozen=True)
class MonitoringCluster:
    """The lab's monitoring (playbooks/monitoring.yml on ctl-01, run twice after the site converge: node_exporter
    there, Prometheus and Alertmanager with the rendered monitoring/ files) and where to reach it."""

    first: object  # ProvisionResult of the first run
    second: object
    host: str  # the monitoring host (plan.monitoring.host)
    prometheus: str  # http://<management address>:9090
    alertmanager: str  # http://<management address>:9093
    sh: object  # (host, command) -> (rc, stdout, stderr) over the lab's SSH


@pytest.fixture(scope="session")
def monitoring_cluster(lab_converged: Converged, lab_cluster: LabCluster, tmp_path_factory: pytest.TempPathFactory,
                       request: pytest.FixtureRequest) -> MonitoringCluster:
    """One monitoring per test session (never one per test): the GPU and storage servers' node_exporter comes
    from the site converge, the control node's and the monitoring host's daemons from the monitoring playbook.
    As in `up`, it runs after the schedulers the lab plans (the session's kube_cluster and slurm_cluster): it
    makes Prometheus's service account in that Kubernetes, and scrapes their API server, kubelets, Kueue and
    cf-slurm-exporter."""

    from clusterforge.loading import load_and_plan
    from clusterforge.provision import run_site

    _, plan, _ = load_and_plan(LAB_INVENTORY)
    if plan.monitoring is None:
        pytest.skip(f"{LAB_INVENTORY.name} plans no monitoring")
    if plan.kubernetes is not None and "kubernetes" in plan.schedulers:
        request.getfixturevalue("kube_cluster")
    if plan.slurm is not None:
        request.getfixturevalue("slurm_cluster")
    private = tmp_path_factory.mktemp("monitoring-runner")
    inventory = lab_cluster.inventory_dir / "ansible" / "inventory.yml"

    def run():
        return run_site(inventory, private, limit="control_nodes", extravars=LAB_EXTRAVARS,
                        ssh_config=lab_cluster.ssh_config, playbook="monitoring.yml")

    def sh(host: str, command: str) -> tuple[int, str, str]:
        return _lab_ssh(lab_cluster, host, command, timeout_s=120)

    first, second = _run_twice(run, "playbooks/monitoring.yml")
    monitoring = plan.monitoring
    return MonitoringCluster(first, second, monitoring.host,
                             f"http://{monitoring.address}:{monitoring.prometheus_port}",
                             f"http://{monitoring.address}:{monitoring.alertmanager_port}", sh)
