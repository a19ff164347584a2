"""`clusterforge remediate`: act on the health verdicts under the declaration's `remediation:` policy.

Without `--yes`, or with `--observe`, or under `remediation.mode: observe`, it prints and records what it
would do and changes nothing. With `--yes` under `mode: act`, each failure domain that needs it (a node,
or a whole declared NVLink domain) is drained in every declared scheduler (clusterforge.schedulers),
repaired at its rung of the ladder, checked again and returned to service when it passes; a domain
remediate took out that passes again is returned. Every decision and step goes to the journal
`<state>/stacks/STACK/remediation.jsonl` first, so a run killed halfway is continued by the next.
The library: clusterforge.health.act.

Exit codes: 0 nothing is left to do, 1 a domain is held, kept out, still out or failed (observe: a
decision is pending), 2 usage, 3 environment (the journal is held by another run, a scheduler cannot be
reached).
"""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._args import check_file, check_stack
from clusterforge.cli._common import Format, HostTarget, emit_json, err, format_option, out, say
from clusterforge.cli.health import health_reach, read_alerts_option

__all__ = ["register"]

DONE = ("returned",)


def remediate(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    stack: str = typer.Option(..., "--stack", "-s", help="the stack: its kubeconfig, its journal"),
    yes: bool = typer.Option(False, "--yes", "-y", help="act (under remediation.mode: act); else only say"),
    observe: bool = typer.Option(False, "--observe", help="only say and record what it would do"),
    target: HostTarget = typer.Option(HostTarget.lab, "--target", "-t", help="lab | ssh (real hosts)"),
    ssh_config: Path | None = typer.Option(None, "--ssh-config", help="OpenSSH config (default: the lab's for lab)"),
    kubeconfig: Path | None = typer.Option(None, "--kubeconfig", help="drain through this kubeconfig"
                                           " [default: the stack's]"),
    alerts: Path | None = typer.Option(None, "--alerts", help="firing alerts: Alertmanager's /api/v2/alerts JSON"),
    format: Format = format_option(),
) -> None:
    """Drain, repair, re-check and return the failure domains the health verdicts call for, under the policy."""
    from clusterforge.cli._nodes import node_controls
    from clusterforge.health.act import remediate as run_remediation
    from clusterforge.health.journal import Journal, JournalError, journal_path
    from clusterforge.schedulers import Reach as SchedulerReach

    check_stack(stack)
    check_file("--kubeconfig", kubeconfig)
    spec, reach = health_reach(inventory, target, ssh_config, stack, verify=True)
    policy = spec.remediation
    act = yes and not observe and policy.mode == "act"
    if yes and policy.mode == "observe" and not observe:
        say(err, "remediate: remediation.mode is observe in the declaration: nothing is changed")
    journal = Journal(journal_path(stack))
    controls = lambda: node_controls(SchedulerReach(reach.plan, reach.target, ssh_config, kubeconfig,  # noqa: E731
                                                    stack, inventory.stem))
    try:
        run = run_remediation(reach, policy, journal, act, controls, say=lambda line: say(err, line),
                              alerts=read_alerts_option(alerts))
    except JournalError as exc:
        say(err, f"error: {exc}")
        raise typer.Exit(3) from None
    except ValueError as exc:
        say(err, f"error: --alerts {alerts}: {exc}")
        raise typer.Exit(2) from None
    pending = [o for o in run.outcomes if o.result not in DONE]
    if format is Format.json:
        emit_json({"mode": "act" if act else "observe", "journal": str(journal.path),
                   "nodes": [h.to_dict() for h in run.health], "decisions": [o.to_dict() for o in run.outcomes]})
    else:
        for o in run.outcomes:
            d = o.decision
            say(out, f"{o.result.upper():<9} {d.domain.name} ({d.kind} {d.action.value}): {d.why}"
                     + (f" [{o.detail}, {o.seconds:.0f} s]" if act and o.detail else ""))
        verb = "acted" if act else "would act (observe; `--yes` under remediation.mode: act changes things)"
        say(out, f"remediate: {len(run.outcomes)} decision(s), {verb}; journal {journal.path}")
    raise typer.Exit(1 if pending else 0)


def register(app: typer.Typer) -> None:
    app.command("remediate")(remediate)
