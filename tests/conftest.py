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

import contextlib
import gc
import json
import os
import sys
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import clusterforge  # noqa: F401 (first: it turns gRPC's fork handlers off before pulumi loads gRPC)

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
                with contextlib.suppress(FileExistsError):  # made a moment ago by another pytest process
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

# Two pytest processes (`make test`: pytest-xdist, -n 2 --dist loadgroup; CF_TEST_WORKERS=0 runs one). Each
# module runs whole on one worker (pytest_xdist_make_scheduler below); modules that hold the same machine resource run
# on the same worker, one after another, as they do in one process: a session fixture is set up once per worker
# that uses it, and a lab name, an address block or a fixed port is the machine's, not the process's. A resource
# is named by the fixtures that hold it (RESOURCE_FIXTURES) or, where no fixture names it, by the module
# (RESOURCE_MODULES). docs/guide/testing.md lists the groups and what was checked.
LAB = "lab"  # the shared lab of inventory/lab.yaml and everything that must run on its worker
RESOURCE_FIXTURES: dict[str, tuple[str, ...]] = {
    # "<directory of the conftest.py that defines it>::<fixture>"
    **{f"tests::{name}": (LAB,) for name in SESSION_LAB_FIXTURES},
    "tests/roles::lab_inventory": (LAB,),
    # the verify tests' lab cfverify (198.19.64.0/19), up for the session; tests/verify/test_lab_checks.py uses it
    # and the shared lab, so it lives on the shared lab's worker
    "tests/verify::fresh_lab": ("lab-cfverify",),
    "tests/lab::lab": ("lab-cftest",),  # tests/lab's synthetic lab cftest (198.19.16.0/20, 198.19.28-30)
    "tests/kube::loopback_api": ("loopback-api",),  # free ports: safe twice, but started once, not per worker
    "tests/state::pg": ("postgres",),  # free port, temp dir: safe twice, but started once
    "tests/sot::nautobot": ("nautobot",),  # free ports, temp dir: one module, ~6 min set-up
}
RESOURCE_MODULES: dict[str, tuple[str, ...]] = {
    # cfverif2 (tests/verify_lab_copy.py: the verify lab in 198.19.96.0/19), each bringing it up and down
    "tests/lab/test_lab_replace.py": ("lab-cfverif2",),
    "tests/lab/test_lab_roll.py": ("lab-cfverif2",),
    "tests/pulumi/test_pulumi_lab_drift.py": ("lab-cfverif2",),
    "tests/pulumi/test_pulumi_lab_interrupt.py": ("lab-cfverif2",),
    # the image builder's lab (lab.builder: img-<name> in 198.19.254.0/24; the shared lab's fixture builds its
    # images there when the cache lacks them) and 198.19.253.0/24 for the image's own lab
    "tests/lab/test_lab_image.py": (LAB, "net-198.19.253"),
    # the provisioning network in 198.19.253.0/24 and its hosts' 198.19.252.0/24; a fixed client namespace
    "tests/lab/test_metal_bootnet.py": ("net-198.19.253", "net-198.19.252"),
    # labs killed on purpose in 198.19.252.0/24; address_holders() sees every link holding an overlapping address
    "tests/lab/test_lab_debris.py": ("net-198.19.252",),
}


def _module_path(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _resources(item: pytest.Item) -> set[str]:
    held = set(RESOURCE_MODULES.get(_module_path(item), ()))
    info = getattr(item, "_fixtureinfo", None)
    for name, defs in (info.name2fixturedefs.items() if info is not None else ()):
        held.update(RESOURCE_FIXTURES.get(f"{defs[-1].baseid}::{name}", ()))
    return held


def module_groups(items: list[pytest.Item]) -> dict[str, str]:
    """Module path -> its group (modules that share a resource, transitively, share a group); a module that
    holds none is in no group. The shared lab's group is named LAB."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    held: dict[str, set[str]] = {}
    for item in items:
        held.setdefault(_module_path(item), set()).update(f"r:{r}" for r in _resources(item))
    for module, resources in held.items():
        for r in resources:
            parent[find(r)] = find(f"m:{module}")
    members: dict[str, list[str]] = {}
    for module, resources in held.items():
        if resources:
            members.setdefault(find(f"m:{module}"), []).append(module)
    groups = {}
    for modules in members.values():
        resources = {r[2:] for m in modules for r in held[m]}
        name = LAB if LAB in resources else "+".join(sorted(resources))
        groups.update((m, name) for m in modules)
    return groups


# pytest-xdist's loadgroup names a grouped test "<nodeid>@<group>" by setting Item._nodeid, which pytest 9.2 no longer
# reads (Node.nodeid comes from Node._id): its xdist_group marks group nothing here. So a worker writes each module's
# group to GROUPS_FILE (a path the controller chose and its workers inherit) and the controller's scheduler reads it.
GROUPS_FILE = "CF_TEST_GROUPS_FILE"
# xdist's modes that hand tests out (not "each", which runs every test on every worker): all get the scheduler below,
# so `pytest -n 2 tests/...` with any of them keeps the groups together
DISTRIBUTING = frozenset({"load", "loadscope", "loadfile", "loadgroup", "worksteal"})


def _groups_file(pid: int) -> Path:
    return Path(tempfile.gettempdir()) / f"cf-test-groups-{pid}.json"


def _jinja_module_proxies() -> bool:
    return any(isinstance(m, weakref.ProxyType) and k.startswith("_jinja2_module_templates_")
               for k, m in list(sys.modules.items()))


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Collect pyavd's dead template loaders before the next test runs.

    jinja2's ModuleLoader (pyavd's templater) puts a weak proxy of its package into sys.modules and
    leaves it to the loader's death to remove it; pyavd's loaders die in reference cycles, so the
    proxies stay until a cyclic collection. Hypothesis scans sys.modules for constants: a collection
    in the middle of that scan killed a proxy it held and failed an unrelated property test with
    ReferenceError (a clean-clone run, two workers). Collected here, only when such a proxy exists."""
    if _jinja_module_proxies():
        gc.collect()


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    if config.getvalue("dist") in DISTRIBUTING:  # the controller of a parallel run, before its workers start
        path = _groups_file(os.getpid())
        os.environ[GROUPS_FILE] = str(path)
        config.add_cleanup(lambda: path.unlink(missing_ok=True))


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    lab_modules = {item.module for item in items if SESSION_LAB_FIXTURES & set(getattr(item, "fixturenames", ()))}
    if not hasattr(config, "workerinput"):  # one process: the shared lab's modules last
        items[:] = ([item for item in items if item.module not in lab_modules]
                    + [item for item in items if item.module in lab_modules])
        return
    # a pytest-xdist worker: every worker collects the same, in this order, which the controller schedules in:
    # the shared lab's group first (its worker starts on it at once and holds it to the end), then the other
    # groups and the modules with lab tests, then those with slow or Pulumi tests, then the rest
    groups = module_groups(items)
    for item in items:
        if _module_path(item) in groups:
            item.add_marker(pytest.mark.xdist_group(groups[_module_path(item)]))

    def rank(item: pytest.Item) -> int:
        group = groups.get(_module_path(item))
        if group == LAB:
            return 0
        if group is not None or item.get_closest_marker("lab"):
            return 1
        return 2 if item.get_closest_marker("slow") or item.get_closest_marker("pulumi") else 3

    unit_rank: dict[str, int] = {}  # a group or a module: what the scheduler hands out whole
    for item in items:
        unit = groups.get(_module_path(item), _module_path(item))
        unit_rank[unit] = min(unit_rank.get(unit, 3), rank(item))
    items.sort(key=lambda item: unit_rank[groups.get(_module_path(item), _module_path(item))])  # stable
    target = os.environ.get(GROUPS_FILE)  # set by this worker's controller (a nested run's worker only inherits it)
    if target and Path(target) == _groups_file(os.getppid()):
        mine = Path(f"{target}.{config.workerinput['workerid']}")  # type: ignore[attr-defined]
        mine.write_text(json.dumps(groups))
        mine.replace(target)  # every worker writes the same; whole files only


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Each module whole: a module in a group (module_groups, from the file the workers write) runs with its group,
    any other module whole by itself (xdist's own loadgroup would spread a module's tests over both workers, setting
    its module fixtures up twice). The work goes out in collection order (pytest_collection_modifyitems above).
    `make test` asks for --dist loadgroup; every other mode that hands tests out gets this too."""
    if config.getvalue("dist") not in DISTRIBUTING:
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LoadModuleScheduling(LoadScopeScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):  # xdist's name of a grouped test, "<nodeid>@<group>"
                return nodeid.rsplit("@", 1)[-1]
            if self.groups is None:  # first asked once every worker has collected: the file is there
                path = Path(os.environ[GROUPS_FILE])
                if not path.is_file():
                    raise RuntimeError(f"no {path}: the workers did not write their groups (tests/conftest.py)")
                self.groups = json.loads(path.read_text())
            module = nodeid.split("::", 1)[0]
            return self.groups.get(module, module)

    config.option.loadscopereorder = False  # collection order, not most tests first
    return LoadModuleScheduling(config, log)


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
