"""`clusterforge kubeconfig`: the admin kubeconfig of a stack's Kubernetes control plane.

It is a Pulumi secret of the stack (never written to the repository, a log or the rendered tree); this
command decrypts it and prints it on stdout, for `clusterforge kubeconfig lab.yaml > ~/.kube/lab`
(or `KUBECONFIG=<(clusterforge kubeconfig ...) kubectl get nodes`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._args import check_stack
from clusterforge.cli._common import Format, emit_json, err, format_option, load, say
from clusterforge.cli._stack import BACKEND_HELP, STATE_DIR_HELP

__all__ = ["register", "read_stack_kubeconfig"]


def read_stack_kubeconfig(stack: str, state_dir: Path | None = None, backend_url: str | None = None) -> str | None:
    """stack_kubeconfig for a command: no engine, or an engine that fails, is exit 3 with one line saying why."""
    from pulumi.automation import CommandError

    from clusterforge.pulumi import automation
    from clusterforge.schedulers.kubernetes.client import stack_kubeconfig

    try:
        return stack_kubeconfig(stack, state_dir, backend_url)
    except automation.EngineMissing as exc:
        say(err, f"error: {exc}")
    except (CommandError, OSError) as exc:  # the engine ran and failed, or could not be run
        said = [line for line in (getattr(exc, "stderr", "") or str(exc)).strip().splitlines() if line.strip()]
        why = said[-1].strip() if said else type(exc).__name__
        say(err, f"error: the engine could not read stack {stack}'s outputs: {why[:500]}")
    raise typer.Exit(3)


def kubeconfig_cmd(
    inventory: Path = typer.Argument(..., help="inventory YAML (names the default stack)"),
    stack: str | None = typer.Option(None, "--stack", "-s", help="stack name [default: the inventory's stem]"),
    state_dir: Path | None = typer.Option(None, "--state-dir", envvar="CLUSTERFORGE_STATE_DIR", help=STATE_DIR_HELP),
    backend_url: str | None = typer.Option(None, "--backend-url", envvar="CLUSTERFORGE_BACKEND_URL",
                                           help=BACKEND_HELP),
    format: Format = format_option(),
) -> None:
    """Print the admin kubeconfig of the stack's Kubernetes API server (a secret: keep it private)."""
    name = check_stack(stack) if stack else check_stack(inventory.stem, str(inventory))
    load(inventory)
    text = read_stack_kubeconfig(name, state_dir, backend_url)
    if text is None:
        err.print(f"error: stack {name} has no kubeconfig: the declaration has no control nodes"
                  " (`control:`), or `clusterforge up` has not applied it yet", markup=False)
        raise typer.Exit(1)
    if format is Format.json:  # kubectl reads a JSON kubeconfig as well
        import yaml

        emit_json(yaml.safe_load(text))
        return
    typer.echo(text, nl=False)


def register(app: typer.Typer) -> None:
    app.command("kubeconfig")(kubeconfig_cmd)
