"""How `clusterforge remediate` may act on the health verdicts: the remediation policy.

Every field is optional and the defaults are the cautious ones: ``mode: observe`` (the command says what
it would do and changes nothing), one failure domain out of service at a time per SU and per rack, 15
minutes between two actions on the same node, and only the steps that need no person automatic (taking a
node out and putting its declared configuration back, resetting its GPUs, rebooting it). Re-imaging and
RMA always wait for an operator: the command holds the node out and names the step.

A failure domain is one node, or a whole declared NVLink domain (an NVL72 rack): a fault on one of its
trays takes every tray of the domain out, and the domain counts once against the limits.
"""

from typing import Literal

from pydantic import Field

from clusterforge.model.base import Declared
from clusterforge.model.numbers import Integer

__all__ = ["ACTIONS", "AUTOMATIC_ACTIONS", "Remediation", "RemediationMode"]

# the action ladder, least first (clusterforge.health.ladder)
ACTIONS = ("none", "drain", "reset_gpu", "reboot", "reimage", "rma")
# what a run may do without a person; reimage and rma are held for the operator
AUTOMATIC_ACTIONS = ("drain", "reset_gpu", "reboot")
RemediationMode = Literal["observe", "act"]
AutomaticAction = Literal["drain", "reset_gpu", "reboot"]


class Remediation(Declared):
    mode: RemediationMode = "observe"
    # failure domains (a node, or a whole NVLink domain) out of service at once
    max_out_per_su: Integer = Field(default=1, ge=0, le=4096)
    max_out_per_rack: Integer = Field(default=1, ge=0, le=4096)
    # seconds between two actions on the same node: a fault that returns at once is not acted on in a loop
    cooldown_s: Integer = Field(default=900, ge=0, le=604_800)
    automatic: list[AutomaticAction] = Field(default=["drain", "reset_gpu", "reboot"], max_length=3)
    # how long a drain waits for the node's work to leave (Eviction API, Slurm jobs)
    drain_timeout_s: Integer = Field(default=600, ge=10, le=86_400)
