"""Host provisioning: runs the site playbook (roles/, playbooks/) through ansible-runner."""

from clusterforge.provision.runner import ProvisionResult, run_site

__all__ = ["ProvisionResult", "run_site"]
