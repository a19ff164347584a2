"""pytest wiring for the host checks: which hosts, what each is expected to be, how to reach it.

Run through ``clusterforge verify`` (:mod:`clusterforge.verify.runner`), or directly::

    pytest src/clusterforge/verify/hosts --cf-inventory DIR --cf-target ssh|lab|local \
        [--cf-host NAME ...] [--cf-ssh-config FILE]

Every expectation comes from the rendered inventory (``DIR/ansible``): each test is parametrized
per host (``cf_host_name``), and per item for tests that take ``interface``, ``mount``, ``volume``,
``gpu_index`` or ``roce_interface`` — so one failing interface never hides another. A module's
``HOST_KINDS`` names the host kinds (cf_kind) it checks; GPU servers (``server``) by default.

Targets:
  ssh    testinfra's Ansible backend (``ansible://HOST?ansible_inventory=...``): Ansible resolves
         ansible_host/ansible_user/ansible_port/become exactly as the playbooks do, and the
         OpenSSH client runs with ``-F ssh_config`` when one is given (known_hosts stay checked).
  lab    ssh with the lab's generated ssh_config (strict host key checking against the lab's own
         known_hosts); the lab's storage servers run GlusterFS, so its tiers are checked live.
  local  this machine (testinfra ``local://``) checked against one inventory host (``--cf-host``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from clusterforge.targets import REACHES, Reach
from clusterforge.verify.hosts._facts import HostFacts
from clusterforge.verify.hosts._gates import Unchecked, resolve
from clusterforge.verify.hosts._inventory import Inventory, load_inventory

DEFAULT_GROUP = "servers,storage_servers"
DEFAULT_HOST_KINDS = ("server",)


def _interfaces(hv: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(i["name"], i) for i in hv.get("cf_interfaces") or []]


def _mounts(hv: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(m["path"], m) for m in (hv.get("cf_storage") or {}).get("mounts") or []]


def _volumes(hv: dict[str, Any]) -> list[tuple[str, Any]]:
    """The volumes with a brick on this host (a storage server checks what it serves)."""
    name = hv.get("cf_name")
    return [(v["name"], v) for v in (hv.get("cf_storage") or {}).get("volumes") or []
            if any(b.get("server") == name for b in v.get("bricks") or [])]


def _gpus(hv: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(f"gpu{i}", i) for i in range(int(hv.get("cf_gpu_count") or 0))]


def _roce_interfaces(hv: dict[str, Any]) -> list[tuple[str, Any]]:
    roce = hv.get("cf_roce") or {}
    return [(name, name) for name in roce.get("interfaces") or []] if roce.get("enabled") else []


# Fixture name -> the host_vars items a test taking it is parametrized over.
PER_ITEM: dict[str, Callable[[dict[str, Any]], list[tuple[str, Any]]]] = {
    "interface": _interfaces,
    "mount": _mounts,
    "volume": _volumes,
    "gpu_index": _gpus,
    "roce_interface": _roce_interfaces,
}


@dataclass
class CheckContext:
    inventory: Inventory
    target: Reach
    hosts: list[str]
    ssh_config: str | None
    options: dict[str, Any]
    vars: dict[str, dict[str, Any]] = field(default_factory=dict)
    _facts: dict[str, HostFacts] = field(default_factory=dict)
    _unreachable: dict[str, str | None] = field(default_factory=dict)

    def connection(self, name: str):
        import testinfra

        if self.target.local:
            return testinfra.get_host("local://")
        kwargs: dict[str, Any] = {"ansible_inventory": str(self.inventory.path)}
        if self.ssh_config:
            kwargs["ssh_config"] = self.ssh_config
        return testinfra.get_host(f"ansible://{name}", **kwargs)

    def facts(self, name: str) -> HostFacts:
        if name not in self._facts:
            self._facts[name] = HostFacts(self.connection(name))
        return self._facts[name]

    def unreachable(self, name: str) -> str | None:
        """Why ``name`` cannot be reached (probed once per host and worker), or None."""
        if self.target.local:
            return None
        if name not in self._unreachable:
            self._unreachable[name] = probe_failure(self.facts(name).host)
        return self._unreachable[name]


UNREACHABLE_PROPERTY = "cf_unreachable"
SIMULATED_PROPERTY = "cf_simulated"  # what the lab simulated for a check whose outcome is SIMULATED
UNCHECKED_PROPERTY = "cf_unchecked"  # the planned fact a check could not read (failed outside the lab)
SSH_FAILED = 255  # ssh's own exit status: the connection (not the remote command) failed


def probe_failure(host: Any) -> str | None:
    """Run ``true`` on the host; the connection error as one line, or None when it answered."""
    try:
        result = host.run("true")
    except Exception as exc:  # noqa: BLE001 - any backend error means the host was not reached
        return _one_line(str(exc)) or type(exc).__name__
    if result.rc == 0:
        return None
    if result.rc == SSH_FAILED or not result.stdout:
        return _one_line(result.stderr) or f"`true` exited {result.rc}"
    return None


def _one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).replace("\r", "").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


_CTX = pytest.StashKey[CheckContext | None]()


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("clusterforge", "clusterforge host checks")
    g.addoption("--cf-inventory", help="rendered inventory: DIR (clusterforge render --out DIR) or its inventory.yml")
    g.addoption("--cf-target", choices=tuple(REACHES), default="ssh", help="how hosts are reached (default ssh)")
    g.addoption("--cf-host", action="append", default=[], help="check only this inventory host (repeatable)")
    g.addoption("--cf-group", default=DEFAULT_GROUP,
                help=f"inventory group(s) to check, comma-separated (default {DEFAULT_GROUP})")
    g.addoption("--cf-ssh-config", help="OpenSSH client config (the lab's .lab/<lab>/ssh_config for --cf-target lab)")
    g.addoption("--cf-max-clock-offset-s", type=float, default=1.0,
                help="largest clock offset to the machine running the checks (default 1.0 s)")


def _lab_ssh_config(inventory: Inventory) -> str:
    from clusterforge import paths

    lab = inventory.groups["all"].vars.get("cf_cluster")
    if not lab:
        raise pytest.UsageError("--cf-target lab needs --cf-ssh-config (the inventory names no cf_cluster)")
    return str(paths.lab_ssh_config(lab))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "xdist_group(name): run on the worker that serves this group (pytest-xdist)")
    path = config.getoption("--cf-inventory")
    if not path:
        config.stash[_CTX] = None
        return
    inventory = load_inventory(path)
    target = REACHES[config.getoption("--cf-target")]
    group_hosts = list(dict.fromkeys(h for g in config.getoption("--cf-group").split(",") if g
                                     for h in inventory.group_hosts(g)))
    wanted = [h for arg in config.getoption("--cf-host") for h in arg.split(",") if h]
    unknown = [h for h in wanted if h not in inventory.all_hosts()]
    if unknown:
        raise pytest.UsageError(f"--cf-host: not in {inventory.path}: {', '.join(unknown)}")
    hosts = wanted or group_hosts
    if target.local and len(hosts) != 1:
        raise pytest.UsageError("--cf-target local checks this machine against exactly one --cf-host")
    ssh_config = config.getoption("--cf-ssh-config")
    if target.lab and not ssh_config:
        ssh_config = _lab_ssh_config(inventory)
    if ssh_config and not Path(ssh_config).is_file():
        raise pytest.UsageError(f"ssh config {ssh_config} does not exist (is the lab up?)")
    ctx = CheckContext(
        inventory, target, hosts, ssh_config,
        {"max_clock_offset_s": config.getoption("--cf-max-clock-offset-s")},
    )  # fmt: skip
    ctx.vars = {h: inventory.host_vars(h) for h in hosts}
    config.stash[_CTX] = ctx


def _ctx(config: pytest.Config) -> CheckContext | None:
    return config.stash.get(_CTX, None)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "cf_host_name" not in metafunc.fixturenames:
        return
    ctx = _ctx(metafunc.config)
    hosts = ctx.hosts if ctx else []
    # A module names the host kinds (cf_kind) it checks: GPU-server concerns by default.
    host_kinds = getattr(metafunc.module, "HOST_KINDS", DEFAULT_HOST_KINDS)
    hosts = [h for h in hosts if ctx is not None and ctx.vars[h].get("cf_kind", "server") in host_kinds]
    kinds = [k for k in PER_ITEM if k in metafunc.fixturenames]
    if len(kinds) > 1:
        raise pytest.UsageError(f"{metafunc.function.__name__}: takes more than one per-item fixture {kinds}")
    if not kinds:
        metafunc.parametrize("cf_host_name", hosts, ids=hosts)
        return
    kind = kinds[0]
    pairs, ids = [], []
    for h in hosts:
        for label, item in PER_ITEM[kind](ctx.vars[h]):  # type: ignore[union-attr]
            pairs.append((h, item))
            ids.append(f"{h}/{label}")
    metafunc.parametrize(("cf_host_name", kind), pairs, ids=ids)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ctx = _ctx(config)
    for item in items:
        if ctx is None:
            item.add_marker(pytest.mark.skip(reason="no --cf-inventory: run the host checks via `clusterforge verify`"))
            continue
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("cf_host_name") if callspec else None
        if isinstance(name, str):  # not NOTSET, pytest's value for an empty parameter set
            item.user_properties.append(("cf_host", name))
            # With pytest-xdist --dist loadgroup, one worker serves one host: its fact cache is shared.
            item.add_marker(pytest.mark.xdist_group(name))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """A planned fact the check could not read (``_gates.unchecked``): SIMULATED, a skip or a failure by the
    target's reach (``_gates.resolve``); recorded on the item for the report plugin."""
    try:
        return (yield)
    except Unchecked as exc:
        ctx = _ctx(item.config)
        if ctx is None:
            raise
        callspec = getattr(item, "callspec", None)
        host = str(callspec.params.get("cf_host_name")) if callspec else "?"
        resolution = resolve(exc, ctx.target, host)
        if resolution.outcome == "simulated":
            item.user_properties.append((SIMULATED_PROPERTY, resolution.simulated))
            pytest.skip(resolution.message)
        if resolution.outcome == "skipped":
            pytest.skip(resolution.message)
        item.user_properties.append((UNCHECKED_PROPERTY, exc.fact))
        pytest.fail(resolution.message, pytrace=False)


def pytest_report_header(config: pytest.Config) -> list[str]:
    ctx = _ctx(config)
    if ctx is None:
        return ["clusterforge: no --cf-inventory"]
    return [f"clusterforge: target {ctx.target.name}, {len(ctx.hosts)} host(s) from {ctx.inventory.path}"
            + (f", ssh_config {ctx.ssh_config}" if ctx.ssh_config else "")]


@pytest.fixture
def check_context(request: pytest.FixtureRequest) -> CheckContext:
    ctx = _ctx(request.config)
    if ctx is None:
        pytest.skip("no --cf-inventory")
    return ctx


@pytest.fixture
def host_vars(check_context: CheckContext, cf_host_name: str) -> dict[str, Any]:
    """The host's variables from the rendered inventory: the expectations."""
    return check_context.vars[cf_host_name]


def _reached(request: pytest.FixtureRequest, ctx: CheckContext, name: str) -> HostFacts:
    """The host's facts; a host that does not answer fails the check once, marked unreachable."""
    why = ctx.unreachable(name)
    if why is not None:
        request.node.user_properties.append((UNREACHABLE_PROPERTY, why))
        pytest.fail(f"{name} unreachable: {why}", pytrace=False)
    return ctx.facts(name)


@pytest.fixture
def host(request: pytest.FixtureRequest, check_context: CheckContext, cf_host_name: str):
    """testinfra Host for the host under check (overrides testinfra's own ``host`` fixture)."""
    return _reached(request, check_context, cf_host_name).host


@pytest.fixture
def facts(request: pytest.FixtureRequest, check_context: CheckContext, cf_host_name: str) -> HostFacts:
    return _reached(request, check_context, cf_host_name)


@pytest.fixture
def target(check_context: CheckContext) -> Reach:
    return check_context.target


@pytest.fixture
def check_options(check_context: CheckContext) -> dict[str, Any]:
    return check_context.options
