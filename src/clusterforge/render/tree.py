"""The rendered tree: every output of one Plan, by kind and key, and one flat view for the writer.

Consumers read what they need by key (a switch's files by switch name, a host's host_vars by host
name); only ``files()`` knows the on-disk layout (ansible/, assets.csv, switches/<name>/,
switches/_fabric/), and ``render.write_tree`` writes that view atomically.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from clusterforge.gcpause import paused_gc
from clusterforge.plan import Plan
from clusterforge.render.ansible_inventory import ANSIBLE_DIR, ansible_tree
from clusterforge.render.assets import render_assets
from clusterforge.render.gateways import render_gateways
from clusterforge.render.monitoring import MONITORING_DIR, monitoring_files
from clusterforge.render.scheduler import SCHEDULER_DIR, scheduler_files
from clusterforge.render.slurm import SLURM_DIR, slurm_files
from clusterforge.render.switches import FABRIC_DIR, SWITCHES_DIR, SwitchFiles, switch_tree

__all__ = ["RenderedTree", "render_tree"]

_EMPTY: Mapping[str, str] = MappingProxyType({})
KUEUE_FILE = "kubernetes/kueue.yaml"  # under scheduler/ (render/scheduler.py; ansible_inventory.KUEUE_MANIFEST)


@dataclass(frozen=True)
class RenderedTree:
    ansible: Mapping[str, str]  # relative to ansible/: inventory.yml, host_vars/<host>.yml
    assets: Mapping[str, str]  # assets.csv, gateways.csv (who answers each host gateway)
    switches: Mapping[str, SwitchFiles]  # switch name -> {file name: text}, with .nos (the Plan's NOS)
    fabric: Mapping[str, str] = field(default_factory=dict)  # fabric-wide files (InfiniBand subnet manager)
    scheduler: Mapping[str, str] = field(default_factory=dict)  # slurm/topology-*.conf, kubernetes/node-labels.yaml
    slurm: Mapping[str, str] = field(default_factory=dict)  # slurm.conf, gres.conf, ... (render/slurm), with Slurm
    # prometheus.yml, alertmanager.yml, rules/*.yml, dashboards/*.json, dashboards.yml (render/monitoring), with a
    # monitoring host
    monitoring: Mapping[str, str] = field(default_factory=dict)

    def switch(self, name: str) -> Mapping[str, str]:
        """One switch's files ({} for a switch that renders none, e.g. an access-plane bridge)."""
        return self.switches.get(name, _EMPTY)

    def nos(self, name: str) -> str | None:
        """The NOS that reads a switch's files (its plane's declared NOS); None for a switch without files."""
        entry = self.switches.get(name)
        return entry.nos if entry is not None else None

    def host_vars(self, host: str) -> str:
        return self.ansible.get(f"host_vars/{host}.yml", "")

    def ansible_files(self) -> dict[str, str]:
        """The Ansible tree as the writer lays it out (ansible/...)."""
        return {f"{ANSIBLE_DIR}/{path}": text for path, text in self.ansible.items()}

    def slurm_files(self) -> dict[str, str]:
        """The Slurm files as the writer lays them out (slurm/...); empty without Slurm."""
        return {f"{SLURM_DIR}/{path}": text for path, text in self.slurm.items()}

    def monitoring_files(self) -> dict[str, str]:
        """The monitoring files as the writer lays them out (monitoring/...); empty without a monitoring host."""
        return {f"{MONITORING_DIR}/{path}": text for path, text in self.monitoring.items()}

    def kueue_files(self) -> dict[str, str]:
        """Kueue's rendered objects as the writer lays them out (roles/k8s_kueue reads them from the rendered tree,
        cf_kubernetes.queueing.manifest); empty where the plan queues nothing."""
        return {f"{SCHEDULER_DIR}/{path}": text for path, text in self.scheduler.items() if path == KUEUE_FILE}

    def files(self) -> dict[str, str]:
        """Every file by its path under the output directory: the one view the writer and diff read."""
        files = self.ansible_files()
        files.update(self.assets)
        for name, texts in self.switches.items():
            files.update({f"{SWITCHES_DIR}/{name}/{filename}": text for filename, text in texts.items()})
        files.update({f"{SWITCHES_DIR}/{FABRIC_DIR}/{filename}": text for filename, text in self.fabric.items()})
        files.update({f"{SCHEDULER_DIR}/{path}": text for path, text in self.scheduler.items()})
        files.update(self.slurm_files())
        files.update(self.monitoring_files())
        return files


def render_tree(plan: Plan, workers: int | None = None) -> RenderedTree:
    """Every output of `plan`; `workers` processes at most (default: the cores, for large plans; see fanout)."""
    with paused_gc():  # the rendered text and the facts behind it hold no cycles
        switches, fabric = switch_tree(plan, workers)
        return RenderedTree(ansible=ansible_tree(plan, workers),
                            assets={**render_assets(plan), **render_gateways(plan)}, switches=switches,
                            fabric=fabric, scheduler=scheduler_files(plan), slurm=slurm_files(plan),
                            monitoring=monitoring_files(plan))
