"""Labs killed without `down` (a session ended hard, a machine snapshot): their namespaces, bridges
holding control addresses and overlay mounts outlive every process. Real labs, two lab homes.

* A killed lab of another home whose control subnet overlaps a new lab's: `up` clears it, says so,
  and the new lab's hosts answer (before, the dead bridge's narrower route swallowed their traffic).
* The same lab name, killed in another home while its apt proxy lived on: `up` here stops that
  proxy (it would hold the control address's port), clears the rest and boots.
* A live lab in the way is left alone: `up` refuses and names it.
* `lab down` here takes down a killed lab of another home whole, its mounts there included.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_fixtures import skip_reason

from clusterforge.lab import LabHost, LabInterface, LabSegment, LabTopology, aptproxy, debris, down, timeserve, up
from clusterforge.lab.util import LabError
from clusterforge.paths import LAB_HOME_ENV, lab_home

pytestmark = [pytest.mark.lab]

# a block no other test lab uses; the killed lab holds a narrower subnet inside the new lab's
KILLED_CONTROL, KILLED_HOST = "198.19.252.1/27", "198.19.252.2/27"
NEW_CONTROL, NEW_HOST = "198.19.252.254/24", "198.19.252.20/24"


def _one_host(name: str, control: str, host_ip: str) -> LabTopology:
    node = LabHost(name="node1", interfaces=(LabInterface(name="mgmt0", segment="mgmt", ip=host_ip),))
    return LabTopology(name=name, segments=(LabSegment(name="mgmt"),), hosts=(node,),
                       control=LabInterface(segment="mgmt", ip=control))


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """(this home, another home), both sharing the rootfs and apt caches; the test switches between them."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    here = lab_home()
    other = tmp_path / "other-home"
    other.mkdir()
    for cache in ("rootfs", "aptcache"):
        (here / cache).mkdir(parents=True, exist_ok=True)
        (other / cache).symlink_to(here / cache)
    yield here, other
    monkeypatch.setenv(LAB_HOME_ENV, str(here))


def _in_home(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv(LAB_HOME_ENV, str(home))


def _kill(lab: str) -> None:
    """SIGKILL every process of the lab, as the end of a session does; the kernel objects stay."""
    deadline = time.monotonic() + 20
    while (pids := debris.live_pids(lab)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
    assert not debris.live_pids(lab), f"lab {lab} still has processes"


def _ssh_hostname(result) -> str:
    return subprocess.run(["ssh", "-F", str(result.ssh_config), "node1", "hostname"], capture_output=True,
                          text=True, timeout=60, check=True).stdout.strip()


def _cleanup(monkeypatch: pytest.MonkeyPatch, home: Path, *labs: str) -> None:
    _in_home(monkeypatch, home)
    for lab in labs:
        down(lab)
        if not debris.live_pids(lab):
            debris.clear(lab)


def test_up_clears_a_killed_lab_of_another_home_that_holds_an_overlapping_subnet(homes, monkeypatch):
    here, other = homes
    killed, new = f"cfdk{uuid.uuid4().hex[:6]}", f"cfdn{uuid.uuid4().hex[:6]}"
    try:
        _in_home(monkeypatch, other)
        up(_one_host(killed, KILLED_CONTROL, KILLED_HOST))
        _kill(killed)
        assert killed in debris.present_labs() and debris.lab_mounts(killed)
        holders = debris.address_holders(new, [NEW_CONTROL])
        assert [(h.cidr, h.lab) for h in holders] == [(KILLED_CONTROL, killed)]

        _in_home(monkeypatch, here)
        said: list[str] = []
        result = up(_one_host(new, NEW_CONTROL, NEW_HOST), progress=lambda host, msg: said.append(msg))
        assert any(killed in m and "killed without `down`" in m for m in said), said
        assert _ssh_hostname(result) == "node1"
        assert killed not in debris.present_labs() and not debris.lab_mounts(killed)
        assert (other / killed / "state.json").exists()  # the other home's files are its own
    finally:
        _cleanup(monkeypatch, here, new)
        _cleanup(monkeypatch, other, killed)
        shutil.rmtree(other / killed, ignore_errors=True)


def test_up_clears_the_same_lab_killed_in_another_home(homes, monkeypatch):
    here, other = homes
    lab = f"cfds{uuid.uuid4().hex[:6]}"
    topology = _one_host(lab, NEW_CONTROL, NEW_HOST).model_copy(update={"apt_proxy": True})
    control_ip = NEW_CONTROL.split("/")[0]
    try:
        _in_home(monkeypatch, other)
        up(topology)
        _kill(lab)  # the containers; its apt proxy and NTP server live on, bound to the control address
        old_proxy = aptproxy.serving_on({control_ip})
        assert len(old_proxy) == 1
        old_ntp = timeserve.serving_on({control_ip})
        assert len(old_ntp) == 1
        _in_home(monkeypatch, here)
        said: list[str] = []
        result = up(topology, progress=lambda host, msg: said.append(msg))
        assert any("no state in" in m and "cleared" in m for m in said), said
        assert _ssh_hostname(result) == "node1"
        new_proxy = aptproxy.serving_on({control_ip})
        assert len(new_proxy) == 1 and new_proxy != old_proxy
        new_ntp = timeserve.serving_on({control_ip})
        assert len(new_ntp) == 1 and new_ntp != old_ntp
        assert timeserve.query(control_ip)[:2] == (0, 10)
        assert [str(p.parents[3]) for p in debris.lab_mounts(lab)] == [str(here)]  # only this home's root now
    finally:
        _cleanup(monkeypatch, here, lab)
        _cleanup(monkeypatch, other, lab)


def test_up_refuses_a_live_lab_in_the_way_and_leaves_it_running(homes, monkeypatch):
    here, other = homes
    live, new = f"cfdl{uuid.uuid4().hex[:6]}", f"cfdn{uuid.uuid4().hex[:6]}"
    try:
        _in_home(monkeypatch, other)
        first = up(_one_host(live, KILLED_CONTROL, KILLED_HOST))
        _in_home(monkeypatch, here)
        with pytest.raises(LabError, match=rf"lab '{live}' is running .* overlaps control address {NEW_CONTROL}"):
            up(_one_host(new, NEW_CONTROL, NEW_HOST))
        assert not debris.present_labs() & {new}
        assert _ssh_hostname(first) == "node1"  # left alone
    finally:
        _cleanup(monkeypatch, here, new)
        _cleanup(monkeypatch, other, live)


def test_down_here_removes_a_killed_lab_of_another_home_mounts_included(homes, monkeypatch):
    here, other = homes
    lab = f"cfdd{uuid.uuid4().hex[:6]}"
    try:
        _in_home(monkeypatch, other)
        up(_one_host(lab, NEW_CONTROL, NEW_HOST))
        _kill(lab)
        assert debris.lab_mounts(lab)
        _in_home(monkeypatch, here)
        result = down(lab)
        assert result.mounts == [str(other.resolve() / lab / "hosts" / "node1" / "root")]
        assert lab not in debris.present_labs() and not debris.lab_mounts(lab)
    finally:
        _cleanup(monkeypatch, other, lab)
