"""HostProvision: run the Ansible roles over one host group (an SU or a rack group) with ansible-runner.

It re-runs when what Ansible would do changes: the roles and playbooks (`roles_hash`), the group's
rendered host_vars and membership (`host_vars_hash`), the playbook, tags, extra vars or credentials.
Anything else (another SU's hosts, the global inventory file's other groups) leaves it alone, so
adding an SU never re-provisions the existing ones.

The default run is `clusterforge.provision.runner.run_site` (playbooks/site.yml). `playbook` names
another playbook instead (day-2 jobs, the wiring tests); that path calls ansible-runner directly.
Secret extra vars (`secret_vars`, e.g. the BMC password) are a Pulumi secret input; for our own
playbook runs they reach Ansible through a 0600 env/extravars file that is removed after the run,
never on the command line, and the engine's passphrase is dropped from the environment first
(ansible-runner records the command line and the whole environment in its artifacts).

Delete does nothing to the hosts: un-provisioning a server is re-imaging it, not undoing roles.

Live state: after a run over SSH the provider records each host's machine-id (`identity`); with an
unchanged declaration `diff` reads them again, and a host that does not answer or is another
machine (re-imaged, swapped) is drift, named on the run's output; the update provisions the group.
With `services` (the control plane's units), a unit that is not active on a host is drift too, and with
`nodes` (the Kubernetes nodes the plan registers), a node the API server no longer lists (it left, or was
deleted) is drift: named on the run's output, and the update registers it again (never dropped silently).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from clusterforge.pulumi.providers import _lifeline
from clusterforge.sshmux import ansible_env, private_control_dir

__all__ = ["HostProvision", "HostProvisionArgs", "HostProvisionProvider", "ProvisionFailed"]

REPLACE_KEYS = ("group",)
UPDATE_KEYS = ("hosts", "inventory_path", "private_data_dir", "roles_hash", "host_vars_hash", "playbook",
               "playbook_hash", "tags", "extravars", "ssh_config", "secret_vars", "services")
KEEP_ARTIFACT_RUNS = 5


class ProvisionFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class HostProvisionArgs:
    group: str  # Ansible group used as --limit: su01, su01_r02, ...
    hosts: Sequence[str]
    inventory_path: str
    private_data_dir: str
    roles_hash: str
    host_vars_hash: str
    playbook: str | None = None  # None: playbooks/site.yml through run_site
    playbook_hash: str | None = None
    tags: str | None = None
    extravars: Mapping[str, Any] = field(default_factory=dict)
    ssh_config: pulumi.Input[str] | None = None
    secret_vars: pulumi.Input[Mapping[str, Any]] | None = None
    # systemd units that must be active on every host (the control plane): one that is not is drift
    services: Sequence[str] = ()
    # Kubernetes nodes the API server must list (the GPU servers): one missing is drift; asked on `nodes_via`
    # (a control node), else on the first host
    nodes: Sequence[str] = ()
    nodes_via: str | None = None


@dataclass(frozen=True)
class _Outcome:
    changed: dict[str, int]
    failed: dict[str, str]  # host -> reason (failed tasks and unreachable hosts)


def _reasons(hosts: Any, kind: str) -> dict[str, str]:
    if not hosts:
        return {}
    if isinstance(hosts, Mapping):
        return {str(h): f"{kind}: {reason}" for h, reason in hosts.items()}
    return {str(h): kind for h in hosts}


def _run_site(props: Mapping[str, Any], extravars: dict[str, Any], hosts: Sequence[str] | None = None,
              check: bool = False) -> Any:
    from clusterforge.provision.runner import run_site  # the provisioning module; imported when used

    private_data_dir = Path(props["private_data_dir"])
    # Extra vars go in as env/extravars (`-e @file`), written here and removed after the run:
    # handed to ansible-runner as a dict they would stay on disk in env/extravars.
    vars_file = private_data_dir / "env" / "extravars"
    _write_private(vars_file, extravars)
    verb = "drift check" if check else "provision"
    try:
        return run_site(Path(props["inventory_path"]), private_data_dir, limit=list(hosts) if hosts else props["group"],
                        tags=props.get("tags"), extravars=None,
                        ssh_config=Path(props["ssh_config"]) if props.get("ssh_config") else None,
                        progress=None if check else lambda line: _lifeline.say(f"{verb} {props['group']}: {line}"),
                        cancel=_lifeline.cancelled, check=check)
    finally:
        vars_file.unlink(missing_ok=True)


def _provision_site(props: Mapping[str, Any], extravars: dict[str, Any], hosts: Sequence[str] | None) -> _Outcome:
    result = _run_site(props, extravars, hosts)
    unreachable = {host: result.unreachable_messages.get(host, "") for host in result.unreachable_hosts}
    failed = {**_reasons(result.failed_hosts, "failed"), **_reasons(unreachable, "unreachable")}
    if not result.ok and not failed:
        failed = {props["group"]: f"ansible-runner {result.status} (rc {result.rc}); see {result.artifact_dir}"}
    return _Outcome({str(h): int(n) for h, n in (result.changed_per_host or {}).items()}, failed)


def _event_reasons(events: Any) -> dict[str, str]:
    reasons: dict[str, str] = {}
    for event in events:
        kind = event.get("event")
        if kind not in ("runner_on_failed", "runner_on_unreachable"):
            continue
        data = event.get("event_data", {})
        if data.get("ignore_errors"):
            continue
        res = data.get("res") or {}
        message = res.get("msg") or res.get("stderr") or "failed"
        what = "unreachable" if kind == "runner_on_unreachable" else f"task {data.get('task', '?')!r} failed"
        reasons.setdefault(data.get("host", "?"), f"{what}: {str(message).strip()[:500]}")
    return reasons


# Never hand these to Ansible: ansible-runner records its whole environment in artifacts/<run>/command.
_SCRUBBED_ENV = ("PULUMI_CONFIG_PASSPHRASE", "PULUMI_ACCESS_TOKEN", "PULUMI_CONFIG")


def _prepare_environment() -> None:
    """This provider process's environment, which ansible-runner copies for every run."""
    for name in _SCRUBBED_ENV:
        os.environ.pop(name, None)
    # ansible-runner turns host key checking off unless the environment says otherwise.
    os.environ.setdefault("ANSIBLE_HOST_KEY_CHECKING", "True")


def _write_private(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle)


def _run_playbook(props: Mapping[str, Any], extravars: dict[str, Any]) -> _Outcome:
    import ansible_runner

    from clusterforge.provision.progress import TaskProgress

    playbook = Path(props["playbook"])
    private_data_dir = Path(props["private_data_dir"])
    envvars: dict[str, str] = {}
    if (playbook.parent / "ansible.cfg").is_file():
        envvars["ANSIBLE_CONFIG"] = str(playbook.parent / "ansible.cfg")
    if props.get("ssh_config"):
        envvars["ANSIBLE_SSH_ARGS"] = f"-F {props['ssh_config']}"
    # ansible-runner passes env/extravars as `-e @file`; it lives only for the run (it may hold secrets).
    vars_file = private_data_dir / "env" / "extravars"
    _write_private(vars_file, extravars)
    try:
        with private_control_dir() as control_dir:  # no master of another run (lab, ssh config) is reused
            run = ansible_runner.run(
                private_data_dir=str(private_data_dir), playbook=str(playbook), inventory=props["inventory_path"],
                limit=props["group"], tags=props.get("tags") or None, envvars={**envvars, **ansible_env(control_dir)},
                quiet=True, rotate_artifacts=KEEP_ARTIFACT_RUNS, suppress_env_files=True,
                cancel_callback=_lifeline.cancelled,
                # per-host task progress on the run's output, as the site playbook's (provision.runner)
                event_handler=TaskProgress(lambda line: _lifeline.say(f"provision {props['group']}: {line}")),
            )
            events = list(run.events)
    finally:
        vars_file.unlink(missing_ok=True)
    stats = run.stats or {}
    failed = _event_reasons(events)
    for host in {**stats.get("failures", {}), **stats.get("dark", {})}:
        failed.setdefault(host, "failed")
    if run.rc != 0 and not failed:
        failed[props["group"]] = f"ansible-playbook exited {run.rc} ({run.status}); see {run.config.artifact_dir}"
    return _Outcome({str(h): int(n) for h, n in stats.get("changed", {}).items()}, failed)


def _identity(props: Mapping[str, Any]) -> dict[str, str] | None:
    """host -> machine-id right after provisioning (hosts reached over SSH only; None otherwise)."""
    if not props.get("ssh_config") or not props.get("hosts"):
        return None
    from clusterforge.pulumi.providers._host_probe import machine_ids

    return {host: mid for host, (mid, _) in machine_ids(list(props["hosts"]), str(props["ssh_config"])).items() if mid}


# group -> hosts whose check-mode run would change something; set by diff, used by the update of the same
# engine run (the provider process serves both), so `up` re-provisions exactly the drifted hosts.
_DRIFTED: dict[str, list[str]] = {}
_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # pulumi.runtime.rpc.UNKNOWN: an output a preview cannot know
HOST_DRIFT_ENV = "CLUSTERFORGE_HOST_DRIFT"  # "0": skip the check-mode read (identity and reachability only)


def _host_drift_wanted(props: Mapping[str, Any]) -> bool:
    return (not props.get("playbook") and isinstance(props.get("ssh_config"), str)
            and os.environ.get(HOST_DRIFT_ENV, "1") != "0")


def _host_drift(props: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """host -> [(task, file)] the site playbook would change, by a check-mode run with diffs (nothing is
    changed on the hosts). Each finding is said as a drift line naming host, file and task."""
    _prepare_environment()
    extravars = {**(props.get("extravars") or {}), **(props.get("secret_vars") or {})}
    result = _run_site(props, extravars, check=True)
    for host, why in sorted({**result.failed_hosts, **result.unreachable_messages}.items()):
        _lifeline.say(f"drift: provision {props['group']}: host {host} cannot be checked ({why[:300]});"
                      " `up` provisions it again")
    drifted = {host: list(changes) for host, changes in result.changes.items()}
    for host in {**result.failed_hosts, **result.unreachable_messages}:
        drifted.setdefault(host, [])
    for host, changes in sorted(result.changes.items()):
        for task, path in changes:
            where = f" {path}" if path else ""
            _lifeline.say(f"drift: provision {props['group']}: host {host}:{where} task {task!r} would change it;"
                          " `up` provisions the host again")
    return drifted


def _is_unknown(value: Any) -> bool:
    """An input a preview cannot know. The engine hands a dynamic provider's diff a pulumi.output.Unknown object
    (seen with engine v3.260.0: a two-resource program, the second's input an output of the first, which had an
    update pending); the rpc sentinel string is what the serialized form carries."""
    from pulumi.output import Unknown

    return isinstance(value, Unknown) or value == _UNKNOWN


def _live_inputs(olds: Mapping[str, Any], news: Mapping[str, Any], changed: Sequence[str]) -> dict[str, Any] | None:
    """The inputs to read the hosts' live state with (identity, services, check mode), or None when the
    declaration changed (the update provisions anyway) or there is nothing to read them over. A preview with
    a Lab update pending (a router's frr.conf or a host drifted) has the Lab's ssh_config as unknown: the lab
    keeps that path across an update (a replacement changes the lab and its hash), so the recorded one
    reads the hosts, and `drift` names a host's drift beside the switch's."""
    if not olds.get("identity"):
        return None
    props = dict(news)
    if _is_unknown(news.get("ssh_config")) and isinstance(olds.get("ssh_config"), str):
        props["ssh_config"] = olds["ssh_config"]
        changed = [key for key in changed if key != "ssh_config"]
    if changed or not isinstance(props.get("ssh_config"), str):
        return None
    return props


class HostProvisionProvider(ResourceProvider):
    serialize_as_secret_always = False

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = []
        for key in ("inventory_path", "private_data_dir"):
            if not str(news.get(key) or "").startswith("/"):
                failures.append(CheckFailure(key, f"{key} must be an absolute path"))
        if news.get("playbook") and not str(news["playbook"]).startswith("/"):
            failures.append(CheckFailure("playbook", "playbook must be an absolute path"))
        return CheckResult(news, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in (*REPLACE_KEYS, *UPDATE_KEYS) if olds.get(key) != news.get(key)]
        live = _live_inputs(olds, news, changed)
        found: list[str] = []
        if live is not None:
            # Same declaration: are the hosts still the machines we provisioned, and up?
            from clusterforge.pulumi.providers._host_probe import drift

            for host, why in sorted(drift(dict(olds["identity"]), live["ssh_config"]).items()):
                _lifeline.say(f"drift: provision {news['group']}: host {host} {why}; `up` provisions it again")
                found = ["identity"]
            if not found and news.get("services"):
                from clusterforge.pulumi.providers._host_probe import inactive_units

                down = inactive_units(sorted(olds["identity"]), live["ssh_config"], list(news["services"]))
                for host, why in sorted(down.items()):
                    _lifeline.say(f"drift: provision {news['group']}: host {host}: {why}; `up` starts it again")
                    found = ["services"]
            if not found and news.get("nodes"):
                from clusterforge.pulumi.providers._host_probe import unregistered_nodes

                first = news.get("nodes_via") or list(news["hosts"])[0]
                missing = unregistered_nodes(first, live["ssh_config"], list(news["nodes"]))
                if missing:
                    _lifeline.say(f"drift: provision {news['group']}: host {first}: {missing}; `up` registers"
                                  " them again")
                    found = ["nodes"]
        if live is not None and not found and _host_drift_wanted(live):
            drifted = _host_drift(live)  # the hosts as they are now against their rendered host_vars
            if drifted:
                _DRIFTED[news["group"]] = sorted(drifted)
                found = ["host_drift"]
        changed = changed or found
        return DiffResult(changes=bool(changed), replaces=[k for k in REPLACE_KEYS if k in changed])

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"provision-{props['group']}", self._provision(props, runs=0))

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        same = all(olds.get(key) == news.get(key) for key in (*REPLACE_KEYS, *UPDATE_KEYS))
        hosts = _DRIFTED.pop(news["group"], None) if same else None  # only host drift: exactly those hosts
        return UpdateResult(self._provision(news, runs=int(olds.get("runs") or 0), hosts=hosts))

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        return None

    @staticmethod
    def _provision(props: dict[str, Any], runs: int, hosts: Sequence[str] | None = None) -> dict[str, Any]:
        _lifeline.watch()
        _prepare_environment()
        extravars = {**(props.get("extravars") or {}), **(props.get("secret_vars") or {})}
        if hosts:
            _lifeline.say(f"provision {props['group']}: re-provisioning the drifted host(s) {', '.join(hosts)}")
        outcome = _run_playbook(props, extravars) if props.get("playbook") else _provision_site(props, extravars,
                                                                                                hosts)
        if _lifeline.cancelled():
            raise ProvisionFailed(f"provisioning {props['group']} was interrupted (the engine run stopped)")
        if outcome.failed:
            lines = "\n".join(f"  {host}: {reason}" for host, reason in sorted(outcome.failed.items()))
            raise ProvisionFailed(f"provisioning {props['group']} failed on {len(outcome.failed)} host(s):\n{lines}")
        changed = {host: outcome.changed.get(host, 0) for host in props.get("hosts") or sorted(outcome.changed)}
        return {**props, "changed": changed, "runs": runs + 1, "identity": _identity(props)}


class HostProvision(Resource, module="clusterforge", name="HostProvision"):
    """pulumi-python:dynamic/clusterforge:HostProvision — outputs `changed` {host: changed tasks}, `runs`."""

    changed: pulumi.Output[dict[str, int]]
    runs: pulumi.Output[int]

    def __init__(self, name: str, args: HostProvisionArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        props: dict[str, Any] = {
            "group": args.group, "hosts": list(args.hosts), "inventory_path": args.inventory_path,
            "private_data_dir": args.private_data_dir, "roles_hash": args.roles_hash,
            "host_vars_hash": args.host_vars_hash, "playbook": args.playbook, "playbook_hash": args.playbook_hash,
            "tags": args.tags, "extravars": dict(args.extravars), "ssh_config": args.ssh_config,
            "secret_vars": pulumi.Output.secret(args.secret_vars) if args.secret_vars is not None else None,
            "services": list(args.services) or None,  # None as before: no re-run of existing stacks
            "nodes": list(args.nodes) or None,  # a probe only (not an update key): existing stacks do not re-run
            "nodes_via": args.nodes_via,
            "changed": None, "runs": None, "identity": None,
        }
        super().__init__(HostProvisionProvider(), name, props, opts)
