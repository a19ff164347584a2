"""clusterforge-cluster: declaration → Plan → rendered files → Pulumi components.

Config (namespace `clusterforge`, see clusterforge.pulumi.settings): inventory, target (lab|files|ssh),
provision, verify, and the delivery settings of the target. Everything below is declared by
clusterforge.pulumi.program from the Plan; nothing is planned here.
"""

import pulumi

from clusterforge import paths
from clusterforge.loading import load_and_plan
from clusterforge.pulumi.program import declare_cluster
from clusterforge.pulumi.sdklog import quiet_sdk_debug
from clusterforge.pulumi.sdkwait import linear_output_wait
from clusterforge.pulumi.settings import StackSettings
from clusterforge.render import render_tree

quiet_sdk_debug()  # no engine round trip per resource for debug lines the engine discards
linear_output_wait()  # the SDK's wait for outputs at exit, linear instead of quadratic in their number
settings = StackSettings.from_config(paths.workspace(), pulumi.get_stack())
_, plan, _ = load_and_plan(settings.inventory)
site = declare_cluster(plan, render_tree(plan), settings)

pulumi.export("cluster", plan.cluster)
pulumi.export("target", settings.target)
pulumi.export("summary", plan.summary.to_dict())
pulumi.export("switch_config_dir", str(settings.switch_config_dir) if settings.target != "ssh" else None)
if site.kubernetes is not None:
    pulumi.export("kubernetes_api", site.kubernetes.api_server)
    pulumi.export("kubeconfig", site.kubernetes.kubeconfig)  # a secret: `clusterforge kubeconfig` prints it
if site.slurm is not None:
    pulumi.export("slurm_munge_key", site.slurm.munge_key.key)  # a secret: `replace` converges a new node with it
