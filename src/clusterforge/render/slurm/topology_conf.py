"""topology.conf for the plugin the plan chose (plan/slurm.py), from the plan's scheduler topology.

* topology/tree: ``SwitchName=<leaf group> Nodes=...`` per leaf group and ``SwitchName=... Switches=...``
  above (topology.conf(5), every supported version);
* topology/block (23.11+): ``BlockName=<NVLink domain> Nodes=...`` per domain; from 24.05 ``BlockSizes=``
  the smallest domain's size, the planning base block (24.05 replaced 23.11's ``BlockLevels``, which is
  optional and not written: SchedMD CHANGELOG/slurm-24.05.md; doc/man/man5/topology.conf.5 at tags
  slurm-23-11-0-1 and slurm-24-05-0-1).
"""

from __future__ import annotations

from clusterforge.plan.slurm import SlurmPlan
from clusterforge.plan.topology import SchedulerTopology
from clusterforge.render.scheduler import hostlist

__all__ = ["topology_conf"]


def topology_conf(cluster: str, slurm: SlurmPlan, topology: SchedulerTopology) -> str:
    lines = [f"# {cluster}: topology.conf rendered by clusterforge from the plan ({slurm.topology_plugin},"
             f" Slurm {slurm.version}). Install beside slurm.conf."]
    if slurm.topology_plugin == "topology/block":
        lines.append("# one block per NVLink domain (a rack-scale rack)")
        lines += [f"BlockName={block.name} Nodes={hostlist(block.nodes)}" for block in topology.blocks]
        if slurm.block_sizes and topology.block_size:
            lines.append(f"BlockSizes={topology.block_size}")
        return "\n".join(lines) + "\n"
    lines.append("# each leaf group (the nodes sharing the same rail leaves) is one Slurm leaf switch")
    for switch in topology.tree:
        if switch.stands_for:
            lines.append(f"# {switch.name}: {hostlist(switch.stands_for)}")
        children = f"Nodes={hostlist(switch.nodes)}" if switch.nodes else f"Switches={hostlist(switch.switches)}"
        lines.append(f"SwitchName={switch.name} {children}")
    return "\n".join(lines) + "\n"
