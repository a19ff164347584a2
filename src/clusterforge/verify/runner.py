"""Run the testinfra host checks (``clusterforge.verify.hosts``) in a pytest subprocess and
aggregate the per-check records into a per-host result and a JSON report.

Each check ends passed, failed, skipped (nothing planned to check, or on the lab a fact it cannot read, with the
reason) or SIMULATED (on the lab, a planned fact that needs a part the lab simulates: the record says which,
``clusterforge.targets.SIMULATED_PARTS``). Outside the lab a planned fact that cannot be checked is a failure
naming the host, the fact and why (``verify.hosts._gates``). The four are counted apart; only failures (and run
errors) make the result not ok.

The subprocess keeps pytest's state (assertion rewriting, plugins, testinfra's connection cache)
out of the caller — the CLI, a Pulumi dynamic provider, a test. Records come back through a
small plugin (``verify.hosts._report``), not by parsing pytest's console output.
"""

from __future__ import annotations

import configparser
import datetime as _dt
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from clusterforge import paths
from clusterforge.sshmux import CONTROL_PATH, ansible_env, private_control_dir
from clusterforge.targets import LAB, REACHES, SSH, Reach
from clusterforge.verify.hosts import CONCERNS
from clusterforge.verify.hosts._inventory import InventoryError, load_inventory

__all__ = [
    "CONCERNS", "HostResult", "Target", "VerifyError", "VerifyResult", "aggregate", "pytest_command",
    "run_checks", "run_group_checks", "write_report",
]  # fmt: skip

Target = Literal["lab", "ssh", "local"]  # a name of clusterforge.targets.REACHES
SCHEMA = "clusterforge.verify/1"
HOSTS_DIR = Path(__file__).resolve().parent / "hosts"
# GPU servers and storage servers; each check module names the host kinds it applies to.
DEFAULT_GROUP = "servers,storage_servers"
DEFAULT_TIMEOUT_S = 1800
MAX_WORKERS = 8
HOSTS_PER_WORKER = 8
# pytest exit codes that mean "the checks ran" (0 all passed, 1 some failed).
_RAN = (0, 1)
_NO_TESTS = 5


class VerifyError(Exception):
    """The checks could not run (bad inventory, unknown host, pytest usage error, timeout)."""


@dataclass
class HostResult:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    simulated: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)  # {test, message}
    skips: list[dict[str, str]] = field(default_factory=list)  # {test, message}
    simulations: list[dict[str, str]] = field(default_factory=list)  # {test, message, simulated: what}
    unreachable: str | None = None  # why the host did not answer; its checks count as one failure


@dataclass
class VerifyResult:
    per_host: dict[str, HostResult]
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    simulated: int = 0
    errors: list[str] = field(default_factory=list)  # problems not tied to one host (collection errors)
    records: list[dict[str, Any]] = field(default_factory=list)
    target: str = ""
    inventory: str = ""

    @property
    def ok(self) -> bool:
        return self.failed == 0 and not self.errors

    @property
    def unreachable(self) -> dict[str, str]:
        """host -> why it did not answer."""
        return {h: hr.unreachable for h, hr in self.per_host.items() if hr.unreachable is not None}

    @property
    def simulated_parts(self) -> dict[str, list[str]]:
        """What the lab simulated -> the hosts whose checks it stood in for (in order)."""
        parts: dict[str, list[str]] = {}
        for h, hr in self.per_host.items():
            for s in hr.simulations:
                hosts = parts.setdefault(s["simulated"], [])
                if h not in hosts:
                    hosts.append(h)
        return parts

    @property
    def failures(self) -> list[str]:
        """Every failure as one line, ``host test: message`` (``host unreachable: why``), then the run's errors."""
        lines = []
        for h, hr in self.per_host.items():
            if hr.unreachable is not None:
                lines.append(f"{h} unreachable: {hr.unreachable}")
            lines += [f"{h} {f['test']}: {f['message']}" for f in hr.failures]
        return lines + list(self.errors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "inventory": self.inventory,
            "target": self.target,
            "ok": self.ok,
            "totals": {"passed": self.passed, "failed": self.failed, "simulated": self.simulated,
                       "skipped": self.skipped},
            "hosts": {h: asdict(r) for h, r in self.per_host.items()},
            "errors": list(self.errors),
            "records": list(self.records),
        }


def aggregate(records: Iterable[Mapping[str, Any]], hosts: Sequence[str] = (),
              reach: Reach | None = None) -> VerifyResult:
    """Per-host counts and failure lists from check records ({host, test, outcome, message}).

    Every host in ``hosts`` appears even with no record. A failed record without a host (a
    module that did not import) is an error of the whole run. The checks of a host that did not
    answer (records marked ``unreachable``) count as one failure of that host, not one per check.
    A simulated record under a ``reach`` that simulates nothing (a real target) is a failure: nothing
    there may stand in for a fact.
    """
    result = VerifyResult(per_host={h: HostResult() for h in hosts})
    for rec in records:
        rec = dict(rec)
        result.records.append(rec)
        outcome, host = rec.get("outcome"), rec.get("host")
        if host is not None and rec.get("unreachable") is not None:
            hr = result.per_host.setdefault(host, HostResult())
            if hr.unreachable is None:
                hr.unreachable = str(rec["unreachable"])
                hr.failed += 1
                result.failed += 1
            continue
        entry = {"test": str(rec.get("test", rec.get("nodeid", ""))), "message": str(rec.get("message", ""))}
        if host is None:
            if outcome == "failed":
                result.errors.append(f"{entry['test']}: {entry['message']}")
                result.failed += 1
            continue
        hr = result.per_host.setdefault(host, HostResult())
        if outcome == "passed":
            hr.passed += 1
            result.passed += 1
        elif outcome == "failed":
            hr.failed += 1
            hr.failures.append(entry)
            result.failed += 1
        elif outcome == "skipped":
            hr.skipped += 1
            hr.skips.append(entry)
            result.skipped += 1
        elif outcome == "simulated" and reach is not None and not reach.simulates:
            entry["message"] = (f"SIMULATED on target {reach.name}, which simulates nothing: {entry['message']}")
            hr.failed += 1
            hr.failures.append(entry)
            result.failed += 1
        elif outcome == "simulated":
            hr.simulated += 1
            hr.simulations.append({**entry, "simulated": str(rec.get("simulated", ""))})
            result.simulated += 1
        else:
            raise ValueError(f"unknown outcome {outcome!r} in {rec}")
    return result


def write_report(result: VerifyResult, path: Path, **extra: Any) -> None:
    data = {**result.to_dict(), **extra}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def default_workers(hosts: int) -> int:
    """pytest-xdist workers for ``hosts`` hosts: one per HOSTS_PER_WORKER, at most one per CPU and MAX_WORKERS.

    A worker costs seconds to start (interpreter, testinfra, ansible-inventory); with shared SSH
    connections one worker checks a lab host in about two seconds, so small runs stay sequential.
    """
    return max(1, min(-(-hosts // HOSTS_PER_WORKER), os.cpu_count() or 1, MAX_WORKERS))


def _xdist_available() -> bool:
    try:
        import xdist  # noqa: F401
    except ImportError:
        return False
    return True


def pytest_command(
    inventory: Path,
    target: str,
    hosts: Sequence[str],
    ssh_config: Path | None,
    records_json: Path,
    *,
    concerns: Sequence[str] | None = None,
    workers: int = 1,
    group: str = DEFAULT_GROUP,
    extra_args: Sequence[str] = (),
) -> list[str]:
    modules = [str(HOSTS_DIR / f"test_{c}.py") for c in (concerns or CONCERNS)]
    cmd = [
        sys.executable, "-m", "pytest", *modules,
        "-p", "clusterforge.verify.hosts._report", "--cf-report-json", str(records_json),
        "--cf-inventory", str(inventory), "--cf-target", target, "--cf-group", group,
        # Fixed settings whatever ini file is around: rootdir at the checks, no cache dir, terse.
        "--rootdir", str(HOSTS_DIR), "-c", os.devnull, "-p", "no:cacheprovider", "-q", "-rfEs", "--tb=line",
    ]  # fmt: skip
    for h in hosts:
        cmd += ["--cf-host", h]
    if ssh_config:
        cmd += ["--cf-ssh-config", str(ssh_config)]
    if workers > 1:
        cmd += ["-n", str(workers), "--dist", "loadgroup"]
    return cmd + list(extra_args)


def _multiplexing_config(tmp: Path, control_dir: Path) -> Path:
    """The user's effective ansible.cfg (ANSIBLE_CONFIG, ./ansible.cfg, ~/.ansible.cfg, /etc/ansible) with this
    run's own ControlPath directory (clusterforge.sshmux): testinfra's Ansible backend shares one SSH
    connection per host only when the config names a control_path, and a path of the user's (or Ansible's
    default, keyed by host/port/user) would let this run ride another run's master to the same address."""
    cfg = configparser.ConfigParser(interpolation=None)
    explicit = os.environ.get("ANSIBLE_CONFIG")
    candidates = [Path(explicit)] if explicit else [Path.cwd() / "ansible.cfg", Path.home() / ".ansible.cfg",
                                                    Path("/etc/ansible/ansible.cfg")]
    for candidate in candidates:
        if candidate.is_file():
            cfg.read(candidate)
            break
    for section in ("ssh_connection", "persistent_connection"):
        if not cfg.has_section(section):
            cfg.add_section(section)
    cfg.set("ssh_connection", "control_path", CONTROL_PATH)
    cfg.set("persistent_connection", "control_path_dir", str(control_dir))
    path = tmp / "ansible.cfg"
    with path.open("w") as f:
        cfg.write(f)
    return path


def _env(ansible_config: Path | None = None, control_dir: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    if ansible_config is not None:
        env["ANSIBLE_CONFIG"] = str(ansible_config)
    if control_dir is not None:
        env.update(ansible_env(control_dir))
    # ansible-inventory (testinfra's Ansible backend) lives beside this interpreter in a venv.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    src = str(paths.PACKAGE_DIR.parent)  # the directory holding the clusterforge package
    env["PYTHONPATH"] = os.pathsep.join(p for p in [src, env.get("PYTHONPATH", "")] if p)
    env.setdefault("ANSIBLE_VERBOSITY", "0")
    return env


def run_checks(
    inventory_dir: Path,
    target: Target | str,
    hosts: list[str] | None,
    ssh_config: Path | None,
    report_json: Path | None,
    *,
    concerns: Sequence[str] | None = None,
    workers: int | None = None,
    group: str = DEFAULT_GROUP,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    extra_args: Sequence[str] = (),
) -> VerifyResult:
    """Run the host checks against ``hosts`` (default: the inventory's ``servers``) and report.

    ``inventory_dir`` is a rendered tree (``clusterforge render --out DIR``); ``target`` picks how
    hosts are reached (see ``verify/hosts/conftest.py``); ``local`` needs exactly one host, the
    inventory entry this machine is checked against. Raises VerifyError when the checks cannot run.
    """
    if target not in REACHES:
        raise VerifyError(f"unknown target {target!r}; expected one of {', '.join(REACHES)}")
    where = REACHES[target]
    unknown = [c for c in concerns or () if c not in CONCERNS]
    if unknown:
        raise VerifyError(f"unknown check module(s) {unknown}; expected some of {', '.join(CONCERNS)}")
    try:
        inventory = load_inventory(inventory_dir)
    except InventoryError as exc:
        raise VerifyError(str(exc)) from None
    missing = [h for h in hosts or () if h not in inventory.all_hosts()]
    if missing:
        raise VerifyError(f"not in the inventory {inventory.path}: {', '.join(missing)}")
    selected = list(hosts) if hosts else list(dict.fromkeys(
        h for g in group.split(",") if g for h in inventory.group_hosts(g)))
    if not selected:
        raise VerifyError(f"the inventory {inventory.path} has no hosts in group {group!r}")
    if where.local and len(selected) != 1:
        raise VerifyError("target local checks this machine against exactly one inventory host: pass --host NAME")
    if where.lab and ssh_config is None:
        lab = inventory.groups["all"].vars.get("cf_cluster")
        if not lab:
            raise VerifyError("target lab: the inventory names no cf_cluster; pass the lab's ssh_config")
        ssh_config = paths.lab_ssh_config(lab)
    if ssh_config is not None and not Path(ssh_config).is_file():
        hint = " (is the lab up? `clusterforge lab up`)" if where.lab else ""
        raise VerifyError(f"ssh config {ssh_config} does not exist{hint}")
    if workers is None:
        workers = default_workers(len(selected)) if where.uses_ssh and _xdist_available() else 1
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    with tempfile.TemporaryDirectory(prefix="cf-verify-") as tmp, private_control_dir() as control_dir:
        records_json = Path(tmp) / "records.json"
        cmd = pytest_command(inventory.path.resolve(), target, selected if hosts else [], ssh_config, records_json,
                             concerns=concerns, workers=workers, group=group, extra_args=extra_args)
        ansible_config = _multiplexing_config(Path(tmp), control_dir) if where.uses_ssh else None
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(ansible_config, control_dir),
                                  timeout=timeout_s, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise VerifyError(f"the host checks did not finish within {timeout_s:.0f} s") from None
        output = (proc.stdout + proc.stderr).strip()
        if proc.returncode not in (*_RAN, _NO_TESTS) or not records_json.is_file():
            raise VerifyError(f"the host checks could not run (pytest exit {proc.returncode}):\n{output[-3000:]}")
        data = json.loads(records_json.read_text())
    result = aggregate(data["records"], selected, where)
    result.target, result.inventory = target, str(inventory.path)
    if proc.returncode == _NO_TESTS:
        result.errors.append("no checks were collected")
    if report_json is not None:
        write_report(result, Path(report_json), started=started,
                     finished=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                     hosts_checked=selected, concerns=list(concerns or CONCERNS))
    return result


def run_group_checks(inventory_path: str | Path, limit: str = "servers", ssh_config: str | Path | None = None,
                     target: str | None = None, **options: Any) -> VerifyResult:
    """Check every host of inventory group ``limit``; as the Pulumi Verification resource checks an SU.

    ``target`` defaults to ``lab`` when ``ssh_config`` is the lab ssh_config of this inventory's
    cluster (``.lab/<cf_cluster>/ssh_config``), else ``ssh``. Other options go to
    :func:`run_checks`.
    """
    ssh = Path(ssh_config) if ssh_config else None
    if target is None:
        target = SSH.name
        cluster = load_inventory(inventory_path).groups["all"].vars.get("cf_cluster")
        if ssh is not None and cluster and ssh.resolve() == paths.lab_ssh_config(cluster).resolve():
            target = LAB.name
    report_json = options.pop("report_json", None)
    return run_checks(Path(inventory_path), target, None, ssh, report_json, group=limit, **options)
