"""`clusterforge remediate`: act on the health verdicts under the declaration's `remediation:` policy.

Without `--yes`, or with `--observe`, or under `remediation.mode: observe`, it prints and records what it
would do and changes nothing. With `--yes` under `mode: act`, each failure domain that needs it (a node,
or a whole declared NVLink domain) is drained in every declared scheduler (clusterforge.schedulers),
repaired at its rung of the ladder, checked again and returned to service when it passes; a domain
remediate took out that passes again is returned. Every decision and step goes to the journal
`<state>/stacks/STACK/remediation.jsonl` first, so a run killed halfway is continued by the next.
The library: clusterforge.health.act.

`--write-units DIR` runs nothing: it writes the continuous loop, a systemd service and timer that run this
same command (the same reach, `--yes` when the declaration says `mode: act`) every `--every` seconds after
the last run ended, into DIR (clusterforge.health.units says where they run and why). The loop reads the
firing alerts from the declaration's Alertmanager at every run (or the `--alertmanager` it was written with);
`--alerts FILE` is refused there.

Exit codes: 0 nothing is left to do, 1 a domain is held, kept out, still out or failed (observe: a
decision is pending), 2 usage, 3 environment (the journal is held by another run, a scheduler cannot be
reached).
"""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._args import check_file, check_stack
from clusterforge.cli._common import Format, HostTarget, emit_json, err, format_option, out, say, usage_error
from clusterforge.cli.health import ALERTMANAGER_HELP, health_reach, read_alerts_option

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
    alerts: Path | None = typer.Option(None, "--alerts", help="firing alerts from this file (Alertmanager's"
                                       " /api/v2/alerts JSON), not from an Alertmanager"),
    alertmanager: str | None = typer.Option(None, "--alertmanager", help=ALERTMANAGER_HELP),
    write_units: Path | None = typer.Option(None, "--write-units", help="write the systemd service and timer that"
                                            " run this command continuously into this directory; run nothing"),
    every: int = typer.Option(300, "--every", help="with --write-units: seconds between the end of one run and"
                              " the next (60 to 86400)"),
    format: Format = format_option(),
) -> None:
    """Drain, repair, re-check and return the failure domains the health verdicts call for, under the policy."""
    from clusterforge.cli._nodes import node_controls
    from clusterforge.health.act import remediate as run_remediation
    from clusterforge.health.journal import Journal, JournalError, journal_path
    from clusterforge.schedulers import Reach as SchedulerReach

    check_stack(stack)
    check_file("--kubeconfig", kubeconfig)
    if write_units is not None and alerts is not None:
        usage_error("--write-units with --alerts FILE: the loop reads the live Alertmanager (the declaration's, or"
                    " --alertmanager URL); a file is for one run offline")
    spec, reach = health_reach(inventory, target, ssh_config, stack, True, alertmanager, alerts)
    policy = spec.remediation
    if write_units is not None:
        _write_units(write_units, inventory, stack, target, ssh_config, kubeconfig, policy.mode == "act", every,
                     alertmanager)
        return
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


def _write_units(directory: Path, inventory: Path, stack: str, target: HostTarget, ssh_config: Path | None,
                 kubeconfig: Path | None, act: bool, every: int, alertmanager: str | None) -> None:
    import os
    import sys

    from clusterforge.health.units import CARRIED, Invocation, UnitError, remediation_units
    from clusterforge.paths import STATE_DIR_ENV, state_dir

    if directory.exists() and not directory.is_dir():
        usage_error(f"--write-units {directory}: not a directory")
    how = Invocation(Path(sys.executable), inventory.resolve(), stack, HostTarget(target).value, Path.cwd(),
                     ssh_config.resolve() if ssh_config else None, kubeconfig.resolve() if kubeconfig else None,
                     act, every, {**{k: os.environ[k] for k in CARRIED if k in os.environ},
                                  STATE_DIR_ENV: str(state_dir())},  # the journal this shell's runs write
                     alertmanager=alertmanager)
    try:
        units = remediation_units(how)
    except UnitError as exc:
        usage_error(str(exc))
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in units.items():
        (directory / name).write_text(text)
        say(out, f"wrote {directory / name}")
    timer = next(n for n in units if n.endswith(".timer"))
    say(out, f"remediate: the loop {'acts (mode: act)' if act else 'observes only (mode: observe)'} every {every} s;"
             f" install: cp {' '.join(str(directory / n) for n in units)} /etc/systemd/system/ &&"
             f" systemctl daemon-reload && systemctl enable --now {timer}")


def register(app: typer.Typer) -> None:
    app.command("remediate")(remediate)
