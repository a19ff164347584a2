"""The lab's NTP server: what a site's management network offers its servers, on the control address.

A lab VM is a machine with its own kernel clock, so it runs a time daemon like a real server (``verify``
checks that it is synchronized). The lab's hosts have no route out, so this machine serves them: chrony's
``chronyd`` from Debian's package (unpacked, never installed: its package would start a daemon that sets
this machine's clock), run with ``-x`` (it never touches this machine's clock) and ``local stratum 10`` (it
serves this machine's clock as its reference), bound to the control address, answering only the lab's
addresses, no command port. A site declares its own NTP servers instead.

Detached like the apt proxy; found again by its configuration file (a lab's state may be gone).
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path

from .debpkg import member_of
from .util import LabError, lab_dir, lab_home, write_atomic

__all__ = ["PORT", "ALLOW", "config", "start", "running", "stop", "serving_on", "query", "NTP_EPOCH_OFFSET"]

PORT = 123
ALLOW = "198.18.0.0/15"  # the lab's address block (RFC 2544): nothing else is answered
NTP_EPOCH_OFFSET = 2208988800  # seconds from 1900-01-01 (NTP) to 1970-01-01 (Unix)
_MARK = "clusterforge-timeserver"


def config(bind_ip: str, pidfile: Path, port: int = PORT, allow: str = ALLOW) -> str:
    """chrony.conf (chrony.conf(5)) for a server of this machine's clock on ``bind_ip`` only."""
    return (f"# {_MARK}: the lab's NTP server (this machine's clock, never set by it: chronyd -x)\n"
            "local stratum 10\n"
            f"allow {allow}\n"
            f"bindaddress {bind_ip}\n"
            f"port {port}\n"
            "cmdport 0\n"
            f"pidfile {pidfile}\n")


def _chronyd() -> Path:
    return member_of(lab_home() / "tools", "chrony", "usr/sbin/chronyd", "chronyd")


def query(ip: str, port: int = PORT, timeout_s: float = 2.0) -> tuple[int, int, float]:
    """One SNTP (RFC 4330) client request: the server's leap indicator, stratum and clock offset (seconds)."""
    request = bytearray(48)
    request[0] = (4 << 3) | 3  # version 4, client
    now = time.time() + NTP_EPOCH_OFFSET
    struct.pack_into("!II", request, 40, int(now), int(now % 1 * 2**32))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout_s)
        s.sendto(request, (ip, port))
        reply, _ = s.recvfrom(512)
    received = time.time()
    if len(reply) < 48 or reply[0] & 7 != 4:
        raise LabError(f"no NTP server reply from {ip}:{port}")
    seconds, fraction = struct.unpack_from("!II", reply, 40)
    return reply[0] >> 6, reply[1], seconds + fraction / 2**32 - NTP_EPOCH_OFFSET - received


def start(lab: str, bind_ip: str, port: int = PORT, allow: str = ALLOW) -> int:
    """Start chronyd for ``lab`` on ``bind_ip`` (detached, its own session); its PID once it answers."""
    binary = _chronyd()
    root = lab_dir(lab) / "timeserver"
    root.mkdir(parents=True, exist_ok=True)
    conf = root / "chrony.conf"
    write_atomic(conf, config(bind_ip, root / "chronyd.pid", port, allow))
    with (root / "chronyd.log").open("ab") as out:
        proc = subprocess.Popen([str(binary), "-x", "-d", "-u", "root", "-f", str(conf)], stdout=out, stderr=out,
                                stdin=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LabError(f"the lab's NTP server (chronyd) exited with {proc.returncode}; see {root / 'chronyd.log'}")
        try:
            query(bind_ip, port, timeout_s=0.5)
            return proc.pid
        except (OSError, LabError):
            time.sleep(0.2)
    proc.kill()
    raise LabError(f"the lab's NTP server did not answer on {bind_ip}:{port}; see {root / 'chronyd.log'}")


def _conf_of(pid: int) -> str | None:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    if not argv or not argv[0].endswith(b"chronyd") or b"-f" not in argv:
        return None
    try:
        text = Path(argv[argv.index(b"-f") + 1].decode()).read_text()
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    return text if _MARK in text else None


def running(pid: int | None) -> bool:
    """``pid`` is a lab NTP server (not another process that took the PID)."""
    return pid is not None and pid > 0 and _conf_of(pid) is not None


def stop(pid: int | None) -> bool:
    """Stop the lab's chronyd ``pid`` (never another process that took the PID)."""
    if not pid or _conf_of(pid) is None:
        return False
    os.kill(pid, signal.SIGTERM)
    for _ in range(30):
        if _conf_of(pid) is None:
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return True


def serving_on(bind_ips: set[str]) -> list[int]:
    """PIDs of the lab NTP servers bound to any of ``bind_ips``."""
    found = []
    for d in os.listdir("/proc"):
        text = _conf_of(int(d)) if d.isdigit() else None
        bound = {line.split()[1] for line in (text or "").splitlines()
                 if line.startswith("bindaddress ") and len(line.split()) > 1}
        if bound & bind_ips:
            found.append(int(d))
    return found
