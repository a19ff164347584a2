"""accounts.json: the Slurm accounts the controller role creates in slurmdbd (sacctmgr), idempotently.

``{"cluster": <ClusterName>, "accounts": [{"name", "parent", "gpus", "grp_tres"}]}``: one account per team
under ``root``, ``grp_tres`` the association limit (``GrpTRES=gres/gpu=N``, N the team's declared GPUs).
The role compares what ``sacctmgr show assoc`` reports with this and changes only what differs.
"""

from __future__ import annotations

import json

from clusterforge.plan.slurm import SlurmPlan

__all__ = ["accounts_json", "accounts_data"]


def accounts_data(slurm: SlurmPlan) -> dict:
    return {"cluster": slurm.cluster_name,
            "accounts": [{"name": a.name, "parent": "root", "gpus": a.gpus, "grp_tres": a.grp_tres}
                         for a in slurm.accounts]}


def accounts_json(slurm: SlurmPlan) -> str:
    return json.dumps(accounts_data(slurm), indent=2) + "\n"
