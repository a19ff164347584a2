"""Pure planners: ClusterSpec in, Plan out. No I/O here."""

from clusterforge.plan.build import plan_cluster
from clusterforge.plan.errors import PlanError
from clusterforge.plan.objects import Device, Interface, Link, Pdu, Plan, Rack

__all__ = ["Device", "Interface", "Link", "Pdu", "Plan", "PlanError", "Rack", "plan_cluster"]
