"""Ctrl-C during provisioning of a real lab, then during its Kubernetes step, then `up` again: converged,
verified, nothing left behind.

Real engine, real lab (the verify tests' declaration as ``cfverif2``, with a control node), the real site
playbook over SSH (``provisionTags: nouveau`` keeps it short), per-host progress streamed into `up`'s
output. The CLI runs in its own session as a shell runs it; SIGINT goes to its whole process group, as a
terminal's Ctrl-C does: the first time once the first host reports a finished task, the second time once
the control node has its certificates and units written but not started (playbooks/kubernetes.yml). The
third `up` finishes and `verify` passes, the Kubernetes layer included (real kubelets, simulated GPUs). Without the
Kubernetes binaries (scripts/setup-k8s.sh) the Kubernetes half is skipped, and said so.

On that converged stack, host drift (issue #26): one GPU server's nouveau blacklist file removed by hand is
named by `drift` (host, file, task; exit 1, nothing changed), and the next `up` re-provisions that host
alone (the other hosts run no task) and puts the file back; the closing preview expects no changes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from pulumi_fixtures import cli_env, state_file
from verify_lab_copy import LAB, verify_lab_declaration

from clusterforge.lab import missing_prerequisites
from clusterforge.pulumi import automation
from clusterforge.pulumi.recovery import lock_files

pytestmark = [pytest.mark.pulumi, pytest.mark.slow, pytest.mark.lab]

STACK = "labint"
HOSTS = ("su01-r01-gpu01", "su01-r01-gpu02", "su01-r02-gpu01", "su01-r02-gpu02")
VICTIM = HOSTS[1]  # the host whose file is removed by hand
NOUVEAU_CONF = "/etc/modprobe.d/blacklist-nouveau.conf"  # roles/nouveau_blacklist/defaults/main.yml
NOUVEAU_TASK = "Ensure nouveau is blacklisted in modprobe.d."  # roles/nouveau_blacklist/tasks/main.yml


def _procs() -> dict[int, tuple[int, int, str, str, float]]:
    """pid -> (ppid, sid, state, command line, start time in clock ticks)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out[int(entry)] = (int(fields[1]), int(fields[3]), fields[0], argv, float(fields[19]))
    return out


def _left_behind(sid: int, since_ticks: float, work_dir: Path, run_tmp: Path) -> list[str]:
    """What the interrupted run left: a process of its session or naming its stack's work dir, or an ssh master
    (``ssh: DIR/HASH [mux]``, daemonised: parent PID 1) under the run's own temporary directory. Masters of other
    runs on this machine (the other pytest worker's playbooks) are theirs: their control directories are in
    another temporary directory (sshmux.private_control_dir)."""
    return [f"{pid} {state} {argv[:120]}" for pid, (ppid, s, state, argv, start) in _procs().items()
            if s == sid or str(work_dir) in argv
            or (start >= since_ticks and "[mux]" in argv and ppid == 1 and f"{run_tmp}/" in argv)]


def _boot_ticks() -> float:
    return float(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])


def _with_control_node(text: str) -> str:
    return text + "\ncontrol:\n  nodes: 1\n  server_model: control-1u\n"


def _kubernetes_binaries() -> bool:
    from clusterforge.pulumi.kube.binaries import MissingBinaries, kubernetes_bin_dir

    try:
        kubernetes_bin_dir()
    except MissingBinaries:
        return False
    return True


# The Kubernetes step's progress line once ctl-01 has its units written (changed: the first run), before they
# are started (roles/k8s_control_plane/tasks/main.yml: the next run finds them not running and starts them)
_UNITS_WRITTEN = (r"provision control_nodes: +\d+s ctl-01: changed +task +\d+ k8s_control_plane :"
                  r" Write the systemd units")


def _interrupt(up: list[str], env: dict, pattern: str, timeout_s: float = 900) -> tuple[subprocess.Popen, str]:
    """`up` in its own session, SIGINT to its process group once a line of its output matches ``pattern``."""
    cli = subprocess.Popen(up, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           start_new_session=True)
    seen = []
    deadline = time.monotonic() + timeout_s
    matched = False
    for line in cli.stderr:  # the engine's output, streamed
        seen.append(line)
        if re.search(pattern, line):
            matched = True
            break
        if time.monotonic() > deadline:
            break
    if cli.poll() is None:
        os.killpg(cli.pid, signal.SIGINT)
    _, err = cli.communicate(timeout=180)
    err = "".join(seen) + err
    assert matched, f"never saw {pattern!r}:\n{err[-3000:]}"
    return cli, err


def test_interrupt_during_lab_provisioning_then_up_converges(backend, tmp_path: Path) -> None:
    why = missing_prerequisites()
    if why:
        pytest.skip("the lab cannot run here: " + ", ".join(why))
    kubernetes = _kubernetes_binaries()
    declaration = verify_lab_declaration(tmp_path, _with_control_node if kubernetes else None)
    automation.open_stack(STACK, {"inventory": str(declaration), "target": "lab", "provision": "true",
                                           "verify": "false", "provisionTags": "nouveau",
                                           "image": "false"}, backend)
    work_dir = automation.stack_work_dir(backend, STACK)
    # the run's own temporary directory: its ssh masters' control directories are made there (sshmux), so the
    # orphan check finds this run's and no other's; short, as a unix socket path must stay under 108 bytes
    run_tmp = Path(tempfile.mkdtemp(prefix="cf-li-"))
    env = {**cli_env(backend), "TMPDIR": str(run_tmp)}
    up = [sys.executable, "-m", "clusterforge.cli", "up", str(declaration), "--stack", STACK, "--target", "lab",
          "--provision", "--no-verify", "--yes"]
    since = _boot_ticks()
    try:
        cli, err = _interrupt(up, env, r"provision su01: +\d+s su01-r\d\d-gpu\d\d: ", 600)
        assert cli.returncode == 130, err[-3000:]
        assert f"up of stack {STACK} interrupted by SIGINT" in err
        assert "in flight: create HostProvision su01-provision" in err
        time.sleep(2)
        assert _left_behind(cli.pid, since, work_dir, run_tmp) == []  # no orphan, no zombie of the run
        assert lock_files(backend.url, STACK) == []
        assert not json.loads(state_file(backend, STACK).read_text())["checkpoint"]["latest"].get("pending_operations")

        if kubernetes:  # Ctrl-C again, inside the Kubernetes step: certificates and units written, not started
            cli, err = _interrupt(up, env, _UNITS_WRITTEN)
            assert cli.returncode == 130, err[-3000:]
            assert f"up of stack {STACK} interrupted by SIGINT" in err
            assert "HostProvision kubernetes-control-plane" in err, err[-3000:]
            time.sleep(2)
            assert _left_behind(cli.pid, since, work_dir, run_tmp) == []
            assert lock_files(backend.url, STACK) == []
            latest = json.loads(state_file(backend, STACK).read_text())["checkpoint"]["latest"]
            assert not latest.get("pending_operations")

        again = subprocess.run(up, capture_output=True, text=True, env=env, timeout=900)
        assert again.returncode == 0, again.stderr[-3000:]
        assert "currently locked" not in again.stderr
        from clusterforge.lab import ssh_command

        for host in HOSTS:
            done = subprocess.run(ssh_command(LAB, host, ["ls /etc/modprobe.d/"]), capture_output=True,
                                  text=True, timeout=60)
            assert "nouveau" in done.stdout, (host, done.stderr)
        if kubernetes:  # verify: a GPU server's kernel checks and the whole Kubernetes layer, through the stack
            # (--no-monitoring: this run provisions only the nouveau tag, so no Prometheus answers)
            verify = subprocess.run([sys.executable, "-m", "clusterforge.cli", "verify", str(declaration),
                                     "--target", "lab", "--stack", STACK, "--host", HOSTS[0], "--check", "kernel",
                                     "--no-monitoring", "--format", "json"], capture_output=True, text=True, env=env,
                                    timeout=600)
            assert verify.returncode == 0, verify.stdout[-3000:] + verify.stderr[-2000:]
            checks = json.loads(verify.stdout)["kubernetes"]["checks"]
            assert checks and all(c["ok"] for c in checks), checks
        else:
            print("the Kubernetes half was skipped: no Kubernetes binaries (scripts/setup-k8s.sh)")
        _host_drift_seen_and_repaired(backend, declaration, env, up)
        steady = subprocess.run([*up[:3], "preview", *up[4:-1], "--expect-no-changes"],
                                capture_output=True, text=True, env=env, timeout=600)
        assert steady.returncode == 0, steady.stdout + steady.stderr[-2000:]
    finally:
        gone = subprocess.run([sys.executable, "-m", "clusterforge.cli", "destroy", "--stack", STACK, "--yes"],
                              capture_output=True, text=True, env=env, timeout=600)
        shutil.rmtree(run_tmp, ignore_errors=True)
        assert gone.returncode == 0, gone.stderr[-2000:]
    assert _lasting_orphan_zombies(since) == []


def _on(host: str, script: str) -> subprocess.CompletedProcess[str]:
    from clusterforge.lab import ssh_command

    return subprocess.run(ssh_command(LAB, host, [script]), capture_output=True, text=True, timeout=60)


def _su01_provision(backend) -> dict:
    for resource in json.loads(state_file(backend, STACK).read_text())["checkpoint"]["latest"]["resources"]:
        if resource["type"].endswith("clusterforge:HostProvision") and resource["outputs"].get("group") == "su01":
            return resource["outputs"]
    raise AssertionError("no HostProvision of group su01 in the state")


# a host that ran the site playbook: its per-host totals at the playbook's end (provision.progress.TaskProgress)
_HOST_DONE = re.compile(r"provision (\S+): +\d+s (\S+): done, \d+ tasks")


def _host_drift_seen_and_repaired(backend, declaration: Path, env: dict, up: list[str]) -> None:
    """Issue #26 on the converged stack: a file removed by hand on one host is drift named by host, file and
    task, and `up` re-provisions exactly that host."""
    stamp = f"stat -c '%i %Y' {NOUVEAU_CONF}"
    before = {host: _on(host, stamp) for host in HOSTS}
    assert all(p.returncode == 0 for p in before.values()), before  # every GPU server has the file
    runs = int(_su01_provision(backend)["runs"])
    removed = _on(VICTIM, f"rm {NOUVEAU_CONF} && ! test -e {NOUVEAU_CONF}")
    assert removed.returncode == 0, removed.stderr

    t0 = time.monotonic()
    found = subprocess.run([*up[:3], "drift", str(declaration), "--stack", STACK, "--format", "json"],
                           capture_output=True, text=True, env=env, timeout=600)
    print(f"drift: {time.monotonic() - t0:.0f}s rc={found.returncode}\n{found.stdout}")
    assert found.returncode == 1, found.stdout + found.stderr[-3000:]
    report = json.loads(found.stdout)
    named = [line for line in report["drift"] if f"host {VICTIM}:" in line]
    assert any(NOUVEAU_CONF in line and NOUVEAU_TASK in line for line in named), report["drift"]
    assert not [line for line in report["drift"] if any(h in line for h in HOSTS if h != VICTIM)], report["drift"]
    assert report["pending"] == {"update": ["su01-provision"]}, report["pending"]
    assert _on(VICTIM, f"test -e {NOUVEAU_CONF}").returncode == 1  # drift changed nothing

    t0 = time.monotonic()
    repaired = subprocess.run(up, capture_output=True, text=True, env=env, timeout=900)
    print(f"repairing up: {time.monotonic() - t0:.0f}s rc={repaired.returncode}")
    assert repaired.returncode == 0, repaired.stderr[-3000:]
    # said as it runs and again in the engine's closing diagnostics; the update ran once (`runs` below)
    which = set(re.findall(r"provision su01: re-provisioning the drifted host\(s\) (.*?)\s*$", repaired.stderr, re.M))
    assert which == {VICTIM}, (which, repaired.stderr[-3000:])
    ran = sorted(set(_HOST_DONE.findall(repaired.stderr)))
    assert ran == [("su01", VICTIM)], (ran, repaired.stderr[-3000:])  # no other host of any group ran a task
    outputs = _su01_provision(backend)
    assert outputs["runs"] == runs + 1, outputs["runs"]
    assert outputs["changed"][VICTIM] >= 1 and all(outputs["changed"][h] == 0 for h in HOSTS if h != VICTIM), \
        outputs["changed"]
    back = _on(VICTIM, f"grep -x 'blacklist nouveau' {NOUVEAU_CONF}")
    assert back.returncode == 0, (back.stdout, back.stderr)
    for host in HOSTS:
        if host != VICTIM:
            assert _on(host, stamp).stdout == before[host].stdout, host  # the same file, not rewritten


def _lasting_orphan_zombies(since_ticks: float, settle_s: float = 10.0) -> list[str]:
    """Zombies born since the test began that nobody reaps: orphaned (parent PID 1),
    still there after ``settle_s``. A zombie of some unrelated live parent on a shared machine is that
    parent's business, and a zombie its parent reaps a moment later is not left behind."""
    def candidates() -> dict[int, str]:
        return {pid: f"{pid} ppid={ppid} {argv[:80]}" for pid, (ppid, _, state, argv, start) in _procs().items()
                if state == "Z" and start >= since_ticks and ppid == 1}

    found = candidates()
    deadline = time.monotonic() + settle_s
    while found and time.monotonic() < deadline:
        time.sleep(0.5)
        found = {pid: line for pid, line in candidates().items() if pid in found}
    return sorted(found.values())
