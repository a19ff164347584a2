"""When an `up` or `destroy` saves the stack's state: after every step, or once when the engine closes the run.

Pulumi's file backend rewrites the whole state after every step (Pulumi 3.260: each save replays the
run's journal over the base state, checks the result's integrity and writes it whole), so a first
`up` costs time quadratic in the number of resources: superpod-4su's 608 resources took 58.5 s
against 7 s of preview; at 64 SUs (10,699 resources) a first `up` or a `destroy` runs for many
minutes. With PULUMI_SKIP_CHECKPOINTS the engine keeps the journal in memory and writes the state
once when it closes the run, which it also does when the run fails or is cancelled (Ctrl-C, SIGTERM:
the CLI gives the engine its graceful cancel, cli/engine_run.py); only a run killed outright
(SIGKILL, power) loses its record, and the state then reads as it did before that run.

That loss is harmless only where creating a resource again converges on what the lost run did:
components (nothing outside the state) and delivered switch configs (the same files written again,
the same config pushed again). It is not harmless for what owns machines or mints secrets: the lab's
containers and VMs, a bare-metal install, the Kubernetes PKI and the MUNGE key (a second create makes
new keys the hosts do not have), the provisioning that hands them out. So `auto` saves once at the
end only for a stack that delivers switch configs and does not provision; every other stack saves
after each step, as Pulumi does by default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from clusterforge.targets import TARGETS

Mode = Literal["step", "end"]
MODES = ("auto", "step", "end")


def flag(config: Mapping[str, str], key: str, default: bool) -> bool:
    """A `clusterforge:*` boolean setting as the program reads it (true/yes/1/on; absent: ``default``)."""
    value = config.get(key)
    return default if not value else value.lower() in ("true", "yes", "1", "on")


@dataclass(frozen=True)
class Checkpoints:
    mode: Mode
    why: str

    @property
    def line(self) -> str:
        where = "after every step" if self.mode == "step" else "once, when the engine closes the run"
        return f"state: saved {where} ({self.why})"


def choose(requested: str, config: Mapping[str, str]) -> Checkpoints:
    """The mode for `requested` (auto, step or end) on a stack whose `clusterforge:*` settings are `config`
    (short keys; absent: the program's defaults, target files and provision true)."""
    if requested not in MODES:
        raise ValueError(f"checkpoints {requested!r}: expected one of {', '.join(MODES)}")
    if requested == "step":
        return Checkpoints("step", "--checkpoints step")
    if requested == "end":
        return Checkpoints("end", "--checkpoints end: a run killed outright leaves the state of the run before")
    chosen = TARGETS.get((config.get("target") or "files").lower())
    provision = flag(config, "provision", True)
    if chosen is not None and chosen.emulates:
        return Checkpoints("step", "auto: the lab's hosts are machines the state must not lose")
    if provision:
        return Checkpoints("step", "auto: provisioning hands out keys and certificates the state must not lose")
    return Checkpoints("end", "auto: switch configs and components only, whose create converges when repeated; "
                              "a run killed outright is finished by the next `up`")
