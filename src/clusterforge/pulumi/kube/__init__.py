"""The Kubernetes layer of a stack: certificates, the control plane step and the kubeconfig."""
