"""What `--help` shows beyond each command's docstring: a one-line summary that fits the command list
(click cuts longer ones to "..."), an example per command, and one metavar per kind of argument
(INVENTORY for every declaration, whatever the parameter is called in the code).

Applied once to the assembled app (cli/app.py); a command without an entry here fails
tests/unit/test_cli_help.py.
"""

from __future__ import annotations

import inspect
from typing import Any

import typer

__all__ = ["EXAMPLES", "SUMMARIES", "apply"]

# command path -> (summary for the command list, example lines)
SUMMARIES: dict[str, str] = {
    "validate": "Check a declaration; FILE:LINE:COL errors, exit 1.",
    "plan": "Plan racks, power, fabrics, addresses, links, BOM.",
    "render": "Write inventory, host_vars, switch configs, assets.",
    "preview": "Show what `up` would change (CI: --json).",
    "up": "Apply: deliver configs, build hosts, provision, verify.",
    "destroy": "Delete every resource of the stack.",
    "unlock": "Clear the lock a gone run left on a stack.",
    "stacks": "List the stacks holding a declaration, in apply order.",
    "provision": "Run the site playbook on the declared servers.",
    "drift": "Report switch and host drift; exit 1 on drift.",
    "doctor": "Troubleshoot one host: findings, evidence, fixes.",
    "replace": "Re-image, re-provision, re-verify a replaced host.",
    "roll": "Roll a driver/CUDA change batch by batch.",
    "health": "One verdict and action per GPU server; exit by worst.",
    "remediate": "Drain, repair, re-check, return nodes under the policy.",
    "verify": "Check hosts with testinfra; exit 1 on a failure or an unchecked planned fact.",
    "accept": "GPU acceptance against the catalog's figures.",
    "report": "Write the HTML report: racks, fabrics, power, BOM.",
    "diff": "Compare two declarations (PR-comment Markdown).",
    "kubeconfig": "Print the stack's admin kubeconfig (a secret).",
    "lab": "The local lab: the cluster as containers and FRR.",
    "ib": "InfiniBand planes in a simulated subnet.",
    "ib check": "Simulate IB planes (ibsim+OpenSM); compare cables.",
    "lab up": "Bring the lab of a declaration up.",
    "lab status": "Show the lab's hosts and switches.",
    "lab down": "Take the lab down and remove what it left.",
    "lab image": "Build the golden images the lab's servers boot.",
    "lab ssh": "SSH into a lab host, or run ARGS there.",
    "engine": "The Pulumi engine preview/up/destroy drive.",
    "engine status": "Show which Pulumi engine would run.",
    "engine install": "Build the pinned engine into the state dir.",
    "export": "Export the Plan for other tools.",
    "export containerlab": "Write a containerlab topology and configs.",
    "export batfish": "Write a Batfish snapshot.",
    "export device-types": "Write NetBox/Nautobot device-type YAML.",
    "collection": "The roles as the clusterforge.gpu collection.",
    "collection build": "Build the clusterforge.gpu collection tarball.",
    "sot": "Source of truth (Nautobot): push and pull.",
    "sot push": "Make Nautobot match the Plan.",
    "sot pull": "Pull serials, asset tags, status from Nautobot.",
}
INV = "inventory/lab.yaml"
EXAMPLES: dict[str, tuple[str, ...]] = {
    "validate": (f"clusterforge validate {INV}",),
    "plan": (f"clusterforge plan {INV} --format json > plan.json",),
    "render": (f"clusterforge render {INV} --out out/lab",),
    "preview": (f"clusterforge preview {INV} --stack lab --json",),
    "up": (f"clusterforge up {INV} --stack lab --yes",
           "clusterforge up inventory/prod.yaml --stack prod --part su02 --yes --lock-wait 1800"),
    "stacks": (f"clusterforge stacks {INV} --stack lab --format json",),
    "destroy": (f"clusterforge destroy {INV} --stack lab --yes",),
    "unlock": (f"clusterforge unlock {INV} --stack lab   # shows the holder, asks; --yes to not ask",),
    "provision": (f"clusterforge provision {INV} --limit su01-r01-gpu01 --tags driver",),
    "drift": (f"clusterforge drift {INV} --stack lab --format json",),
    "doctor": ("clusterforge doctor su01-r01-gpu01 -i inventory/lab.yaml --target lab", "clusterforge doctor --local"),
    "replace": (f"clusterforge replace {INV} su01-r01-gpu01",),
    "roll": (f"clusterforge roll {INV} --tags driver,cuda",),
    "health": (f"clusterforge health {INV} --stack lab --format json",),
    "remediate": (f"clusterforge remediate {INV} --stack lab --yes",),
    "verify": (f"clusterforge verify {INV} --target lab --check driver --check cuda",),
    "accept": ("clusterforge accept inventory/device-h200x1.yaml --host su01-r01-gpu01 --format json",),
    "report": (f"clusterforge report {INV} --out out/report",),
    "diff": (f"clusterforge diff main:{INV} {INV} > comment.md",),
    "kubeconfig": (f"clusterforge kubeconfig {INV} --stack lab > ~/.kube/lab.yaml",),
    "lab": (f"clusterforge lab up {INV}",),
    "ib": ("clusterforge ib check inventory/dgx-b200-su.yaml",),
    "ib check": ("clusterforge ib check inventory/dgx-b200-su.yaml --format json",),
    "lab up": (f"clusterforge lab up {INV}",),
    "lab status": (f"clusterforge lab status {INV} --format json",),
    "lab down": (f"clusterforge lab down {INV}",),
    "lab image": (f"clusterforge lab image {INV} --prune",),
    "lab ssh": (f"clusterforge lab ssh {INV} su01-r01-gpu01", f"clusterforge lab ssh {INV} su01-r01-gpu01 nvidia-smi"),
    "engine": ("clusterforge engine status",),
    "engine status": ("clusterforge engine status --format json",),
    "engine install": ("clusterforge engine install   # then: clusterforge preview INVENTORY",),
    "export": (f"clusterforge export device-types {INV} -o out/dtl",),
    "export containerlab": (f"clusterforge export containerlab {INV} -o out/clab",),
    "export batfish": (f"clusterforge export batfish {INV} -o out/snapshot",),
    "export device-types": (f"clusterforge export device-types {INV} -o out/dtl",),
    "collection": ("clusterforge collection build -o dist",),
    "collection build": ("clusterforge collection build -o dist",),
    "sot": (f"clusterforge sot push {INV} --url https://nautobot.example.net",),
    "sot push": (f"clusterforge sot push {INV} --url https://nautobot.example.net",),
    "sot pull": (f"clusterforge sot pull {INV} --url https://nautobot.example.net -o out/",),
}
# parameter name in the code -> the metavar --help shows
METAVARS = {"file": "INVENTORY", "inventory": "INVENTORY", "old": "OLD", "new": "NEW", "host": "HOST"}


def _epilog(path: str) -> str | None:
    lines = EXAMPLES.get(path)
    if not lines:
        return None
    return "\b\nExample:\n" + "\n".join(f"  {line}" for line in lines)  # \b: click keeps the lines as written


def _arguments(callback: Any) -> None:
    for name, parameter in inspect.signature(callback).parameters.items():
        info = parameter.default
        if isinstance(info, typer.models.ArgumentInfo) and info.metavar is None and name in METAVARS:
            info.metavar = METAVARS[name]
        if isinstance(info, typer.models.OptionInfo) and info.help:
            if "[default:" in info.help:  # the help says it already: click would print it a second time
                info.show_default = False
            if info.envvar and "[env " in info.help:
                info.show_envvar = False


def _walk(app: typer.Typer, prefix: str) -> None:
    for command in app.registered_commands:
        name = command.name or getattr(command.callback, "__name__", "").replace("_", "-")
        path = f"{prefix}{name}"
        command.short_help = command.short_help or SUMMARIES.get(path)
        command.epilog = command.epilog or _epilog(path)
        if command.callback is not None:
            _arguments(command.callback)
    for group in app.registered_groups:
        path = f"{prefix}{group.name}"
        group.short_help = group.short_help or SUMMARIES.get(path)
        group.epilog = group.epilog or _epilog(path)
        if group.typer_instance is not None:
            _walk(group.typer_instance, path + " ")


def apply(app: typer.Typer) -> None:
    """Summaries, examples and metavars onto every registered command and group."""
    _walk(app, "")
