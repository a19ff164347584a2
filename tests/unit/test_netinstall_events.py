"""The install wait over a real installer's events: debian-installer 12 (20230607+deb12u15) netbooted in the
lab's VM, its syslog as the boot server recorded it (tests/data/metal/installer-udeb-404.jsonl: this
machine's Debian mirror serves no .udeb, so anna's first download is a 404). The wait turns the main-menu
steps into progress lines and ends at the failure with one line naming the server, not at the timeout."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clusterforge.baremetal import bootnet, netinstall

RECORDED = Path(__file__).resolve().parents[1] / "data" / "metal" / "installer-udeb-404.jsonl"
HOST = "su01-r01-gpu01"


@pytest.fixture
def events(tmp_path, monkeypatch):
    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path))
    directory = bootnet.boot_dir("lab-metal")
    directory.mkdir(parents=True)
    shutil.copy(RECORDED, directory / "events.jsonl")
    return directory


def test_a_failed_component_download_is_one_line_naming_the_server(events):
    lines: list[str] = []
    with pytest.raises(netinstall.InstallError) as err:
        netinstall.wait_installed("lab-metal", HOST, timeout_s=60, powered=lambda: True, poll_s=0.01,
                                  progress=lambda h, m: lines.append(m))
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{HOST}: the installer could not download its components (udebs) through the apt proxy")
    assert "apt-mirror-setup_0.182_all.udeb" in message and "ERROR 404" in message
    assert "the next `up` installs it again" in message
    assert any("reading the preseed" in line for line in lines)
    assert any("loading installer components" in line for line in lines)


def test_other_hosts_events_are_not_this_hosts(events):
    with pytest.raises(netinstall.InstallError, match="^su01-r01-gpu02: the install did not finish within 0 s"):
        netinstall.wait_installed("lab-metal", "su01-r01-gpu02", timeout_s=0, powered=lambda: True, poll_s=0.01)


DEPLOY_OK = RECORDED.with_name("deploy-ok.jsonl")  # the image method's whole install, as the boot server saw it
DEPLOY_404 = RECORDED.with_name("deploy-root-404.jsonl")  # a part the boot server did not serve (wget's 404)


def _recorded(tmp_path, monkeypatch, path: Path) -> None:
    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path))
    directory = bootnet.boot_dir("lab-metal")
    directory.mkdir(parents=True)
    shutil.copy(path, directory / "events.jsonl")


def test_the_deploy_ramdisks_steps_are_progress_and_its_callback_ends_the_wait(tmp_path, monkeypatch):
    _recorded(tmp_path, monkeypatch, DEPLOY_OK)
    lines: list[str] = []
    key = netinstall.wait_installed("lab-metal", HOST, timeout_s=60, powered=lambda: True, poll_s=0.01,
                                    progress=lambda h, m: lines.append(m))
    assert key.startswith("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5") and "/" in key  # a blob with '/' arrives whole
    for step in ("loading the deploy ramdisk", "network up on eth0", "streaming the root file system",
                 "writing the backup GPT", "image written and checked"):
        assert any(step in line for line in lines), step


def test_a_deploy_failure_is_one_line_naming_the_server_and_its_step(tmp_path, monkeypatch):
    _recorded(tmp_path, monkeypatch, DEPLOY_404)
    with pytest.raises(netinstall.InstallError) as err:
        netinstall.wait_installed("lab-metal", HOST, timeout_s=60, powered=lambda: True, poll_s=0.01)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{HOST}: the deploy ramdisk stopped: writing root.gz to /dev/vda")
    assert "(last step: writing root.gz at byte 537919488 of /dev/vda)" in message
