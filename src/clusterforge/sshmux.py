"""SSH connection sharing that never crosses runs: one ControlPath directory per run.

Ansible's default ControlPath is keyed by host, port and user (``~/.ansible/cp/<hash>``) and
playbooks/ansible.cfg keeps masters for 120 s. Every lab uses 198.18.0.0/15, so a run for one lab (or one
``--ssh-config``) would reuse another run's open master to the same address and skip its own ssh config,
ProxyCommand and known_hosts. Every run clusterforge starts (provisioning, image builds, host checks)
gets a fresh, private (0700) directory for its masters instead; ``%C`` (ssh's hash of local host, remote
host, port, user) names each socket inside it. The masters are stopped and the directory removed when
the run ends. Host-key checking is never touched here.

Imports nothing of the package: provision and verify both use it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["private_control_dir", "ansible_env", "close_masters", "stop_strays", "CONTROL_PATH"]

CONTROL_PATH = "%(directory)s/%%C"  # Ansible interpolates %(directory)s; ssh expands %C
# /tmp, not the run's work dir: a unix socket path must stay under 108 bytes (sun_path).
_BASE = Path(tempfile.gettempdir())


def ansible_env(directory: Path) -> dict[str, str]:
    """Environment that points Ansible's ssh (and persistent network_cli) connections at directory.
    Environment variables win over every ansible.cfg, the user's included."""
    return {"ANSIBLE_SSH_CONTROL_PATH_DIR": str(directory), "ANSIBLE_SSH_CONTROL_PATH": CONTROL_PATH,
            "ANSIBLE_PERSISTENT_CONTROL_PATH_DIR": str(directory)}


def close_masters(directory: Path) -> None:
    """Stop every master whose socket is in directory (rather than after ControlPersist)."""
    if not directory.is_dir():
        return
    for sock in directory.iterdir():
        if sock.is_socket():
            subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "cf-run"], capture_output=True,
                           timeout=10, check=False, stdin=subprocess.DEVNULL)


def stop_strays(directory: Path) -> list[int]:
    """SIGTERM every process that still uses directory: an ssh master that had no socket when close_masters
    looked (one an interrupted run's dying workers started), which daemonises and would stay for
    ControlPersist, or a client on its way to becoming one. ssh names the directory in its arguments
    (ControlPath) and a master in its process title (``ssh: DIR/HASH [mux]``); directory is this run's own."""
    needle = f"{directory}/".encode()
    stopped = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "cmdline").read_bytes():
                os.kill(int(entry.name), signal.SIGTERM)
                stopped.append(int(entry.name))
        except (OSError, ValueError):
            continue  # gone, or not ours to read
    return stopped


@contextmanager
def private_control_dir() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="cf-cp-", dir=_BASE))
    os.chmod(directory, 0o700)
    try:
        yield directory
    finally:
        try:
            close_masters(directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)  # from here on no new master can bind a socket in it
            for _ in range(10):  # those that bound one before, until a look finds none (at most ~1 s)
                if not stop_strays(directory):
                    break
                time.sleep(0.1)
