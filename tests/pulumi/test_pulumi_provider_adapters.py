"""HostProvision and Verification providers against their modules' result types (no engine, no hosts).

The modules' runners are replaced by recorders here; the engine-level tests run the real
ansible-runner path (test_pulumi_provision.py), and the lab runs the real run_site/run_checks.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from clusterforge.provision import runner as provision_runner
from clusterforge.provision.runner import ProvisionResult
from clusterforge.pulumi.providers.host_provision import HostProvisionProvider, ProvisionFailed
from clusterforge.pulumi.providers.verification import VerificationFailed, VerificationProvider
from clusterforge.verify import runner as verify_runner
from clusterforge.verify.runner import HostResult, VerifyResult

HOSTS = ["su01-r01-gpu01", "su01-r01-gpu02"]


def _provision_props(tmp_path: Path, **extra) -> dict:
    return {"group": "su01", "hosts": HOSTS, "inventory_path": str(tmp_path / "inventory.yml"),
            "private_data_dir": str(tmp_path / "pdd"), "roles_hash": "r", "host_vars_hash": "h", "playbook": None,
            "tags": None, "extravars": {"cf_lab": True}, "ssh_config": None,
            "secret_vars": {"cf_bmc_password": "s3cret"}, **extra}


def _result(**overrides) -> ProvisionResult:
    values = {"ok": True, "changed_per_host": {HOSTS[0]: 3, HOSTS[1]: 0}, "failed_hosts": {},
              "unreachable_hosts": [], "stats": {}}
    return ProvisionResult(**{**values, **overrides})


@pytest.fixture
def run_site_calls(monkeypatch: pytest.MonkeyPatch):
    calls: list[dict] = []
    results: list[ProvisionResult] = []

    def fake_run_site(inventory_path, private_data_dir, limit=None, tags=None, extravars=None, ssh_config=None,
                      progress=None, cancel=None, check=False):
        vars_file = Path(private_data_dir) / "env" / "extravars"
        calls.append({"limit": limit, "check": check, "extravars": extravars, "ssh_config": ssh_config,
                      "vars": json.loads(vars_file.read_text()),
                      "vars_mode": stat.S_IMODE(vars_file.stat().st_mode), "env": dict(os.environ)})
        return results.pop(0) if results else _result()

    monkeypatch.setattr(provision_runner, "run_site", fake_run_site)
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "engine-passphrase")
    return calls, results


def test_run_site_gets_every_var_through_a_private_file(run_site_calls, tmp_path: Path) -> None:
    calls, _ = run_site_calls
    HostProvisionProvider().create(_provision_props(tmp_path))
    assert calls[0]["extravars"] is None  # nothing on ansible-playbook's command line
    assert calls[0]["vars"] == {"cf_lab": True, "cf_bmc_password": "s3cret"}
    assert calls[0]["vars_mode"] == 0o600


def test_the_vars_file_is_gone_after_the_run(run_site_calls, tmp_path: Path) -> None:
    HostProvisionProvider().create(_provision_props(tmp_path))
    assert not (tmp_path / "pdd" / "env" / "extravars").exists()


def test_ansible_never_sees_the_engine_passphrase(run_site_calls, tmp_path: Path) -> None:
    calls, _ = run_site_calls
    HostProvisionProvider().create(_provision_props(tmp_path))
    assert "PULUMI_CONFIG_PASSPHRASE" not in calls[0]["env"]
    assert calls[0]["env"]["ANSIBLE_HOST_KEY_CHECKING"] == "True"


def test_the_limit_is_the_group(run_site_calls, tmp_path: Path) -> None:
    calls, _ = run_site_calls
    HostProvisionProvider().create(_provision_props(tmp_path))
    assert calls[0]["limit"] == "su01"


def test_changed_counts_per_host_and_runs_are_outputs(run_site_calls, tmp_path: Path) -> None:
    outs = HostProvisionProvider().create(_provision_props(tmp_path)).outs
    assert (outs["changed"], outs["runs"]) == ({HOSTS[0]: 3, HOSTS[1]: 0}, 1)
    assert HostProvisionProvider().update("id", outs, _provision_props(tmp_path, roles_hash="r2")).outs["runs"] == 2


def test_failed_and_unreachable_hosts_raise_with_their_reasons(run_site_calls, tmp_path: Path) -> None:
    _, results = run_site_calls
    results.append(_result(ok=False, failed_hosts={HOSTS[0]: "Install the driver.: no space left"},
                           unreachable_hosts=[HOSTS[1]], unreachable_messages={HOSTS[1]: "ssh: timed out"}))
    with pytest.raises(ProvisionFailed) as failure:
        HostProvisionProvider().create(_provision_props(tmp_path))
    assert str(failure.value).splitlines()[1:] == [
        f"  {HOSTS[0]}: failed: Install the driver.: no space left",
        f"  {HOSTS[1]}: unreachable: ssh: timed out",
    ]


def test_a_changed_hash_reruns_and_the_group_replaces(tmp_path: Path) -> None:
    olds = _provision_props(tmp_path)
    provider = HostProvisionProvider()
    assert provider.diff("id", olds, _provision_props(tmp_path, host_vars_hash="h2")).replaces == []
    assert provider.diff("id", olds, _provision_props(tmp_path, host_vars_hash="h2")).changes
    assert provider.diff("id", olds, _provision_props(tmp_path, group="su02")).replaces == ["group"]
    assert not provider.diff("id", olds, _provision_props(tmp_path)).changes


# --- Verification ----------------------------------------------------------------------------------


def _verify_props(tmp_path: Path, **extra) -> dict:
    return {"group": "su01", "hosts": HOSTS, "inventory_path": str(tmp_path / "inventory.yml"), "target": "lab",
            "report_path": str(tmp_path / "su01.json"), "suite_hash": "v", "provision_runs": 1,
            "ssh_config": str(tmp_path / "ssh_config"), "allow_failures": False, **extra}


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch):
    calls: list[tuple] = []
    result = VerifyResult(per_host={
        HOSTS[0]: HostResult(passed=5),
        HOSTS[1]: HostResult(passed=4, failed=1, failures=[{"test": "kernel::test_nouveau_blacklisted",
                                                           "message": "no blacklist line"}]),
    }, passed=9, failed=1, skipped=2, simulated=3)

    def fake_run_checks(inventory_dir, target, hosts, ssh_config, report_json, **_):
        calls.append((inventory_dir, target, hosts, ssh_config, report_json))
        return result

    monkeypatch.setattr(verify_runner, "run_checks", fake_run_checks)
    return calls, result


def test_failed_checks_fail_the_update_naming_each(checks, tmp_path: Path) -> None:
    with pytest.raises(VerificationFailed,
                       match=rf"{HOSTS[1]} failed kernel::test_nouveau_blacklisted \(no blacklist line\)"):
        VerificationProvider().create(_verify_props(tmp_path))


def test_allowed_failures_are_recorded_as_counts(checks, tmp_path: Path) -> None:
    outs = VerificationProvider().create(_verify_props(tmp_path, allow_failures=True)).outs
    assert (outs["passed"], outs["failed"], outs["skipped"], outs["simulated"]) == (9, 1, 2, 3)


def test_checks_run_on_the_group_hosts_over_the_lab_ssh_config(checks, tmp_path: Path) -> None:
    calls, result = checks
    result.failed, result.per_host[HOSTS[1]].failures = 0, []
    VerificationProvider().create(_verify_props(tmp_path))
    assert calls == [(tmp_path / "inventory.yml", "lab", HOSTS, tmp_path / "ssh_config", tmp_path / "su01.json")]


def test_a_new_provisioning_run_reverifies(tmp_path: Path) -> None:
    olds = _verify_props(tmp_path)
    assert VerificationProvider().diff("id", olds, _verify_props(tmp_path, provision_runs=2)).changes


def test_host_drift_is_a_check_mode_run_and_the_update_provisions_only_the_drifted_host(
        run_site_calls, tmp_path: Path, monkeypatch, capfd) -> None:
    """diff (same declaration) runs the site playbook in check mode; what it would change is drift naming host,
    file and task; the update of the same engine run provisions exactly that host."""
    from clusterforge.pulumi.providers import _host_probe

    calls, results = run_site_calls
    monkeypatch.setattr(_host_probe, "drift", lambda recorded, ssh_config: {})  # same machines, all answering
    monkeypatch.setattr("clusterforge.pulumi.providers.host_provision._identity", lambda props: None)
    props = _provision_props(tmp_path, ssh_config=str(tmp_path / "ssh_config"))
    olds = {**props, "identity": {h: "m" for h in HOSTS}, "runs": 1}
    results.append(_result(changes={HOSTS[1]: [("Ensure nouveau is blacklisted.",
                                                 "/etc/modprobe.d/blacklist-nouveau.conf")]}))
    provider = HostProvisionProvider()
    assert provider.diff("provision-su01", olds, props).changes
    assert calls[-1]["check"] is True and calls[-1]["limit"] == "su01"
    said = capfd.readouterr()
    assert (f"drift: provision su01: host {HOSTS[1]}: /etc/modprobe.d/blacklist-nouveau.conf task"
            " 'Ensure nouveau is blacklisted.' would change it") in said.out + said.err
    provider.update("provision-su01", olds, props)
    assert calls[-1]["check"] is False and calls[-1]["limit"] == [HOSTS[1]]


def test_no_host_drift_is_no_change(run_site_calls, tmp_path: Path, monkeypatch) -> None:
    from clusterforge.pulumi.providers import _host_probe

    calls, results = run_site_calls
    monkeypatch.setattr(_host_probe, "drift", lambda recorded, ssh_config: {})
    props = _provision_props(tmp_path, ssh_config=str(tmp_path / "ssh_config"))
    olds = {**props, "identity": {h: "m" for h in HOSTS}, "runs": 1}
    results.append(_result(changes={}))
    assert not HostProvisionProvider().diff("provision-su01", olds, props).changes
    assert calls[-1]["check"] is True


@pytest.mark.parametrize("unknown", ["object", "sentinel"])
def test_host_drift_is_read_while_a_lab_update_is_pending(run_site_calls, tmp_path: Path, monkeypatch, capfd,
                                                          unknown: str) -> None:
    """A preview with a Lab update pending (a switch's frr.conf drifted too) has the Lab's ssh_config unknown: the
    recorded path still reads the hosts, so `drift` names the host's drift beside the switch's (on the lab it named
    only the switch). A changed declaration still skips the read (its update provisions anyway). The engine hands
    diff a pulumi.output.Unknown object (tests/lab_cluster/test_drift_repair.py on the lab: with only the rpc
    sentinel string recognised, drift named the switch and not the host), the wire form is the sentinel string."""
    from pulumi.output import Unknown
    from pulumi.runtime import rpc

    from clusterforge.pulumi.providers import _host_probe

    calls, results = run_site_calls
    monkeypatch.setattr(_host_probe, "drift", lambda recorded, ssh_config: {})
    recorded = str(tmp_path / "ssh_config")
    olds = {**_provision_props(tmp_path, ssh_config=recorded), "identity": {h: "m" for h in HOSTS}, "runs": 1}
    pending = _provision_props(tmp_path, ssh_config=Unknown() if unknown == "object" else rpc.UNKNOWN)
    results.append(_result(changes={HOSTS[0]: [("Ensure nouveau is blacklisted.", "/etc/x.conf")]}))
    assert HostProvisionProvider().diff("provision-su01", olds, pending).changes
    assert calls[-1]["check"] is True and calls[-1]["ssh_config"] == Path(recorded)
    said = capfd.readouterr()
    assert f"drift: provision su01: host {HOSTS[0]}: /etc/x.conf task" in said.out + said.err
    before = len(calls)
    assert HostProvisionProvider().diff("provision-su01", olds, {**pending, "host_vars_hash": "h2"}).changes
    assert len(calls) == before  # no check-mode read


def test_a_node_the_api_server_no_longer_lists_is_drift(run_site_calls, tmp_path: Path, monkeypatch, capfd) -> None:
    """The Kubernetes step's `nodes` probe: with an unchanged declaration, a planned node missing from the API
    server's node list is drift naming it (the update runs the step again, which registers it); all listed is
    no change."""
    from clusterforge.pulumi.providers import _host_probe

    calls, results = run_site_calls
    monkeypatch.setattr(_host_probe, "drift", lambda recorded, ssh_config: {})
    monkeypatch.setattr(_host_probe, "inactive_units", lambda hosts, ssh_config, units: {})
    monkeypatch.setattr("clusterforge.pulumi.providers.host_provision._host_drift_wanted", lambda props: False)
    asked = []

    def unregistered(host, ssh_config, nodes):
        asked.append((host, ssh_config, tuple(nodes)))
        return None

    monkeypatch.setattr(_host_probe, "unregistered_nodes", unregistered)
    props = _provision_props(tmp_path, group="control_nodes", hosts=["ctl-01"], services=["etcd"],
                             nodes=["gpu01", "gpu02"], ssh_config=str(tmp_path / "ssh_config"))
    olds = {**props, "identity": {"ctl-01": "m"}, "runs": 1}
    assert not HostProvisionProvider().diff("provision-control_nodes", olds, props).changes
    assert asked == [("ctl-01", str(tmp_path / "ssh_config"), ("gpu01", "gpu02"))]
    monkeypatch.setattr(_host_probe, "unregistered_nodes", lambda host, ssh_config, nodes:
                        "node(s) gpu02 not registered with the API server")
    assert HostProvisionProvider().diff("provision-control_nodes", olds, props).changes
    said = capfd.readouterr()
    assert ("drift: provision control_nodes: host ctl-01: node(s) gpu02 not registered with the API server;"
            " `up` registers them again") in said.out + said.err
    assert calls == []  # no playbook run in a diff


def test_unregistered_nodes_reads_the_api_servers_node_list(tmp_path: Path, monkeypatch) -> None:
    """Through a stand-in `ssh` on PATH printing what `kubectl get nodes -o name` prints; the node names never
    reach the remote command line."""
    from clusterforge.pulumi.providers._host_probe import unregistered_nodes

    fake = tmp_path / "bin"
    fake.mkdir()
    argv_file = tmp_path / "argv"
    (fake / "ssh").write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {argv_file}\n"
                              "printf 'node/gpu01\\nnode/gpu03\\n'\n")
    (fake / "ssh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    assert unregistered_nodes("ctl-01", "cfg", ["gpu01", "gpu02", "gpu03"]) == (
        "node(s) gpu02 not registered with the API server")
    assert unregistered_nodes("ctl-01", "cfg", ["gpu01", "gpu03"]) is None
    assert "gpu0" not in argv_file.read_text()
    (fake / "ssh").write_text("#!/bin/sh\necho 'The connection to the server was refused' >&2\nexit 1\n")
    assert unregistered_nodes("ctl-01", "cfg", ["gpu01"]) == (
        "the API server's node list could not be read (The connection to the server was refused)")
