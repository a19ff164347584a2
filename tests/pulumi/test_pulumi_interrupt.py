"""`clusterforge up` interrupted while Ansible runs, then run again: real CLI, engine, providers and ansible-runner.

The stack provisions SU 1 of the lab declaration with a local playbook whose task sleeps while a
hold file exists (no hosts needed). The CLI runs in a session of its own, as a shell runs a command:

* Ctrl-C (SIGINT to the whole process group, as a terminal sends it): the CLI names what was in
  flight, stops every child, exits 130; no process of the run is left, the stack has no lock and
  no pending operation, and the next `up` converges without any manual Pulumi command.
* The CLI and the engine killed outright (SIGKILL): the provider notices its engine is gone and
  stops its playbook; the next `up` releases the stale lock, clears the pending create, converges.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from polling import until
from pulumi_fixtures import LAB_INVENTORY, cli_env, state_file

from clusterforge.pulumi import automation
from clusterforge.pulumi.recovery import lock_files

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

# every host the site playbook provisions on inventory/lab.yaml: the storage server, then the SU's GPU servers
PROVISIONED = ("stor-001", "su01-r01-gpu01", "su01-r01-gpu02", "su01-r02-gpu01", "su01-r02-gpu02")
PLAYBOOK = """\
- name: Provision, slowly while the hold file exists.
  hosts: all
  connection: local
  gather_facts: false
  vars:
    ansible_python_interpreter: "{{{{ ansible_playbook_python }}}}"
  tasks:
    - name: Say this host started.
      ansible.builtin.file:
        path: "{out}/started-{{{{ inventory_hostname }}}}"
        state: touch
        mode: "0644"
    - name: Hold while the test says so.
      ansible.builtin.command: sleep {token}
      when: "'{hold}' is file"
      changed_when: false
    - name: Say this host finished.
      ansible.builtin.copy:
        dest: "{out}/done-{{{{ inventory_hostname }}}}"
        content: "done\\n"
        mode: "0644"
"""


def _session(sid: int) -> list[tuple[int, str]]:
    """Processes still in session ``sid`` (ours), or running the test's sleep, with their state."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:
            found.append((int(entry), fields[0]))
    return found


def _argv(entry: tuple[int, str]) -> str:
    try:
        return Path(f"/proc/{entry[0]}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _sleepers(token: str) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", token.encode()]:
            out.append(int(entry))
    return out


class Run:
    def __init__(self, backend, work: Path, stack: str, token: str) -> None:
        self.backend, self.work, self.stack, self.token = backend, work, stack, token
        self.out, self.hold = work / "out", work / "hold"
        self.out.mkdir(parents=True, exist_ok=True)
        playbook = work / "slow.yml"
        playbook.write_text(PLAYBOOK.format(out=self.out, hold=self.hold, token=token))
        automation.open_stack(stack, {
            "inventory": str(LAB_INVENTORY), "target": "files", "provision": "true", "verify": "false",
            "switchConfigDir": str(work / "switch-configs"), "playbook": str(playbook),
        }, backend)  # fmt: skip
        self.env = cli_env(backend)

    def start(self) -> subprocess.Popen:
        argv = [sys.executable, "-c", "from clusterforge.cli import main; main()", "up", str(LAB_INVENTORY),
                "--stack", self.stack, "--target", "files", "--provision", "--no-verify", "--yes"]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env,
                                start_new_session=True)

    def started_hosts(self) -> list[str]:
        return sorted(p.name.removeprefix("started-") for p in self.out.glob("started-*"))

    def done_hosts(self) -> list[str]:
        return sorted(p.name.removeprefix("done-") for p in self.out.glob("done-*"))

    def state(self) -> dict:
        return json.loads(state_file(self.backend, self.stack).read_text())["checkpoint"]["latest"]


def _engine_pids(root: int) -> list[int]:
    from clusterforge.ops.proctree import descendants

    return [p.pid for p in descendants(root) if p.argv and p.argv[0].endswith("/pulumi")]


def test_ctrl_c_stops_everything_and_the_next_up_converges(backend, tmp_path: Path) -> None:
    run = Run(backend, tmp_path, "interrupt-int", "293")
    run.hold.touch()
    cli = run.start()
    until("the playbook to hold", lambda: _sleepers(run.token), 240, 0.2)
    os.killpg(cli.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    out, err = cli.communicate(timeout=120)
    assert cli.returncode == 130, err
    assert "up of stack interrupt-int interrupted by SIGINT" in err
    # the storage servers provision first (they serve the GPU servers' mounts), so that group holds
    assert re.search(r"in flight: create HostProvision (storage|su01)-provision", err), err[-3000:]
    assert "Traceback" not in err and "I/O operation on closed file" not in err
    time.sleep(1)
    assert _sleepers(run.token) == [] and _session(cli.pid) == []  # no orphan, no zombie
    assert lock_files(backend.url, run.stack) == []
    assert not run.state().get("pending_operations")
    assert run.done_hosts() == []

    run.hold.unlink()
    again = run.start()
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    assert run.done_hosts() == run.started_hosts() and run.done_hosts() == sorted(PROVISIONED)
    assert "currently locked" not in err and "pending" not in err
    assert _session(again.pid) == []


def test_killed_run_is_recovered_by_the_next_up(backend, tmp_path: Path) -> None:
    run = Run(backend, tmp_path, "interrupt-kill", "294")
    run.hold.touch()
    cli = run.start()
    until("the playbook to hold", lambda: _sleepers(run.token), 240, 0.2)
    engines = _engine_pids(cli.pid)
    assert engines
    for pid in [cli.pid, *engines]:
        os.kill(pid, signal.SIGKILL)
    cli.communicate(timeout=30)
    # the provider sees its engine gone: it stops the playbook (every worker) and ends
    until("the provider and its playbook to stop",
          lambda: not _sleepers(run.token) and not [p for p in _session(cli.pid) if "pulumi.dynamic" in _argv(p)],
          60, 0.2)
    left = [pid for pid, _ in _session(cli.pid)]  # the engine's language host, orphaned by the kill
    assert lock_files(backend.url, run.stack)  # the engine died holding its lock
    pending = run.state().get("pending_operations") or []
    held = [op["resource"]["urn"].rsplit("::", 1)[1] for op in pending
            if op["resource"]["urn"].endswith("-provision")]
    assert len(held) == 1, pending

    run.hold.unlink()
    again = run.start()
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    assert "released the lock of an interrupted run" in err
    if left:
        assert "process(es) an interrupted run left running" in err and f"pid {left[0]}" in err
    assert _session(cli.pid) == []
    assert "cleared 1 pending operation(s)" in err and held[0] in err
    assert run.done_hosts() == sorted(PROVISIONED)
    assert lock_files(backend.url, run.stack) == [] and not run.state().get("pending_operations")
