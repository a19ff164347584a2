"""Python dynamic providers: the resources that act (push switch config, run Ansible, verify, run the lab).

Each is a `pulumi.dynamic.ResourceProvider` with real create/diff/update/delete; `diff` names the
inputs that force replacement; credentials are secret inputs. Modules they drive
(clusterforge.provision, clusterforge.verify.hosts, clusterforge.lab) are imported only when a
resource actually runs, so previews and the file target need none of them.
"""

from clusterforge.pulumi.providers.host_provision import HostProvision, HostProvisionArgs, ProvisionFailed
from clusterforge.pulumi.providers.lab import Lab, LabArgs
from clusterforge.pulumi.providers.switch_config import SwitchConfig, SwitchConfigArgs, SwitchTarget
from clusterforge.pulumi.providers.verification import Verification, VerificationArgs, VerificationFailed

__all__ = [
    "HostProvision", "HostProvisionArgs", "Lab", "LabArgs", "ProvisionFailed", "SwitchConfig", "SwitchConfigArgs",
    "SwitchTarget", "Verification", "VerificationArgs", "VerificationFailed",
]  # fmt: skip
