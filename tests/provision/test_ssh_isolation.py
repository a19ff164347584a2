"""No run reaches a host through another run's SSH connection (issue 26).

playbooks/ansible.cfg keeps ControlMaster connections for 120 s; under Ansible's default ControlPath (keyed by
host, port and user) a run for one lab or ssh config reused the master another run had left open to the same
address, and so bypassed its own --ssh-config, ProxyCommand and known_hosts. Here a real sshd on 127.0.0.1
stands in for a live lab host: a first run reaches it through a good ssh config and leaves its masters; a
second run, given an ssh config whose ProxyCommand always fails, must find the host unreachable. Host-key
checking stays on in both (StrictHostKeyChecking yes, the sshd's key in a known_hosts file of the test's own).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from clusterforge.provision import run_site

ROOT = Path(__file__).resolve().parents[2]
# raw: no Python needed on the far side, only the SSH connection under test
PING = "- hosts: all\n  gather_facts: false\n  tasks:\n    - name: Reach the host.\n      ansible.builtin.raw: 'true'\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def live_host(tmp_path: Path):
    """(port, client key, known_hosts) of a real sshd on 127.0.0.1 that accepts one key."""
    sshd_bin = shutil.which("sshd") or "/usr/sbin/sshd"
    if not Path(sshd_bin).exists() or not shutil.which("ssh-keygen"):
        pytest.skip("openssh-server (sshd, ssh-keygen) is not installed")
    if not Path("/run/sshd").is_dir():
        if os.geteuid() != 0:
            pytest.skip("sshd needs its privilege-separation dir /run/sshd")
        Path("/run/sshd").mkdir(mode=0o755)
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    for name in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    shutil.copyfile(keys / "client.pub", keys / "authorized_keys")
    port = _free_port()
    (keys / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
        f"StrictModes no\nPidFile {keys / 'sshd.pid'}\nUsePAM no\n")
    proc = subprocess.Popen([sshd_bin, "-D", "-e", "-f", str(keys / "sshd_config")], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.skip(f"sshd did not start: {proc.stderr.read() if proc.stderr else ''}")
                time.sleep(0.1)
        kind, key = (keys / "host.pub").read_text().split()[:2]
        (keys / "known_hosts").write_text(f"[127.0.0.1]:{port} {kind} {key}\n")
        yield port, keys / "client", keys / "known_hosts"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _ssh_config(path: Path, port: int, key: Path, known_hosts: Path, proxy: str | None) -> Path:
    lines = ["Host *", f"  Port {port}", f"  IdentityFile {key}", "  IdentitiesOnly yes", "  BatchMode yes",
             f"  UserKnownHostsFile {known_hosts}", "  StrictHostKeyChecking yes", "  ConnectTimeout 5"]
    if proxy:
        lines.append(f"  ProxyCommand {proxy}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_failing_proxy_command_is_never_bypassed_by_another_runs_master(live_host, tmp_path: Path, monkeypatch):
    port, key, known_hosts = live_host
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # Ansible's default ControlPath dir is ~/.ansible/cp
    (tmp_path / "home").mkdir()
    playbooks = tmp_path / "playbooks"
    playbooks.mkdir()
    shutil.copyfile(ROOT / "playbooks" / "ansible.cfg", playbooks / "ansible.cfg")  # ControlPersist=120s as shipped
    (playbooks / "ping.yml").write_text(PING)
    inventory = tmp_path / "inventory.yml"
    user = os.environ.get("USER") or "root"
    inventory.write_text(f"all:\n  hosts:\n    lab-host:\n      ansible_host: 127.0.0.1\n      ansible_port: {port}\n"
                         f"      ansible_user: {user}\n")
    good = _ssh_config(tmp_path / "good_ssh_config", port, key, known_hosts, None)
    bad = _ssh_config(tmp_path / "bad_ssh_config", port, key, known_hosts, "/bin/false")

    first = run_site(inventory, tmp_path / "run1", ssh_config=good, playbooks_dir=playbooks, playbook="ping.yml")
    assert first.ok, (first.status, first.failed_hosts, first.unreachable_messages)
    second = run_site(inventory, tmp_path / "run2", ssh_config=bad, playbooks_dir=playbooks, playbook="ping.yml")
    assert not second.ok
    assert second.unreachable_hosts == ["lab-host"], (second.status, second.stats)
    assert not list((tmp_path / "home").rglob("*")) or not any(
        p.is_socket() for p in (tmp_path / "home").rglob("*")), "a master was left in the shared default directory"
