"""What remediate does with the verdicts, under the declared policy: pure.

The unit of every decision is a failure domain: a node alone, or a whole declared NVLink domain (an
NVL72 rack: its compute trays share one NVLink fabric, so a fault on one tray takes every tray out and
the domain returns as one). For each domain, from its members' health and the journal's state:

* every member may take work (PASS, or a WARN with nothing to repair): a domain remediate took out is
  resumed (``resume``); otherwise nothing happens;
* a member needs an action (the ladder's, climbed one rung above the last repair tried while it was out):
  - reimage or rma: the domain is taken out and kept out for the operator (``keep-out``);
  - an action the policy does not make automatic: ``hold``, the operator decides;
  - a repair tried on a member within ``cooldown_s``: ``hold``;
  - the domain is not out yet and its SU or rack already has ``max_out_per_su`` / ``max_out_per_rack``
    domains out (by remediate, or decided earlier in this run): ``hold``;
  - else ``act``: drain the domain, repair the members that need it, check them again, resume it when
    every member passes.
* a member whose checks could not run (UNKNOWN) and none that needs an action: ``hold`` (nothing is known
  to repair; a domain that is out stays out).

Domains already out go first (they hold their place in the limits), then CRITICAL before WARN, then by
name, so the same inputs always give the same decisions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clusterforge.health.evidence import Action
from clusterforge.health.journal import NodeState
from clusterforge.health.ladder import NodeHealth, Verdict, climb, serviceable, worst
from clusterforge.model.remediation import Remediation

__all__ = ["Decision", "Domain", "decide", "domains_of"]

HELD_FOR_OPERATOR = (Action.reimage, Action.rma)


@dataclass(frozen=True, slots=True)
class Domain:
    """A failure domain: `name` (the NVLink domain's, or the node's own), its nodes, the SU and racks it
    counts against."""

    name: str
    nodes: tuple[str, ...]
    su: int
    racks: tuple[str, ...]
    nvlink: bool = False


@dataclass(frozen=True, slots=True)
class Decision:
    kind: str  # act | resume | keep-out | hold
    domain: Domain
    action: Action
    targets: tuple[str, ...]  # the members that need the action (act, keep-out); the domain's nodes otherwise
    verdict: Verdict
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "domain": self.domain.name, "nodes": list(self.domain.nodes),
                "targets": list(self.targets), "action": self.action.value, "verdict": self.verdict.value,
                "why": self.why}


def domains_of(servers: Iterable[tuple[str, int, str]], nvlink: Iterable[tuple[str, int, str, Sequence[str]]]
               ) -> tuple[Domain, ...]:
    """Failure domains from the servers (name, SU, rack) and the NVLink domains (name, SU, rack, members):
    each declared NVLink domain is one, every other server is its own."""
    domains = [Domain(name, tuple(members), su, (rack,), True) for name, su, rack, members in nvlink]
    claimed = {n for d in domains for n in d.nodes}
    domains += [Domain(name, (name,), su, (rack,)) for name, su, rack in servers if name not in claimed]
    return tuple(domains)


def _need(health: NodeHealth, state: NodeState) -> Action:
    return climb(health, state.last_repair if state.out else None)


def decide(health: Mapping[str, NodeHealth], domains: Sequence[Domain], states: Mapping[str, NodeState],
           policy: Remediation, now: float) -> tuple[Decision, ...]:
    """One decision per failure domain that needs one (nothing for a healthy domain in service)."""
    blank = NodeState()

    def out(domain: Domain) -> bool:
        return any(states.get(n, blank).out for n in domain.nodes)

    def verdict(domain: Domain) -> Verdict:
        return worst(health[n].verdict for n in domain.nodes if n in health)

    ordered = sorted((d for d in domains if any(n in health for n in d.nodes)),
                     key=lambda d: (not out(d), -verdict(d).rank, d.name))
    out_su: dict[int, int] = {}
    out_rack: dict[str, int] = {}
    for domain in (d for d in ordered if out(d)):
        out_su[domain.su] = out_su.get(domain.su, 0) + 1
        for rack in domain.racks:
            out_rack[rack] = out_rack.get(rack, 0) + 1
    decisions = []
    for domain in ordered:
        members = [health[n] for n in domain.nodes if n in health]
        needs = {m.name: _need(m, states.get(m.name, blank)) for m in members}
        targets = tuple(n for n, a in needs.items() if a is not Action.none)
        is_out = out(domain)
        if not targets:
            unknown = [m.name for m in members if m.verdict is Verdict.UNKNOWN]
            if unknown:
                decisions.append(Decision("hold", domain, Action.none, tuple(unknown), Verdict.UNKNOWN,
                                          f"cannot judge {', '.join(unknown)} (a check could not run)"
                                          + ("; the domain stays out" if is_out else "; left in service")))
            elif is_out and all(serviceable(m) for m in members):
                decisions.append(Decision("resume", domain, Action.none, domain.nodes, verdict(domain),
                                          "every member passes again"))
            continue
        action = max((needs[n] for n in targets), key=lambda a: a.rank)
        why = "; ".join(f"{n}: {health[n].verdict.value} -> {needs[n].value}" for n in targets)
        if domain.nvlink and len(domain.nodes) > 1:
            why += f" (NVLink domain {domain.name}: all {len(domain.nodes)} trays go out as one)"
        last = [states.get(n, blank).last_repair_t for n in targets]
        recent = [t for t in last if t is not None and now - t < policy.cooldown_s]
        if action in HELD_FOR_OPERATOR:
            kind, note = "keep-out", f"; {action.value} waits for an operator"
        elif action.value not in policy.automatic:
            kind, note = "hold", f"; {action.value} is not automatic (remediation.automatic:" \
                                 f" {', '.join(policy.automatic) or 'none'})"
        elif recent:
            kind, note = "hold", f"; cooldown: repaired {now - max(recent):.0f} s ago" \
                                 f" (remediation.cooldown_s: {policy.cooldown_s})"
        else:
            kind, note = "act", ""
        if kind in ("act", "keep-out") and not is_out:
            full = _limit(domain, out_su, out_rack, policy)
            if full:
                kind, note = "hold", f"; {full}"
            else:
                out_su[domain.su] = out_su.get(domain.su, 0) + 1
                for rack in domain.racks:
                    out_rack[rack] = out_rack.get(rack, 0) + 1
        decisions.append(Decision(kind, domain, action, targets, verdict(domain), why + note))
    return tuple(decisions)


def _limit(domain: Domain, out_su: Mapping[int, int], out_rack: Mapping[str, int], policy: Remediation) -> str:
    """Why the domain may not go out now, or "" when it may."""
    if out_su.get(domain.su, 0) >= policy.max_out_per_su:
        return (f"SU {domain.su} already has {out_su.get(domain.su, 0)} failure domain(s) out"
                f" (remediation.max_out_per_su: {policy.max_out_per_su})")
    for rack in domain.racks:
        if out_rack.get(rack, 0) >= policy.max_out_per_rack:
            return (f"rack {rack} already has {out_rack.get(rack, 0)} failure domain(s) out"
                    f" (remediation.max_out_per_rack: {policy.max_out_per_rack})")
    return ""
