"""A private libvirtd per lab, started by hand (no systemd here): its own configuration, state and sockets.

libvirtd as root always uses /etc/libvirt, /run/libvirt, /var/lib/libvirt, /var/cache/libvirt and
/var/log/libvirt. It runs in a mount namespace of its own (``unshare --mount --propagation private``) in which
each of those is bind-mounted from ``.lab/<lab>/metal/libvirt/<dir>``, so nothing of it is left in the
machine's own directories and its unix socket is ``.lab/<lab>/metal/libvirt/run/libvirt-sock``. It stays in
the machine's network namespace, so the taps it creates join the lab's bridges there.

``qemu.conf``: no security driver (no AppArmor/SELinux here), no cgroup controllers and no private /dev
namespace (neither works in this machine's container), console and QEMU logs to files (no virtlogd).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .util import LabError, lab_dir, write_atomic

__all__ = ["MOUNTS", "home", "uri", "ensure", "stop", "pid", "daemon_pids"]

MOUNTS = {"etc": "/etc/libvirt", "run": "/run/libvirt", "lib": "/var/lib/libvirt", "cache": "/var/cache/libvirt",
          "log": "/var/log/libvirt"}
START_TIMEOUT_S = 20.0

LIBVIRTD_CONF = """\
# clusterforge lab: a private libvirtd (lab/libvirtd.py); root only, no network listeners
unix_sock_rw_perms = "0700"
unix_sock_ro_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:stderr"
"""
QEMU_CONF = """\
# clusterforge lab (lab/libvirtd.py)
security_driver = "none"
stdio_handler = "file"
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
cgroup_controllers = [ ]
namespaces = [ ]
"""


def home(lab: str) -> Path:
    return lab_dir(lab) / "metal" / "libvirt"


def uri(lab: str) -> str:
    return f"qemu:///system?socket={home(lab) / 'run' / 'libvirt-sock'}"


def _cmdline(p: int) -> str:
    try:
        return Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def daemon_pids(root: Path | None = None) -> list[int]:
    """libvirtd processes started by a lab (their --config under ``root``, else under any lab's metal/libvirt)."""
    marker = f"{root}/etc/libvirtd.conf" if root else "/metal/libvirt/etc/libvirtd.conf"
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            cmd = _cmdline(int(entry.name))
            if cmd.startswith(("libvirtd ", "/usr/sbin/libvirtd ")) and marker in cmd:
                out.append(int(entry.name))
    return out


def pid(lab: str) -> int | None:
    found = daemon_pids(home(lab))
    return found[0] if found else None


def _answers(lab: str) -> bool:
    import libvirt  # the lab's libvirt binding (libvirt-python, the `lab` extra)

    with contextlib.suppress(libvirt.libvirtError):
        libvirt.registerErrorHandler(lambda *_: None, None)  # no stderr noise while it starts
        libvirt.open(uri(lab)).close()
        return True
    return False


def ensure(lab: str) -> str:
    """Start the lab's libvirtd unless it runs and answers; return its URI."""
    root = home(lab)
    if pid(lab) and _answers(lab):
        return uri(lab)
    for p in daemon_pids(root):  # alive but not answering: start afresh
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)
    for name in MOUNTS:
        (root / name).mkdir(parents=True, exist_ok=True)
    write_atomic(root / "etc" / "libvirtd.conf", LIBVIRTD_CONF)
    write_atomic(root / "etc" / "qemu.conf", QEMU_CONF)
    (root / "run" / "libvirt-sock").unlink(missing_ok=True)
    binds = []
    for name, target in MOUNTS.items():
        Path(target).mkdir(parents=True, exist_ok=True)  # the mount points (empty; the packages leave some out)
        binds.append(f'mount --bind "{root / name}" {target}')
    # --config by its own path (visible inside the namespace too): that is how daemon_pids finds it again;
    # the pid file is the lab's too (the default, /run/libvirtd.pid, is outside the bind mounts: one per machine)
    script = " && ".join(binds) + (f' && exec libvirtd --config "{root / "etc" / "libvirtd.conf"}"'
                                   f' --pid-file "{root / "run" / "libvirtd.pid"}"')
    with open(root / "libvirtd.log", "ab") as log:
        # under a subreaper (lab.reaper): the QEMU processes libvirtd daemonizes are reaped when they exit, not
        # left zombies that libvirt waits 40 s on each (this machine's PID 1 reaps no orphans)
        subprocess.Popen(["unshare", "--mount", "--propagation", "private", "--", sys.executable, "-m",
                          "clusterforge.lab.reaper", "sh", "-c", script],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, cwd=root)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if (root / "run" / "libvirt-sock").exists() and _answers(lab):
            return uri(lab)
        time.sleep(0.2)
    tail = (root / "libvirtd.log").read_text(errors="replace").strip().splitlines()[-3:]
    raise LabError(f"libvirtd for lab {lab} did not answer within {START_TIMEOUT_S:g} s: {' | '.join(tail)}")


def stop(lab: str, grace_s: float = 5.0) -> bool:
    """Stop the lab's libvirtd (its guests must be gone first: QEMU outlives libvirtd). True when one ran."""
    pids = daemon_pids(home(lab))
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while pids and time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.1)
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)
    return bool(pids)
