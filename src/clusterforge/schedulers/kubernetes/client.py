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
    """A CoreV1Api for `kubeconfig` or the `stack`'s own kubeconfig, None when neither is given. Raises
    Unreachable: with `usage` for a `kubeconfig` that is not a readable kubeconfig file (the operator named
    it), without for a stack that has none or cannot be read (the engine, the state)."""
    from kubernetes import client, config

    from clusterforge.schedulers.driver import Unreachable

    if kubeconfig is not None:
        shown = str(kubeconfig)[:300]
        if not kubeconfig.is_file():
            raise Unreachable(f"--kubeconfig {shown}: not a file", usage=True)
        try:
            return client.CoreV1Api(config.new_client_from_config(str(kubeconfig)))
        except (OSError, UnicodeDecodeError) as exc:
            raise Unreachable(f"--kubeconfig {shown}: cannot be read: {exc}", usage=True) from None
        except Exception as exc:  # the client's own ConfigException, or a TypeError on a document of another shape
            why = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            raise Unreachable(f"--kubeconfig {shown}: not a usable kubeconfig: {why}", usage=True) from None
    if stack is None:
        return None
    try:
        text = stack_kubeconfig(stack)
    except Exception as exc:  # the engine or the stack is missing: reported, not a traceback
        why = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        raise Unreachable(f"stack {stack}: its kubeconfig cannot be read: {why} (or pass --kubeconfig FILE)") from None
    if text is None:
        raise Unreachable(f"stack {stack} has no kubeconfig (no control nodes, or `up` has not applied them);"
                          " pass --kubeconfig FILE")
    return client.CoreV1Api(stack_api(text))
