"""TCO arithmetic against a case computed by hand."""

from __future__ import annotations

import pytest

from clusterforge.model.site import Costs
from clusterforge.plan.objects import Plan
from clusterforge.plan.records import Bom, HostRoce, Services, StorageService, Summary, SwitchQos
from clusterforge.render.report.tco import tco


def _plan(hardware: float, power_kw: float, gpus: int) -> Plan:
    return Plan(cluster="t", site="t", devices=(), racks=(), pdus=(), links=(), fabric={}, pools={},
                bom=Bom((), {}, hardware, (), 0, {}, 0, 0), qos=SwitchQos(26, 3, 48, 6, 1, 2, 100, 200, 50, 100),
                host_roce=HostRoce(False, "dscp", 3, 26, 106, 48, False, 1500),
                summary=Summary(gpus, 0, 0, 0, 0, 0, 0, power_kw, ()),
                services=Services(StorageService("nfs", (), False), {}, ()))


COSTS = Costs(power_price_per_kwh=0.10, average_load_fraction=0.5, maintenance_pct_per_year=10,
              facility_works=50_000, staff_per_year=100_000, licences_per_year=10_000, years=2)
# By hand: 2 years = 17,520 h.
#   power       100 kW x 0.5 x PUE 1.5 x 17,520 h = 1,314,000 kWh x 0.10 = 131,400
#   maintenance 1,000,000 x 10 % x 2                                    = 200,000
#   staff 200,000, licences 20,000, facility works 50,000, hardware 1,000,000
#   total = 1,601,400; GPU-hours 64 x 17,520 = 1,121,280; per GPU-hour 1.4282 (1,601,400 / 1,121,280)
RESULT = tco(_plan(1_000_000, 100, 64), COSTS, pue=1.5)


def test_hours_cover_the_declared_years():
    assert RESULT["hours"] == 17_520


def test_energy_is_average_it_load_times_pue_times_hours():
    assert RESULT["energy_kwh"] == pytest.approx(1_314_000)


@pytest.mark.parametrize(("item", "amount"), [
    ("hardware", 1_000_000), ("power", 131_400), ("maintenance", 200_000), ("facility works", 50_000),
    ("staff", 200_000), ("licences", 20_000),
])
def test_cost_line(item: str, amount: float):
    lines = {line["item"]: line["amount"] for line in RESULT["lines"]}
    assert lines[item] == pytest.approx(amount)


def test_total():
    assert RESULT["total"] == pytest.approx(1_601_400)


def test_per_gpu_hour():
    assert RESULT["gpu_hours"] == 1_121_280
    assert RESULT["per_gpu_hour"] == pytest.approx(1.42819, abs=1e-5)


def test_one_off_and_running_costs():
    assert RESULT["capex"] == pytest.approx(1_050_000)
    assert RESULT["opex_per_year"] == pytest.approx(275_700)


def test_no_gpus_has_no_per_gpu_hour_cost():
    assert tco(_plan(10, 1, 0), COSTS, pue=1.2)["per_gpu_hour"] is None
