"""clusterforge-cluster: declaration → Plan → rendered files → Pulumi components.

Config (namespace `clusterforge`, see clusterforge.pulumi.settings): inventory, target (lab|files|ssh),
provision, verify, and the delivery settings of the target. Everything below is declared by
clusterforge.pulumi.program from the Plan; nothing is planned here.
"""

import pulumi

from clusterforge import paths
from clusterforge.loading import load_and_plan
from clusterforge.pulumi.program import declare
from clusterforge.pulumi.sdklog import quiet_sdk_debug
from clusterforge.pulumi.sdkwait import linear_output_wait
from clusterforge.pulumi.settings import StackSettings
from clusterforge.render import render_tree

quiet_sdk_debug()  # no engine round trip per resource for debug lines the engine discards
linear_output_wait()  # the SDK's wait for outputs at exit, linear instead of quadratic in their number
settings = StackSettings.from_config(paths.workspace(), pulumi.get_stack())
_, plan, _ = load_and_plan(settings.inventory)
declared = declare(plan, render_tree(plan), settings)
site = declared.site

pulumi.export("cluster", plan.cluster)
pulumi.export("target", settings.target)
pulumi.export("summary", plan.summary.to_dict())
if settings.revision is not None:  # `up --revision`: a later apply of an older revision is skipped (cli/apply.py)
    pulumi.export("revision", settings.revision)
pulumi.export("switch_config_dir", str(settings.switch_config_dir) if settings.target != "ssh" else None)
if declared.part is not None:  # one part of a cluster split into stacks (clusterforge.plan.stacks)
    pulumi.export("part", declared.part.name)
    pulumi.export("lab_ssh_config", site.lab.ssh_config if site.lab is not None else None)
    if declared.part.su is not None:
        pulumi.export("su", declared.part.su)
    # what it read of the other stacks: exported, so one not applied yet fails this run naming it
    pulumi.export("reads", declared.reads)
if site.kubernetes is not None:
    pulumi.export("kubernetes_api", site.kubernetes.api_server)
    pulumi.export("kubeconfig", site.kubernetes.kubeconfig)  # a secret: `clusterforge kubeconfig` prints it
if site.slurm is not None:
    pulumi.export("slurm_munge_key", site.slurm.munge_key.key)  # a secret: `replace` converges a new node with it
