"""The continuous remediation loop: a systemd service and timer that run `clusterforge remediate` on the
operator's machine, pure.

Where it runs, and why there: remediate needs the declaration, the stack's state directory (the journal and
its lock), an SSH config that reaches every GPU server as root and a kubeconfig that may cordon and evict. The
machine that ran `clusterforge up` has all four; the control node has none of them (its image carries the
control plane, not clusterforge, and no key that opens the GPU servers), and giving it fleet-wide root SSH would
widen what a compromised control node reaches. So the loop is a timer on the operator's machine, writing the same
journal as a remediate run by hand: the two never run at once (the journal's lock; the second exits 3), and
a timer never starts a run while the last one is still going (a oneshot service is started again only once
it has finished).

The service runs remediate exactly as the command line would, with the reach it was written with
(`--target`, `--ssh-config`, `--kubeconfig`, `--alertmanager` when one was named: else each run reads the firing
alerts from the Alertmanager the declaration plans, as read at that run) and `--yes` only when the
declaration's policy said ``mode: act`` when the units were written. The declaration is read again at every
run, so ``mode: observe`` written into it later stops the acting at once (remediate never acts under observe,
`--yes` or not); a policy turned to ``act`` later needs the units written again. Remediate's exit 1 (a domain
held, kept out or still out: an operator is needed) leaves the service failed until a run that leaves nothing to
do, where `systemctl --failed` and node_exporter's systemd collector see it.

The environment the units carry is the one they were written from, by name (CARRIED): which Python package,
which Pulumi engine and home, which state directory and lab home. Nothing secret is carried; a stack whose
Pulumi passphrase remediate would need (no `--kubeconfig`) reads it from the state directory's passphrase
file as every command does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CARRIED", "DEFAULT_INTERVAL_S", "Invocation", "UnitError", "remediation_units", "unit_names"]

DEFAULT_INTERVAL_S = 300
# the environment a unit keeps from the shell that wrote it, by name: where clusterforge, its engine and its
# state are; never a secret
CARRIED = ("PATH", "PYTHONPATH", "PULUMI_HOME", "PULUMI_SKIP_UPDATE_CHECK",
           "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION", "CLUSTERFORGE_STATE_DIR", "CLUSTERFORGE_LAB_HOME")
_STACK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_PLAIN = re.compile(r"[A-Za-z0-9_./:=@+,-]+")


class UnitError(ValueError):
    """A value that cannot be written into a unit file (a control character in a path)."""


@dataclass(frozen=True)
class Invocation:
    """How the service runs remediate: `python` runs the package (`python -m clusterforge.cli`); the paths are
    absolute; `environment` holds the CARRIED variables that were set."""

    python: Path
    inventory: Path
    stack: str
    target: str
    workdir: Path
    ssh_config: Path | None = None
    kubeconfig: Path | None = None
    act: bool = False
    interval_s: int = DEFAULT_INTERVAL_S
    environment: Mapping[str, str] | None = None
    alertmanager: str | None = None  # `--alertmanager` as given (a URL or none); None: the declaration's at each run

    def argv(self) -> list[str]:
        args = [str(self.python), "-m", "clusterforge.cli", "remediate", str(self.inventory), "--stack", self.stack,
                "--target", self.target]
        if self.ssh_config is not None:
            args += ["--ssh-config", str(self.ssh_config)]
        if self.kubeconfig is not None:
            args += ["--kubeconfig", str(self.kubeconfig)]
        if self.alertmanager is not None:
            args += ["--alertmanager", self.alertmanager]
        if self.act:
            args.append("--yes")
        return args


def unit_names(stack: str) -> tuple[str, str]:
    """The service's and the timer's file names for `stack`."""
    if not _STACK.fullmatch(stack):
        raise UnitError(f"stack name {stack[:80]!r} cannot name a unit")
    return f"clusterforge-remediate-{stack}.service", f"clusterforge-remediate-{stack}.timer"


def _value(text: str, what: str) -> str:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise UnitError(f"{what}: a control character cannot be written into a unit file")
    return text


def _word(arg: str) -> str:
    """One ExecStart word (systemd.service's command line: C-style quotes; % and $ are specifiers and
    variables, doubled to stay literal)."""
    arg = _value(arg, f"argument {arg[:80]!r}").replace("%", "%%").replace("$", "$$")
    if _PLAIN.fullmatch(arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _assignment(name: str, value: str) -> str:
    """One Environment= assignment, quoted as a whole (systemd.exec: a quoted "NAME=value" word)."""
    text = _value(f"{name}={value}", f"environment {name}").replace("%", "%%").replace("$", "$$")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def remediation_units(how: Invocation) -> dict[str, str]:
    """The service and the timer, by file name."""
    service, timer = unit_names(how.stack)
    if not 60 <= how.interval_s <= 86_400:
        raise UnitError(f"interval {how.interval_s} s: between 60 s and a day")
    mode = "acts (--yes; the declaration's mode: act)" if how.act else "observes only (no --yes)"
    env: Sequence[tuple[str, str]] = sorted((k, v) for k, v in (how.environment or {}).items() if k in CARRIED)
    lines = [
        "# Written by `clusterforge remediate --write-units`: the continuous remediation loop (docs/health.md).",
        "[Unit]",
        f"Description=clusterforge remediate, stack {_value(how.stack, 'stack')}: {mode}",
        "Wants=network-online.target",
        "After=network-online.target",
        "",
        "[Service]",
        "Type=oneshot",
        f"WorkingDirectory={_word(str(how.workdir))}",
        *(f"Environment={_assignment(k, v)}" for k, v in env),
        "ExecStart=" + " ".join(_word(a) for a in how.argv()),
        # a run drains (drain_timeout_s), re-provisions and may reboot a node (15 minutes): no start timeout
        "TimeoutStartSec=infinity",
        "",
    ]
    timer_lines = [
        "# Written by `clusterforge remediate --write-units`: the continuous remediation loop (docs/health.md).",
        "[Unit]",
        f"Description=clusterforge remediate, stack {how.stack}, {how.interval_s} s after the last run ended",
        "",
        "[Timer]",
        "OnActiveSec=60",
        f"OnUnitInactiveSec={how.interval_s}",
        "AccuracySec=5",
        f"Unit={service}",
        "",
        "[Install]",
        "WantedBy=timers.target",
        "",
    ]
    return {service: "\n".join(lines), timer: "\n".join(timer_lines)}
