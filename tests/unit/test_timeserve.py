"""The lab's NTP server (lab.timeserve): Debian's chronyd, answering SNTP on the address it is given, serving this
machine's clock without setting it, found again by its configuration and stopped."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

from clusterforge.lab import timeserve
from clusterforge.lab.util import LabError

LAB = "cftimeut"


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_configuration_binds_one_address_and_never_opens_a_command_port(tmp_path):
    lines = set(timeserve.directives("198.18.8.1", tmp_path / "pid", allow="198.18.0.0/15"))
    assert {"bindaddress 198.18.8.1", "allow 198.18.0.0/15", "port 123", "cmdport 0", "local stratum 10"} <= lines
    assert not any(line.startswith(("server ", "pool ", "makestep")) for line in lines)  # it follows nothing


@pytest.fixture
def server():
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("needs root and apt-get (chronyd comes from Debian's package)")
    from clusterforge.lab.util import lab_dir

    port = _free_udp_port()
    pid = timeserve.start(LAB, "127.0.0.1", port, allow="127.0.0.0/8")
    try:
        yield pid, port
    finally:
        timeserve.stop(pid)
        shutil.rmtree(lab_dir(LAB), ignore_errors=True)


def test_it_serves_this_machines_clock_and_is_found_and_stopped(server):
    pid, port = server
    leap, stratum, offset = timeserve.query("127.0.0.1", port)
    assert leap == 0 and stratum == 10  # synchronized (to its local reference), as a client requires
    assert abs(offset) < 0.5
    assert timeserve.running(pid) and pid in timeserve.serving_on({"127.0.0.1"})
    assert timeserve.serving_on({"198.18.250.250"}) == []
    from clusterforge.ops.proctree import Proc, lab_daemon

    argv = tuple(Path(f"/proc/{pid}/cmdline").read_text().split("\0")[:-1])
    assert lab_daemon(Proc(pid, 1, pid, "S", argv))  # kept when an interrupted run's leftovers are reaped
    assert timeserve.stop(pid) and not timeserve.running(pid)
    with pytest.raises((OSError, LabError)):
        timeserve.query("127.0.0.1", port, timeout_s=0.5)


def test_stop_leaves_a_process_that_is_not_the_lab_s_alone():
    assert not timeserve.running(os.getpid()) and not timeserve.stop(os.getpid())
