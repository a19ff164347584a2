"""The Redfish seam against a real BMC: sushy (the client) to sushy-tools (the emulator) to libvirt to QEMU.

Every call acts on the real VM: power on starts QEMU, a one-time Pxe boot makes OVMF send DHCP discovers on
the VM's bridge (seen here on a raw socket). Faults: a hung BMC (process stopped: bounded timeout), a stopped
one (connection refused), wrong credentials, no CA, a BIOS attribute the registry lacks; each one line naming
the server, and the next call works.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import time
from pathlib import Path

import pytest

from clusterforge.baremetal.redfish import connect
from clusterforge.baremetal.types import BmcError

SERVER = "gpu01"


def _qemu_running(domain: str) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                if "qemu-system" in cmd and f"guest={domain}," in cmd:
                    return True
    return False


def _dhcp_discover_from(bridge: str, mac: str, timeout_s: float) -> bool:
    """True when a DHCP discover (UDP to port 67) from ``mac`` crosses ``bridge`` within the time."""
    want = bytes.fromhex(mac.replace(":", ""))
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0800)) as raw:
        raw.bind((bridge, 0))
        raw.settimeout(1.0)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                frame = raw.recv(2048)
            except TimeoutError:
                continue
            udp = 14 + (frame[14] & 0x0F) * 4  # Ethernet header, then the IPv4 header's length
            if frame[6:12] == want and frame[23] == 17 and struct.unpack("!H", frame[udp + 2:udp + 4])[0] == 67:
                return True
    return False


@pytest.fixture
def bmc(metal):
    client = connect(metal.endpoint())
    yield client
    client.close()


def test_inventory_is_the_vms(metal, bmc):
    inv = bmc.inventory()
    assert inv.uuid == metal.vm.uuid
    assert [n.mac for n in inv.nics] == [n.mac for n in metal.vm.nics]
    assert inv.boot_mode == "UEFI" and inv.bios_version and inv.manufacturer
    assert inv.power_state in ("On", "Off")


def test_bios_attributes_go_to_settings_and_a_second_apply_sends_nothing(bmc):
    change = bmc.apply_bios({"ProcTurboMode": "Disabled", "EmbeddedSata": "Ahci", "QuietBoot": False})
    again = bmc.apply_bios({"ProcTurboMode": "Disabled", "EmbeddedSata": "Ahci", "QuietBoot": False})
    state = bmc.bios()
    assert state.check({"ProcTurboMode": "Disabled", "EmbeddedSata": "Ahci", "QuietBoot": False}).wrong == ()
    assert again.sent == {} and set(again.unchanged) == {"ProcTurboMode", "EmbeddedSata", "QuietBoot"}
    assert set(change.sent) <= {"ProcTurboMode", "EmbeddedSata", "QuietBoot"}
    assert state.registry  # the BMC names its attribute registry


@pytest.mark.parametrize(("attributes", "words"), [
    ({"AboveFourGDecodingX": "Enabled"}, "not in the BMC's attribute registry"),
    ({"ProcTurboMode": "Sometimes"}, "the registry allows Enabled, Disabled"),
    ({"NumCores": 4}, "read-only in the BMC's registry"),
])
def test_a_rejected_attribute_is_one_line_and_nothing_is_sent(bmc, attributes, words):
    before = bmc.bios().current
    with pytest.raises(BmcError) as caught:
        bmc.apply_bios(attributes)
    message = str(caught.value)
    assert message.startswith(f"{SERVER}: BMC https://") and "rejected" in message and words in message
    assert "\n" not in message
    assert bmc.bios().current == before
    assert bmc.power_state() in ("On", "Off")  # the next call works


def test_wrong_credentials_are_refused_in_one_line(metal):
    with pytest.raises(BmcError) as caught:
        connect(metal.endpoint(password="not-the-password"))
    assert caught.value.kind == "credentials" and "401" in str(caught.value)
    assert "not-the-password" not in str(caught.value) and metal.password not in str(caught.value)
    assert connect(metal.endpoint()).power_state() in ("On", "Off")


def test_a_bmc_certificate_no_trusted_ca_signed_is_a_tls_error(metal):
    with pytest.raises(BmcError) as caught:
        connect(metal.endpoint(ca_file=None))
    assert caught.value.kind == "tls" and "certificate verify failed" in str(caught.value)


def test_a_hung_bmc_fails_within_the_timeout_and_the_next_call_works(metal):
    from clusterforge.lab.bmc_emulator import freeze_bmc, thaw_bmc

    assert freeze_bmc(metal.vm.lab, SERVER)
    try:
        started = time.monotonic()
        with pytest.raises(BmcError) as caught:
            connect(metal.endpoint(timeout_s=2.0))
        took = time.monotonic() - started
    finally:
        thaw_bmc(metal.vm.lab, SERVER)
    assert caught.value.kind == "unreachable" and "no answer within 2 s" in str(caught.value)
    assert 1.5 <= took < 6.0, took
    assert connect(metal.endpoint()).power_state() in ("On", "Off")


def test_a_stopped_bmc_is_refused_at_once_and_a_restarted_one_answers(metal):
    from clusterforge.lab.bmc_emulator import start_bmc, stop_bmc

    stop_bmc(metal.vm.lab, SERVER, keep_network=True)
    started = time.monotonic()
    with pytest.raises(BmcError) as caught:
        connect(metal.endpoint())
    assert caught.value.kind == "unreachable" and time.monotonic() - started < 3.0
    assert str(caught.value).startswith(f"{SERVER}: BMC https://{metal.address} does not answer")
    start_bmc(metal.vm, address_cidr=f"{metal.address}/24", bridge=metal.bridge, username="admin",
              password=metal.password)
    assert connect(metal.endpoint()).power_state() in ("On", "Off")


def test_a_one_time_pxe_boot_and_power_on_network_boot_the_real_vm(metal, bmc):
    bmc.power("off")
    assert not _qemu_running(metal.vm.domain)
    bmc.boot_once("pxe")
    assert bmc.inventory().boot_target == "Pxe"
    assert bmc.power("on") is True
    assert bmc.power("on") is False  # already on: nothing to do
    assert _qemu_running(metal.vm.domain) and bmc.power_state() == "On"
    # OVMF under TCG takes about a minute to reach its network boot on this machine
    assert _dhcp_discover_from(metal.bridge, metal.vm.nics[0].mac, timeout_s=180)
    assert bmc.power("off") is True
    assert not _qemu_running(metal.vm.domain) and bmc.power_state() == "Off"


def test_doctor_reads_power_bios_and_event_log_through_the_bmc(metal, bmc):
    from clusterforge.baremetal.doctor import bmc_findings
    from clusterforge.model.management import SecretRef
    from clusterforge.ops.doctor import Status
    from clusterforge.plan.baremetal import BmcFacts

    bmc.apply_bios({"ProcTurboMode": "Disabled"})
    facts = BmcFacts(server=SERVER, address=metal.address, prefix=24, gateway=None, kind="redfish", port=443,
                     username="admin", password=SecretRef(pulumi="bmcPassword"), ca=None, verify_tls=True,
                     boot_mode="uefi", boot_target="pxe", bios=(("ProcTurboMode", "Disabled"),))
    found = {f.check: f for f in bmc_findings(lambda: connect(metal.endpoint()), facts)}
    assert found["bmc-power"].status is Status.fail  # powered off by the test before
    assert found["bmc-bios"].status is Status.ok
    assert found["bmc-sel"].status is Status.skip and "LogServices" in found["bmc-sel"].summary
    wrong = BmcFacts(**{**vars(facts), "bios": (("ProcTurboMode", "Enabled"),)})
    (bios,) = bmc_findings(lambda: connect(metal.endpoint()), wrong, only=("bmc-bios",))
    assert bios.status is Status.fail and "ProcTurboMode='Disabled' (declared 'Enabled')" in bios.summary
    (down,) = bmc_findings(lambda: connect(metal.endpoint(password="x")), facts)
    assert down.check == "bmc-reachable" and down.status is Status.fail
