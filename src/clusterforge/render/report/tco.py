"""Total cost of ownership over the declared years: pure arithmetic on the Plan and the site's Costs.

hardware     = the BOM total (catalog prices), paid once
power        = IT kW x average_load_fraction x PUE x hours x price per kWh
               (IT kW is the sum of every device's max draw; facility overhead enters through PUE)
maintenance  = hardware x maintenance % per year x years
facility     = facility works, paid once
staff        = staff per year x years
licences     = licences per year x years
per GPU-hour = total / (GPUs x hours)

A year is 8,760 hours (365 days): a planning figure, not a calendar.
"""

from __future__ import annotations

from typing import Any

from clusterforge.model.site import Costs
from clusterforge.plan.objects import Plan

__all__ = ["HOURS_PER_YEAR", "tco"]

HOURS_PER_YEAR = 8760


def tco(plan: Plan, costs: Costs, pue: float) -> dict[str, Any]:
    """The cost lines, their total and the cost per GPU-hour; every input is echoed for the reader."""
    years = costs.years
    hours = years * HOURS_PER_YEAR
    hardware = float(plan.bom.hardware_total)
    it_kw = float(plan.summary.power_kw)
    average_it_kw = it_kw * costs.average_load_fraction
    average_facility_kw = average_it_kw * pue
    energy_kwh = average_facility_kw * hours
    lines: list[dict[str, Any]] = [
        {"item": "hardware", "once": True, "amount": hardware,
         "basis": "bill of materials at catalog prices"},
        {"item": "power", "once": False, "amount": energy_kwh * costs.power_price_per_kwh,
         "basis": f"{it_kw:,.2f} kW IT × {costs.average_load_fraction:g} load × PUE {pue:g}"
                  f" × {hours:,} h × {costs.power_price_per_kwh:g} per kWh"},
        {"item": "maintenance", "once": False,
         "amount": hardware * costs.maintenance_pct_per_year / 100 * years,
         "basis": f"{costs.maintenance_pct_per_year:g} % of hardware per year × {years}"},
        {"item": "facility works", "once": True, "amount": float(costs.facility_works),
         "basis": "one-off"},
        {"item": "staff", "once": False, "amount": costs.staff_per_year * years,
         "basis": f"{costs.staff_per_year:,.0f} per year × {years}"},
        {"item": "licences", "once": False, "amount": costs.licences_per_year * years,
         "basis": f"{costs.licences_per_year:,.0f} per year × {years}"},
    ]
    total = sum(line["amount"] for line in lines)
    gpus = int(plan.summary.gpus)
    gpu_hours = gpus * hours
    capex = sum(line["amount"] for line in lines if line["once"])
    return {
        "years": years,
        "hours": hours,
        "gpus": gpus,
        "gpu_hours": gpu_hours,
        "it_kw": it_kw,
        "average_it_kw": average_it_kw,
        "average_facility_kw": average_facility_kw,
        "pue": pue,
        "energy_kwh": energy_kwh,
        "lines": lines,
        "capex": capex,
        "opex_per_year": (total - capex) / years,
        "total": total,
        "per_gpu_hour": total / gpu_hours if gpu_hours else None,
    }
