"""The stack's monitoring step: playbooks/monitoring.yml over the control nodes (node_exporter there, Prometheus and
Alertmanager on the monitoring host), from the Plan and the rendered tree.

It reads the rendered tree's monitoring/ files, written beside the Ansible inventory under the stack's rendered
directory (`cf_monitoring.config_dir` points there); a change of them or of the control nodes' host_vars re-runs
it (its `host_vars_hash`), except of the Grafana dashboards there, which the role does not install. It runs after
the hosts are provisioned (their node_exporter is the site playbook's) and after the schedulers' steps, which
reach the same control node: two Ansible runs there at once would race for apt's lock where the packages are not
in an image.
"""

from __future__ import annotations

from clusterforge import paths
from clusterforge.plan import Plan
from clusterforge.pulumi._hashing import files_hash, tree_hash
from clusterforge.pulumi.providers.host_provision import HostProvisionArgs
from clusterforge.pulumi.settings import StackSettings
from clusterforge.render.ansible_inventory import ANSIBLE_DIR
from clusterforge.render.monitoring import DASHBOARDS_DIR, GRAFANA_PROVISIONING, MONITORING_DIR
from clusterforge.render.tree import RenderedTree
from clusterforge.vocab import DeviceKind

__all__ = ["EXPORTER_UNITS", "LAB_RECEIVER_UNITS", "MONITORING_GROUP", "MONITORING_PLAYBOOK", "MONITORING_UNITS",
           "monitoring_args"]

MONITORING_PLAYBOOK = "monitoring.yml"
MONITORING_GROUP = "control_nodes"  # the playbook's hosts (render.ansible_inventory)
# roles/node_exporter and roles/monitoring (vars/Debian.yml): one not running is drift, and the next `up` starts it
EXPORTER_UNITS = ("prometheus-node-exporter",)  # on every control node
MONITORING_UNITS = (*EXPORTER_UNITS, "prometheus", "prometheus-alertmanager")  # on the monitoring host
LAB_RECEIVER_UNITS = ("cf-lab-alert-receiver",)  # LAB ONLY, on the monitoring host (playbooks/monitoring.yml, cf_lab)


def monitoring_args(plan: Plan, tree: RenderedTree, settings: StackSettings,
                    roles_hash: str | None) -> HostProvisionArgs | None:
    """The step, when the plan has monitoring (a control node to run it on) and the site playbook provisions (a
    custom `playbook` setting replaces provisioning as a whole)."""
    if plan.monitoring is None or not settings.provision or settings.playbook or roles_hash is None:
        return None
    controls = tuple(d.name for d in plan.devices if d.kind == DeviceKind.CONTROL)
    if not controls:
        return None
    playbook = paths.playbooks_dir() / MONITORING_PLAYBOOK
    watched = {f"{ANSIBLE_DIR}/host_vars/{h}.yml": tree.host_vars(h) for h in controls}
    # the Grafana files are for a Grafana the user runs: the role installs none, so they re-run nothing
    grafana = (f"{MONITORING_DIR}/{DASHBOARDS_DIR}/", f"{MONITORING_DIR}/{GRAFANA_PROVISIONING}")
    watched.update({path: text for path, text in tree.monitoring_files().items() if not path.startswith(grafana)})
    # the step's units are probed on each of its hosts: Prometheus's only where the monitoring host is the one
    units: tuple[str, ...] = EXPORTER_UNITS
    if controls == (plan.monitoring.host,):
        units = MONITORING_UNITS + (LAB_RECEIVER_UNITS if settings.target.emulates else ())
    return HostProvisionArgs(
        group=MONITORING_GROUP, hosts=controls, inventory_path=str(settings.rendered_dir / "ansible" / "inventory.yml"),
        # its own artifacts: the Kubernetes step runs over the same group
        private_data_dir=str(settings.work_dir / "provision" / "monitoring"), roles_hash=roles_hash,
        host_vars_hash=files_hash(watched), playbook=str(playbook),
        playbook_hash=tree_hash([playbook], playbook.parent), tags=None,
        extravars={"cf_lab": settings.target.emulates},
        ssh_config=str(settings.host_ssh_config) if settings.host_ssh_config else None, services=units,
    )  # fmt: skip
