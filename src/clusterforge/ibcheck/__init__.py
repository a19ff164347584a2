"""`clusterforge ib check`: the plan's InfiniBand planes in a SIMULATED subnet (ibsim + OpenSM + infiniband-diags).

plan/ib_subnet.py makes each plane a subnet (switches, HCAs, cables, GUIDs from the plan's names);
render/switches/_infiniband/ibsim.py writes it as ibsim's net file; runner.py runs ibsim, OpenSM on the
rendered opensm.conf and partitions, and the diagnostics; compare.py sets what they found against the plan.
"""

from __future__ import annotations

from clusterforge.ibcheck.report import SIMULATED, report_document, report_lines
from clusterforge.ibcheck.runner import SimFailed, SimRun, Tools, ToolsMissing, find_tools, run_plane
from clusterforge.plan import Plan
from clusterforge.plan.ib_subnet import ib_subnets
from clusterforge.render.switches._infiniband import opensm_partitions, opensm_settings
from clusterforge.render.switches.device_config import fabric_files

__all__ = ["check_plan", "SimRun", "SimFailed", "ToolsMissing", "find_tools", "SIMULATED", "report_lines",
           "report_document"]


def check_plan(plan: Plan, *, pull: bool = True, tools: Tools | None = None) -> list[SimRun]:
    """Every InfiniBand plane of `plan`, simulated and checked (empty: the plan has none)."""
    subnets = ib_subnets(plan)
    if not subnets:
        return []
    tools = tools or find_tools()
    fabric = fabric_files(opensm_partitions(plan), opensm_settings(plan))
    return [run_plane(subnet, fabric, tools=tools, pull=pull) for subnet in subnets]
