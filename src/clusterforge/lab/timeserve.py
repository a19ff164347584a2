"""The lab's NTP server: what a site's management network offers its servers, on the control address.

A lab VM is a machine with its own kernel clock, so it runs a time daemon like a real server (``verify``
checks that it is synchronized). The lab's hosts have no route out, so this machine serves them: chrony's
``chronyd`` from Debian's package (unpacked, never installed: its package would start a daemon that sets
this machine's clock), run with ``-x`` (it never touches this machine's clock) and ``local stratum 10`` (it
serves this machine's clock as its reference), bound to the control address, answering only the lab's
addresses, no command port. A site declares its own NTP servers instead.

Detached like the apt proxy; found again by its command line (a lab's state, or its home, may be gone).
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path

from clusterforge.baremetal.debpkg import member_of

from .util import LabError, lab_dir, lab_home

__all__ = ["PORT", "ALLOW", "directives", "start", "running", "stop", "serving_on", "query", "NTP_EPOCH_OFFSET"]

PORT = 123
ALLOW = "198.18.0.0/15"  # the lab's address block (RFC 2544): nothing else is answered
NTP_EPOCH_OFFSET = 2208988800  # seconds from 1900-01-01 (NTP) to 1970-01-01 (Unix)
_MARK = "timeserver"  # the lab directory it runs from: .lab/<lab>/timeserver/


def directives(bind_ip: str, pidfile: Path, port: int = PORT, allow: str = ALLOW) -> tuple[str, ...]:
    """chrony.conf(5) directives for a server of this machine's clock on ``bind_ip`` only. Given on chronyd's
    command line (no configuration file is read then), so the process itself says what it serves."""
    return ("local stratum 10", f"allow {allow}", f"bindaddress {bind_ip}", f"port {port}", "cmdport 0",
            f"pidfile {pidfile}")


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
    root = lab_dir(lab) / _MARK
    root.mkdir(parents=True, exist_ok=True)
    log = root / "chronyd.log"
    with log.open("ab") as out:
        proc = subprocess.Popen([str(binary), "-x", "-d", "-u", "root", *directives(bind_ip, root / "chronyd.pid",
                                                                                    port, allow)],
                                stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True,
                                close_fds=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LabError(f"the lab's NTP server (chronyd) exited with {proc.returncode}; see {log}")
        try:
            query(bind_ip, port, timeout_s=0.5)
            return proc.pid
        except (OSError, LabError):
            time.sleep(0.2)
    proc.kill()
    raise LabError(f"the lab's NTP server did not answer on {bind_ip}:{port}; see {log}")


def _after(argv: list[str], word: str) -> str | None:
    return argv[argv.index(word) + 1] if word in argv[:-1] else None


def _bound(pid: int) -> str | None:
    """The address the lab NTP server ``pid`` is bound to; None for any other process. (chronyd parses its
    command-line directives in place: /proc shows them split into words.)"""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return None
    if not argv[0].endswith("chronyd") or f"/{_MARK}/" not in (_after(argv, "pidfile") or ""):
        return None
    return _after(argv, "bindaddress")


def running(pid: int | None) -> bool:
    """``pid`` is a lab NTP server (not another process that took the PID)."""
    return pid is not None and pid > 0 and _bound(pid) is not None


def stop(pid: int | None) -> bool:
    """Stop the lab's chronyd ``pid`` (never another process that took the PID)."""
    if pid is None or not running(pid):
        return False
    os.kill(pid, signal.SIGTERM)
    for _ in range(30):
        if not running(pid):
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return True


def serving_on(bind_ips: set[str]) -> list[int]:
    """PIDs of the lab NTP servers bound to any of ``bind_ips``."""
    return [int(d) for d in os.listdir("/proc") if d.isdigit() and _bound(int(d)) in bind_ips]
