"""Host side of lossless RoCE v2 (cf_roce): the roles' persisted QoS script and unit exist, are
enabled and ran, carry the planned priority and ToS, and the RoCE NICs have the planned MTU.

Only where RoCE is planned (cf_roce.enabled; InfiniBand data planes have it false) and the host
has RDMA devices (/sys/class/infiniband). RoCE planned on a host without RDMA devices is not checked:
SIMULATED in the lab (veth links), a failure on a real target. The ECN knobs exist only with the vendor's
driver (mlx5 sysfs); a missing one is likewise not checked, per interface.
"""

from __future__ import annotations

import re

import pytest

from clusterforge.verify.hosts._gates import RDMA_NICS, require_systemd, unchecked

SCRIPT_DEFAULT = "/usr/local/sbin/clusterforge-roce-qos"
UNIT_DEFAULT = "clusterforge-roce-qos.service"


def _require_roce(facts, host_vars) -> dict:
    roce = host_vars.get("cf_roce") or {}
    if not roce.get("enabled"):
        pytest.skip("cf_roce.enabled is false (InfiniBand data plane or no RoCE intent)")
    devices = facts.run("ls -1 /sys/class/infiniband 2>/dev/null; true").stdout.split()
    if not devices:
        unchecked("the planned RoCE NICs (cf_roce)", "no RDMA devices (/sys/class/infiniband empty or missing)",
                  RDMA_NICS)
    return roce


def _script(host_vars) -> str:
    return str(host_vars.get("roce_host_script_path") or SCRIPT_DEFAULT)


def _unit(host_vars) -> str:
    return str(host_vars.get("roce_host_unit_name") or UNIT_DEFAULT)


def _script_value(facts, host_vars, name: str) -> str | None:
    text = facts.read(_script(host_vars)) or ""
    m = re.search(rf"^{name}=\"?([^\"\n]*)\"?$", text, re.MULTILINE)
    return m.group(1) if m else None


def test_roce_qos_script_installed(facts, host_vars):
    _require_roce(facts, host_vars)
    assert facts.run("test -x %s", _script(host_vars)).rc == 0, f"{_script(host_vars)} is missing or not executable"


def test_roce_qos_script_pfc_priority(facts, host_vars):
    roce = _require_roce(facts, host_vars)
    value = _script_value(facts, host_vars, "PFC_PRIORITY")
    assert value == str(roce["pfc_priority"]), (
        f"{_script(host_vars)} PFC_PRIORITY={value}, planned {roce['pfc_priority']}"
    )


def test_roce_qos_script_tos(facts, host_vars):
    roce = _require_roce(facts, host_vars)
    value = _script_value(facts, host_vars, "ROCE_TOS")
    assert value == str(roce["roce_tos"]), f"{_script(host_vars)} ROCE_TOS={value}, planned {roce['roce_tos']}"


def test_roce_qos_unit_enabled(facts, host_vars):
    _require_roce(facts, host_vars)
    require_systemd(facts)
    state = facts.unit_state(_unit(host_vars), "is-enabled")
    assert state == "enabled", f"{_unit(host_vars)} is {state}: the QoS is not re-applied at boot"


def test_roce_qos_unit_succeeded(facts, host_vars):
    _require_roce(facts, host_vars)
    require_systemd(facts)
    state = facts.unit_state(_unit(host_vars), "is-active")
    assert state == "active", f"{_unit(host_vars)} is {state} (the QoS script failed or never ran)"


def test_roce_interface_mtu(facts, host_vars, roce_interface):
    roce = _require_roce(facts, host_vars)
    links = facts.links()
    assert roce_interface in links, f"RoCE interface {roce_interface} does not exist"
    assert links[roce_interface].mtu == int(roce["mtu"]), (
        f"{roce_interface} MTU is {links[roce_interface].mtu}, RoCE plans {roce['mtu']}"
    )


@pytest.mark.parametrize("role", ["roce_np", "roce_rp"])
def test_roce_ecn_on_lossless_priority(facts, host_vars, roce_interface, role):
    roce = _require_roce(facts, host_vars)
    knob = f"/sys/class/net/{roce_interface}/ecn/{role}/enable/{roce['pfc_priority']}"
    value = facts.read(knob)
    if value is None:
        unchecked(f"ECN ({role}) on {roce_interface}'s lossless priority",
                  f"{knob} does not exist (NIC driver without DCQCN sysfs knobs)", RDMA_NICS)
    want = "1" if roce.get("ecn", True) else "0"
    assert value.strip() == want, f"{knob} is {value.strip()}, planned {want}"
