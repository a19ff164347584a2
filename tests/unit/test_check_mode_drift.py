"""Check mode's blind spot: Ansible skips `command`/`shell` tasks in check mode, so what a role changes through
one (a RoCE interface's MTU, the GlusterFS trusted pool, volumes, volume options, started volumes) would be
invisible to `clusterforge drift` (site playbook in check mode). Every such task in a role the site playbook
runs is either a read that runs in check mode too (check_mode: false, changed_when: false), or follows a
check-mode reporter: a debug task on the same loop, vars and conditions plus `ansible_check_mode`, reporting
changed where the command would run. Only the roles' YAML is read here; tests/roles/test_mtu_drift.py breaks
one such state on the lab (an interface's MTU) and sees check mode name it and the site playbook repair it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("ansible.builtin.command", "ansible.builtin.shell", "command", "shell", "ansible.builtin.raw", "raw")
# Roles the drift check does not read in check mode, and why.
NOT_CHECKED = {
    "k8s_control_plane": "playbooks/kubernetes.yml; its drift is the control-plane services probe",
    "k8s_gpu": "kubectl against the API server (kubernetes.yml, or site.yml with a kubeconfig, not in drift's run)",
}
# Single tasks left as they are, and why.
EXEMPT = {
    ("nvidia_driver", "Lock the NVIDIA driver packages at their installed version."):
        "RedHat only (no RedHat lab host to read dnf's lock list on); check mode skips it, never a false drift",
}


def _site_roles() -> list[str]:
    plays = yaml.safe_load((ROOT / "playbooks" / "site.yml").read_text())
    return sorted({(r["role"] if isinstance(r, dict) else r) for play in plays for r in play.get("roles", [])})


def _tasks(path: Path) -> list[dict]:
    found: list[dict] = []

    def walk(tasks):
        for task in tasks or []:
            if isinstance(task, dict):
                found.append(task)
                for key in ("block", "rescue", "always"):
                    walk(task.get(key))
    walk(yaml.safe_load(path.read_text()))
    return found


def _cases() -> list[tuple[str, Path, int]]:
    cases = []
    for role in _site_roles():
        if role in NOT_CHECKED:
            continue
        for path in sorted((ROOT / "roles" / role / "tasks").glob("*.yml")):
            for index, task in enumerate(_tasks(path)):
                if any(m in task for m in COMMANDS) and (role, task.get("name")) not in EXEMPT:
                    cases.append((role, path, index))
    return cases


CASES = _cases()


def _when(task: dict) -> list:
    when = task.get("when", [])
    return when if isinstance(when, list) else [when]


def test_the_site_roles_have_command_tasks_to_check():
    assert len(CASES) >= 10 and {"roce_host", "storage_server"} <= {role for role, _, _ in CASES}


@pytest.mark.parametrize(("role", "path", "index"), CASES,
                         ids=[f"{c[0]}:{_tasks(c[1])[c[2]].get('name')}" for c in CASES])
def test_a_command_task_is_a_read_or_has_a_check_mode_reporter(role, path, index):
    tasks = _tasks(path)
    task = tasks[index]
    if task.get("check_mode") is False:
        assert task.get("changed_when") is False, f"{task['name']}: a command run in check mode must only read"
        return
    assert task.get("changed_when") is True and _when(task), (
        f"{task['name']}: a changing command must be guarded by a read (when) and report changed_when: true;"
        " one that decides from its own output cannot be seen in check mode")
    reporter = tasks[index - 1] if index else {}
    assert "ansible.builtin.debug" in reporter and "(check mode)" in str(reporter.get("name")), (
        f"{task['name']}: no check-mode reporter right before it")
    assert _when(reporter) == ["ansible_check_mode", *_when(task)]
    for key in ("loop", "vars"):
        assert reporter.get(key) == task.get(key), f"{reporter['name']}: {key} differs from {task['name']}"
    assert reporter.get("changed_when") is True


def test_the_reporters_change_nothing_outside_check_mode():
    """Each reporter runs only in check mode, so a provisioning run (and its second, changed=0 run) skips it."""
    for role in _site_roles():
        for path in sorted((ROOT / "roles" / role / "tasks").glob("*.yml")):
            for task in _tasks(path):
                if "(check mode)" in str(task.get("name")):
                    assert "ansible.builtin.debug" in task and _when(task)[0] == "ansible_check_mode", task["name"]
