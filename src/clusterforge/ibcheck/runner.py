"""Run a plane's subnet in ibsim, bring it up with OpenSM on the rendered configuration, and discover it.

SIMULATED: ibsim answers the subnet management packets of the switches and HCAs its net file describes
(plan/ib_subnet.py, rendered by render/switches/_infiniband/ibsim.py); OpenSM and the diagnostics reach
it through libumad2sim.so (LD_PRELOAD), which stands in for the kernel's umad devices. Nothing here
touches a real HCA, a kernel module or a system file; no root is needed.

Everything a run makes is its own: a private temporary directory (net file, opensm.conf, partitions,
OpenSM's log and cache, the fake sysfs trees libumad2sim writes into the working directory), a private
ibsim socket name (IBSIM_SOCKNAME; ibsim's sockets are in the abstract namespace, so they go with the
process) and a private environment. ibsim and OpenSM run in sessions of their own and are stopped, with
anything they started, before the run returns, however it ends.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from clusterforge.ibcheck.compare import (
    Discovered,
    LinkDiff,
    Tables,
    compare_links,
    parse_dump_fts,
    parse_ibnetdiscover,
    parse_pkeys,
    parse_sminfo,
    unreachable_pairs,
)
from clusterforge.plan.ib_subnet import IbCable, IbSubnet
from clusterforge.render.switches._infiniband.ibsim import ibsim_net

__all__ = ["Tools", "find_tools", "SimRun", "Pulled", "run_plane", "ToolsMissing", "SimFailed", "UMAD2SIM"]

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
# command -> the Debian package that ships it
PACKAGES = {"ibsim": "ibsim-utils", "opensm": "opensm", "ibnetdiscover": "infiniband-diags",
            "dump_fts": "infiniband-diags", "saquery": "infiniband-diags", "sminfo": "infiniband-diags"}
UP_TIMEOUT_S = 60.0
TOOL_TIMEOUT_S = 60.0
UNREACHABLE_SAMPLE = 20


class ToolsMissing(Exception):
    """The simulator or a diagnostic is not installed: the Debian packages that ship them."""

    def __init__(self, packages: list[str]) -> None:
        super().__init__(", ".join(packages))
        self.packages = packages


class SimFailed(Exception):
    """ibsim or OpenSM did not come up: what it said."""


@dataclass(frozen=True)
class Tools:
    paths: dict[str, str]
    umad2sim: str


def find_tools() -> Tools:
    """The commands on PATH, then in /usr/sbin and /sbin (Debian puts opensm and the diagnostics there, off many
    users' PATH); libumad2sim.so where libumad2sim0 installs it ($CLUSTERFORGE_UMAD2SIM elsewhere)."""
    search = os.pathsep.join(p for p in (os.environ.get("PATH", ""), "/usr/sbin", "/sbin") if p)
    paths = {name: shutil.which(name, path=search) for name in PACKAGES}
    missing = sorted({PACKAGES[name] for name, path in paths.items() if path is None})
    umad = os.environ.get("CLUSTERFORGE_UMAD2SIM", UMAD2SIM)
    if not Path(umad).is_file():
        missing.append("libumad2sim0")
    if missing:
        raise ToolsMissing(sorted(set(missing)))
    return Tools({k: v for k, v in paths.items() if v is not None}, umad)


@dataclass
class Pulled:
    """One cable unplugged in ibsim after the first check, and what the subnet manager made of it."""

    cable: str
    detected: bool  # the discovered topology lacks it
    rerouted: bool  # OpenSM swept again and every HCA still reaches every other (over the other cables)
    routing_engine: str | None
    links: LinkDiff | None
    unreachable: int
    unreachable_sample: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class SimRun:
    plane: str
    nodes: int
    switches: int
    hcas: int
    left_out: str | None
    links: LinkDiff
    sm_state: str
    sm_priority: int | None
    routing_engine: str | None
    partitions: dict[str, bool]  # partition "name=0xpkey" -> found on every sampled port
    partition_ports_checked: int
    unreachable: int
    unreachable_sample: list[tuple[str, str]]
    pulled: Pulled | None = None

    @property
    def ok(self) -> bool:
        pulled_ok = self.pulled is None or (self.pulled.detected and self.pulled.rerouted)
        return (self.left_out is None and not self.links.missing and not self.links.unexpected
                and self.sm_state == "MASTER" and all(self.partitions.values()) and bool(self.partitions)
                and self.unreachable == 0 and pulled_ok)


class _Sim:
    """The running processes of one check and how to ask the simulated subnet."""

    def __init__(self, tools: Tools, workdir: Path, sm_node: str) -> None:
        self.tools = tools
        self.workdir = workdir
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workdir), "LANG": "C",
                    "IBSIM_SOCKNAME": f"cf-ibsim-{os.getpid()}-{secrets.token_hex(6)}", "SIM_HOST": sm_node,
                    "OSM_TMP_DIR": str(workdir), "OSM_CACHE_DIR": str(workdir)}
        self.procs: list[subprocess.Popen[bytes]] = []
        self.ibsim: subprocess.Popen[bytes] | None = None

    def start(self, net: Path, conf: Path) -> None:
        # ibsim's console is its stdin, kept open (at end of file it would spin on it) for `Unlink`
        with (self.workdir / "ibsim.out").open("wb") as ibsim_out:
            self.ibsim = subprocess.Popen([self.tools.paths["ibsim"], "-s", str(net)], stdin=subprocess.PIPE,
                                          stdout=ibsim_out, stderr=subprocess.STDOUT, cwd=self.workdir,
                                          env=self.env, start_new_session=True)
        self.procs.append(self.ibsim)
        self._wait_for(lambda: b"sim>" in (self.workdir / "ibsim.out").read_bytes(), self.ibsim, "ibsim",
                       self.workdir / "ibsim.out")
        with (self.workdir / "opensm.out").open("wb") as osm_out:
            opensm = subprocess.Popen([self.tools.paths["opensm"], "--config", str(conf)],
                                      stdin=subprocess.DEVNULL, stdout=osm_out, stderr=subprocess.STDOUT,
                                      cwd=self.workdir, env={**self.env, "LD_PRELOAD": self.tools.umad2sim},
                                      start_new_session=True)
        self.procs.append(opensm)
        self._wait_for(lambda: self.sweeps() >= 1, opensm, "opensm", self.workdir / "opensm.log")

    def _wait_for(self, ready: Callable[[], bool], proc: subprocess.Popen[bytes], name: str, log: Path,
                  timeout: float = UP_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise SimFailed(f"{name} did not come up within {timeout:.0f} s: {tail.strip() or 'no output'}")

    def log(self) -> str:
        path = self.workdir / "opensm.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def sweeps(self) -> int:
        return self.log().count("SUBNET UP")

    def routing_engine(self) -> str | None:
        engine = None
        for line in self.log().splitlines():
            if "tables configured on all switches" in line:
                engine = line.split("osm_ucast_mgr_process: ", 1)[-1].split(" tables", 1)[0]
        return engine

    def tool(self, name: str, *args: str) -> str:
        done = subprocess.run([self.tools.paths[name], *args], capture_output=True, cwd=self.workdir,
                              env={**self.env, "LD_PRELOAD": self.tools.umad2sim}, timeout=TOOL_TIMEOUT_S,
                              check=False)
        return done.stdout.decode(errors="replace")

    def console(self, command: str) -> None:
        if self.ibsim is None or self.ibsim.stdin is None:
            raise SimFailed("ibsim is not running")
        self.ibsim.stdin.write(command.encode() + b"\n")
        self.ibsim.stdin.flush()

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for proc in reversed(self.procs):
            with suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.1, deadline - time.monotonic()))
            _signal_group(proc, signal.SIGKILL)  # whatever is left in its session
            if proc.poll() is None:
                proc.wait()
            if proc.stdin is not None:
                proc.stdin.close()


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)  # its own session: the group is the process and what it started


@contextmanager
def _running(tools: Tools, subnet: IbSubnet, fabric: dict[str, str],
             cables: tuple[IbCable, ...] | None) -> Iterator[_Sim]:
    with tempfile.TemporaryDirectory(prefix="cf-ibsim-") as tmp:
        workdir = Path(tmp)
        net = workdir / "subnet.net"
        net.write_text(ibsim_net(subnet, cables))
        partitions = workdir / "partitions.conf"
        partitions.write_text(fabric.get("opensm-partitions.conf", ""))
        conf = workdir / "opensm.conf"
        # the rendered settings, then this run's own paths (opensm reads the last value of a key)
        conf.write_text(fabric.get("opensm.conf", "") + "\n# simulation: this run's own files\n"
                        f"partition_config_file {partitions}\nlog_file {workdir / 'opensm.log'}\n"
                        "force_log_flush TRUE\n")
        sim = _Sim(tools, workdir, subnet.sm_node.node_id)
        try:
            sim.start(net, conf)
            yield sim
        finally:
            sim.stop()


def _discover(sim: _Sim) -> tuple[Discovered, Tables]:
    return parse_ibnetdiscover(sim.tool("ibnetdiscover")), parse_dump_fts(sim.tool("dump_fts"))


def _partition_keys(fabric: dict[str, str]) -> dict[str, int]:
    keys: dict[str, int] = {}
    for line in fabric.get("opensm-partitions.conf", "").splitlines():
        if line and not line.startswith("#") and "=" in line:
            name, _, rest = line.partition("=")
            keys[f"{name.strip()}={rest.split(',')[0].split(':')[0].strip()}"] = int(
                rest.split(",")[0].split(":")[0].strip(), 16)
    return keys


def _check_partitions(sim: _Sim, subnet: IbSubnet, tables: Tables, fabric: dict[str, str]) -> tuple[dict[str, bool],
                                                                                                     int]:
    """Each planned P_Key in the P_Key table of one HCA port per leaf switch (a sample: one query per port)."""
    by_port = {port: lid for lid, port in tables.lid_owner.items()}
    sample: dict[str, int] = {}
    for cable in subnet.cables:
        for end, other in ((cable.a, cable.b), (cable.b, cable.a)):
            node = subnet.node(end[0])
            if node.kind == "hca" and other[0] not in sample and node.guid + 1 in by_port:
                sample[other[0]] = by_port[node.guid + 1]
    found = [parse_pkeys(sim.tool("saquery", "--smkey", "1", "PKTR", str(lid))) for lid in sample.values()]
    # a member's table holds the key with the membership bit (0x8000) set or not
    result = {name: bool(found) and all(any(k & 0x7FFF == key & 0x7FFF for k in keys) for keys in found)
              for name, key in _partition_keys(fabric).items()}
    return result, len(found)


def _pull(sim: _Sim, subnet: IbSubnet, cable: IbCable) -> Pulled:
    before = sim.sweeps()
    sim.console(f'Unlink "{cable.a[0]}"[{cable.a[1]}]')
    deadline = time.monotonic() + UP_TIMEOUT_S
    while sim.sweeps() <= before and time.monotonic() < deadline:
        time.sleep(0.1)
    swept = sim.sweeps() > before
    found, tables = _discover(sim)
    diff = compare_links(subnet, found)
    name = " <-> ".join(sorted((cable.a_name, cable.b_name)))
    bad = unreachable_pairs(subnet, found, tables)
    return Pulled(name, diff.missing == (name,) and not diff.unexpected, swept and not bad, sim.routing_engine(),
                  diff, len(bad), bad[:UNREACHABLE_SAMPLE])


def pull_candidate(subnet: IbSubnet) -> IbCable | None:
    """A cable between two switches (redundant in a fat tree): the first one planned."""
    for cable in subnet.cables:
        if subnet.node(cable.a[0]).kind == "switch" and subnet.node(cable.b[0]).kind == "switch":
            return cable
    return None


def run_plane(subnet: IbSubnet, fabric: dict[str, str], *, tools: Tools | None = None,
              cables: tuple[IbCable, ...] | None = None, given: dict[str, str] | None = None,
              pull: bool = True) -> SimRun:
    """Simulate `subnet` (with `cables` as built in place of the planned ones), bring it up with OpenSM on the
    rendered `fabric` files (or the files `given` it, as deployed), compare with the plan and the rendered
    partitions, then (with `pull`) unplug one switch-to-switch cable and look again."""
    tools = tools or find_tools()
    with _running(tools, subnet, fabric if given is None else given, cables) as sim:
        found, tables = _discover(sim)
        priority, state = parse_sminfo(sim.tool("sminfo"))
        partitions, checked = _check_partitions(sim, subnet, tables, fabric)
        bad = unreachable_pairs(subnet, found, tables)
        run = SimRun(subnet.plane, len(subnet.nodes), sum(n.kind == "switch" for n in subnet.nodes),
                     sum(n.kind == "hca" for n in subnet.nodes), subnet.left_out, compare_links(subnet, found),
                     state, priority, sim.routing_engine(), partitions, checked, len(bad), bad[:UNREACHABLE_SAMPLE])
        candidate = pull_candidate(subnet)
        if pull and candidate is not None and not run.links.missing and not run.links.unexpected:
            run.pulled = _pull(sim, subnet, candidate)
    return run
