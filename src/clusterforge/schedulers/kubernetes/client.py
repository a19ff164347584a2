"""The live Kubernetes API as the commands reach it: the stack's admin kubeconfig (a Pulumi secret,
`stack_kubeconfig`), a CoreV1Api for a kubeconfig file or that secret (`core_api`), and an ApiClient for
the stack (`stack_api`). The kubeconfig is read into memory: its key never touches disk here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["core_api", "stack_api", "stack_kubeconfig"]


def stack_kubeconfig(stack: str, state_dir: Path | None = None, backend_url: str | None = None) -> str | None:
    """The stack's admin kubeconfig, or None when it has none (no control nodes, or never applied)."""
    from clusterforge.pulumi import automation

    backend = automation.Backend.resolve(state_dir, backend_url)
    handle = automation.open_stack(stack, None, backend)
    output = handle.outputs().get("kubeconfig")
    return str(output.value) if output is not None and output.value else None


def stack_api(text: str) -> Any:
    """An ApiClient for a kubeconfig's text."""
    import yaml
    from kubernetes import config

    return config.new_client_from_config_dict(yaml.safe_load(text))


def core_api(kubeconfig: Path | None, stack: str | None) -> Any | None:
    """A CoreV1Api for `kubeconfig` or the `stack`'s own kubeconfig, None when neither is given, and
    None with the reason when the stack has none."""
    from kubernetes import client, config

    if kubeconfig is not None:
        return client.CoreV1Api(config.new_client_from_config(str(kubeconfig)))
    if stack is None:
        return None
    text = stack_kubeconfig(stack)
    if text is None:
        from clusterforge.schedulers.driver import Unreachable

        raise Unreachable(f"stack {stack} has no kubeconfig (no control nodes, or `up` has not applied them)")
    return client.CoreV1Api(stack_api(text))
