"""Node health and remediation: evidence from the checks that already exist, one verdict and one action
per node (ladder.py), and the decisions of `clusterforge remediate` under the declared policy
(policy.py), recorded in an append-only journal (journal.py).

Pure: evidence, xid, sources, ladder, policy, report and the journal's replay. At the edges: gather
(the live machines over SSH, the host checks) and act (drains and returns through the scheduler
drivers, repairs over SSH and the site playbook).
"""

from clusterforge.health.evidence import Action, Evidence, Status
from clusterforge.health.ladder import NodeHealth, Verdict, climb, judge, serviceable, worst

__all__ = ["Action", "Evidence", "NodeHealth", "Status", "Verdict", "climb", "judge", "serviceable", "worst"]
