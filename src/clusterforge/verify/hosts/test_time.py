"""Time: hosts agree on the time (distributed training, Kerberos/TLS, logs across nodes).

What is checked, and why, by kind of host:
* every remote host: its clock is within --cf-max-clock-offset-s of the machine running the checks
  (the midpoint of an SSH round trip is compared), so a drifting node fails whatever syncs it;
* a machine with its own kernel (metal, VM): a sync daemon (systemd-timesyncd, chrony or ntpd)
  is active, and the kernel reports the clock synchronized (``timedatectl`` NTPSynchronized);
* a container (the lab): the clock IS its host kernel's clock. No daemon can or should run
  there (timesyncd refuses: ConditionVirtualization=!container) and the kernel's sync flag
  belongs to the host, so those two checks are not checked (SIMULATED in the lab, a failure on a real
  target); the offset check still runs.
* every host, when the site declares its NTP servers (host_vars cf_time_servers): timesyncd's drop-in
  names exactly those (roles/time_sync and the bare-metal installers write it); on a machine with its own
  kernel whose timesyncd is active, the server it uses is one of them.
"""

from __future__ import annotations

import time

import pytest

from clusterforge.verify.hosts._gates import HOST_KERNEL, unchecked
from clusterforge.verify.hosts._parsers import clock_offset_s

# GPU servers and storage servers alike.
HOST_KINDS = ("server", "storage")

SYNC_SERVICES = ("systemd-timesyncd", "chrony", "chronyd", "ntpsec", "ntp", "ntpd")
DROP_IN = "/etc/systemd/timesyncd.conf.d/50-clusterforge.conf"  # roles/time_sync, render/host_os.py


def _require_own_kernel(facts) -> None:
    if facts.container():
        unchecked("the clock's sync", f"a {facts.container()} container: the clock and its sync are the host "
                  "kernel's, not this host's", HOST_KERNEL)


def test_clock_offset_within_limit(facts, target, check_options):
    if target.local:
        pytest.skip("local target: the clock is the one the checks run on; there is nothing to compare")
    limit = float(check_options["max_clock_offset_s"])
    facts.run("true")  # open the connection first, so the timed round trip is one command
    before = time.time()
    r = facts.run("date +%s.%N")
    after = time.time()
    assert r.rc == 0, f"date failed: {r.stderr.strip()}"
    offset = clock_offset_s(before, float(r.stdout.strip()), after)
    uncertainty = (after - before) / 2
    assert abs(offset) <= limit + uncertainty, (
        f"clock is {offset:+.3f} s off the control node's (limit {limit} s, round trip {after - before:.3f} s)"
    )


def test_time_sync_daemon_active(facts):
    _require_own_kernel(facts)
    states = {s: facts.unit_state(s, "is-active") for s in SYNC_SERVICES}
    assert "active" in states.values(), (
        "no time sync daemon active: " + ", ".join(f"{s} {v}" for s, v in states.items())
    )


def test_clock_synchronized(facts):
    _require_own_kernel(facts)
    r = facts.run("timedatectl show -p NTPSynchronized --value")
    assert r.rc == 0, f"timedatectl failed: {(r.stderr or r.stdout).strip()[:200]}"
    assert r.stdout.strip() == "yes", "the kernel reports the clock unsynchronized (timedatectl NTPSynchronized=no)"


def test_time_daemon_asks_the_declared_servers(facts, host_vars):
    servers = [str(s) for s in host_vars.get("cf_time_servers") or []]
    if not servers:
        pytest.skip("no NTP servers declared (site.time_servers): the distribution's defaults stand")
    text = facts.read(DROP_IN)
    assert text is not None, f"{DROP_IN} is missing: the declared NTP servers {servers} are not configured"
    assert text == f"[Time]\nNTP={' '.join(servers)}\n", f"{DROP_IN} says {text!r}; declared: {servers}"
    if facts.container() or facts.unit_state("systemd-timesyncd", "is-active") != "active":
        return  # the drop-in is what the host has to go by; no daemon here to ask which server it uses
    r = facts.run("timedatectl show-timesync -p ServerName --value")
    assert r.rc == 0 and r.stdout.strip() in servers, (
        f"systemd-timesyncd uses {r.stdout.strip() or 'no server'!r}, not one of the declared {servers}"
    )
