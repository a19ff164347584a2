"""HostProvision through the real engine and ansible-runner, and secrets kept out of plain text.

The stack provisions SU 1 of the lab declaration with a tiny local playbook (connection: local, one
file per host in a temp dir) instead of playbooks/site.yml, so the wiring is tested without hosts:
inputs → ansible-runner → per-host outputs, re-run only when a hash changes, per-host failures.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from pulumi import automation as auto
from pulumi_fixtures import LAB_INVENTORY, state_file

from clusterforge.loading import load_and_plan
from clusterforge.pulumi import automation
from clusterforge.pulumi.automation import Backend, StackRun

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

STACK = "lab-provision"
BMC_PASSWORD = "bmc-Pa55-6f1d9e0c-never-plain"
SWITCH_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nc3dpdGNoLWtleS1uZXZlci1wbGFpbg==\n-----END OPENSSH PRIVATE KEY-----"
SWITCH_KEY_MARKER = "c3dpdGNoLWtleS1uZXZlci1wbGFpbg"
FAILING_HOST = "su01-r02-gpu01"

PLAYBOOK = """\
- name: Record each host of the group.
  hosts: all
  connection: local
  gather_facts: false
  vars:
    ansible_python_interpreter: "{{{{ ansible_playbook_python }}}}"
  tasks:
    - name: Fail where the test says so.
      ansible.builtin.fail:
        msg: "disk missing on {{{{ inventory_hostname }}}}"
      when: inventory_hostname == "{fail}"
    - name: Write one file per host, with the length of the BMC password it was handed.
      ansible.builtin.copy:
        dest: "{out}/{{{{ inventory_hostname }}}}"
        content: "{{{{ cf_name }}}} {version} bmc-length={{{{ cf_bmc_password | length }}}}\\n"
        mode: "0644"
"""


@dataclass
class Provisioning:
    su_one_hosts: list[str]
    storage_hosts: list[str]
    out: Path
    first_up: StackRun
    first_files: dict[str, str]
    steady: StackRun
    changed_preview: StackRun
    second_up: StackRun
    second_files: dict[str, str]
    runs_after_second: int
    changed_after_second: dict[str, int]
    failure: str
    runs_after_failure: int
    engine_output: str
    state_text: str
    stack_config_text: str
    work_dir: Path


def _files(out: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(out.iterdir())}


def _provision_outputs(backend: Backend, group: str = "su01") -> dict:
    import json

    state = json.loads(state_file(backend, STACK).read_text())
    for resource in state["checkpoint"]["latest"]["resources"]:
        if resource["type"].endswith("clusterforge:HostProvision") and resource["outputs"].get("group") == group:
            return resource["outputs"]
    raise AssertionError(f"no HostProvision of group {group} in state")


@pytest.fixture(scope="module")
def provisioning(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Provisioning:
    work = tmp_path_factory.mktemp("provision")
    out, playbook = work / "out", work / "record.yml"
    out.mkdir()
    _, plan, _ = load_and_plan(LAB_INVENTORY)
    hosts = sorted(d.name for d in plan.devices if d.su == 1 and d.kind == "server")
    storage = sorted(d.name for d in plan.devices if d.kind == "storage")
    playbook.write_text(PLAYBOOK.format(out=out, version="v1", fail="none"))
    stack = automation.open_stack(STACK, {
        "inventory": str(LAB_INVENTORY), "target": "files", "provision": "true", "verify": "false",
        "switchConfigDir": str(work / "switch-configs"), "playbook": str(playbook),
    }, backend)  # fmt: skip
    # What `pulumi config set --secret` does (the Automation API runs exactly that command).
    stack.set_config("clusterforge:bmcPassword", auto.ConfigValue(BMC_PASSWORD, secret=True))
    stack.set_config("clusterforge:switchSshKey", auto.ConfigValue(SWITCH_KEY, secret=True))
    output: list[str] = []

    first_up = automation.up(stack, on_output=output.append)
    first_files = _files(out)
    steady = automation.preview(stack, on_output=output.append)

    playbook.write_text(PLAYBOOK.format(out=out, version="v2", fail="none"))
    changed_preview = automation.preview(stack, diff=True, on_output=output.append)
    second_up = automation.up(stack, on_output=output.append)
    second_files = _files(out)
    after_second = _provision_outputs(backend)

    playbook.write_text(PLAYBOOK.format(out=out, version="v3", fail=FAILING_HOST))
    try:
        automation.up(stack, on_output=output.append)
        failure = ""
    except auto.CommandError as exc:
        failure = str(exc)
    work_dir = automation.stack_work_dir(backend, STACK)
    return Provisioning(
        hosts, storage, out, first_up, first_files, steady, changed_preview, second_up, second_files,
        int(after_second["runs"]), after_second["changed"], failure, int(_provision_outputs(backend)["runs"]),
        "".join(output), state_file(backend, STACK).read_text(), (work_dir / f"Pulumi.{STACK}.yaml").read_text(),
        work_dir,
    )  # fmt: skip


def test_up_runs_the_playbook_on_every_host_of_the_su_and_the_storage_servers(provisioning: Provisioning) -> None:
    assert provisioning.storage_hosts  # the lab plans a storage server: provisioned as its own group
    assert sorted(provisioning.first_files) == sorted(provisioning.su_one_hosts + provisioning.storage_hosts)


def test_the_secret_reaches_ansible(provisioning: Provisioning) -> None:
    for host, text in provisioning.first_files.items():
        assert text == f"{host} v1 bmc-length={len(BMC_PASSWORD)}\n"


def test_host_provision_is_created_after_the_switch_configs(provisioning: Provisioning) -> None:
    steps = [s.name for s in provisioning.first_up.summary.steps if s.op == "create"]
    configs = [i for i, name in enumerate(steps) if name.endswith("-config")]
    assert steps.index("su01-provision") > max(configs)


def test_unchanged_inputs_do_not_rerun(provisioning: Provisioning) -> None:
    assert provisioning.steady.summary.changes == 0


def test_a_changed_playbook_updates_only_host_provision(provisioning: Provisioning) -> None:
    updates = sorted(s.name for s in provisioning.changed_preview.summary.by_op()["update"])
    assert updates == ["storage-provision", "su01-provision"]
    assert provisioning.changed_preview.summary.changes == 2


def test_the_update_reruns_the_playbook(provisioning: Provisioning) -> None:
    assert provisioning.second_up.summary.count("update") == 2
    for host, text in provisioning.second_files.items():
        assert text.startswith(f"{host} v2 ")
    assert provisioning.runs_after_second == 2


def test_changed_counts_are_outputs_per_host(provisioning: Provisioning) -> None:
    assert provisioning.changed_after_second == {host: 1 for host in provisioning.su_one_hosts}


def test_a_failed_host_fails_the_update_with_its_reason(provisioning: Provisioning) -> None:
    assert "provisioning su01 failed on 1 host(s)" in provisioning.failure
    assert f"{FAILING_HOST}: task 'Fail where the test says so.' failed: disk missing on {FAILING_HOST}" \
        in provisioning.failure
    assert provisioning.runs_after_failure == 2  # the failed run is not recorded as applied


@pytest.mark.parametrize("secret", [BMC_PASSWORD, SWITCH_KEY_MARKER])
def test_secrets_are_not_in_the_state_file(provisioning: Provisioning, secret: str) -> None:
    assert secret not in provisioning.state_text


@pytest.mark.parametrize("secret", [BMC_PASSWORD, SWITCH_KEY_MARKER])
def test_secrets_are_encrypted_in_the_stack_config(provisioning: Provisioning, secret: str) -> None:
    assert secret not in provisioning.stack_config_text
    assert "secure: v1:" in provisioning.stack_config_text


@pytest.mark.parametrize("secret", [BMC_PASSWORD, SWITCH_KEY_MARKER])
def test_secrets_are_not_in_engine_output(provisioning: Provisioning, secret: str) -> None:
    assert secret not in provisioning.engine_output
    assert secret not in provisioning.failure


def _runner_files(provisioning: Provisioning) -> dict[Path, str]:
    files = {p: p.read_text(errors="replace") for p in (provisioning.work_dir / "provision").rglob("*") if p.is_file()}
    assert any(p.name == "command" for p in files)  # ansible-runner's record of the run (with its environment)
    return files


def test_the_bmc_password_is_not_left_in_ansible_runner_files(provisioning: Provisioning) -> None:
    assert [p for p, text in _runner_files(provisioning).items() if BMC_PASSWORD in text] == []


def test_the_passphrase_is_not_left_in_ansible_runner_files(provisioning: Provisioning, backend: Backend) -> None:
    passphrase_file = backend.state_dir / "passphrase"
    passphrase = (passphrase_file.read_text().strip() if passphrase_file.exists()
                  else os.environ.get("PULUMI_CONFIG_PASSPHRASE", ""))
    assert passphrase
    assert [p for p, text in _runner_files(provisioning).items() if passphrase in text] == []
