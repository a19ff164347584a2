"""remediate's run: read the journal, judge every node, decide under the policy, and carry the decisions
out through the scheduler drivers (clusterforge.schedulers), recording each step before the next.

For a decision to act: ``decided``; the failure domain drained in every declared scheduler (``drained``;
skipped when the journal says it is out already); each target repaired at its rung (``repaired``); the
targets judged again (``checked``); every member serviceable: resumed in the schedulers (``resumed``),
else it stays out and the next run climbs the ladder. ``keep-out`` drains the domain and records it for
the operator; ``hold`` and ``resume`` are recorded as such. In observe mode the decisions are recorded
(``observe: true``) and nothing else happens.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clusterforge.health.evidence import Action
from clusterforge.health.gather import Reach, gather, gpu_servers
from clusterforge.health.journal import Journal, NodeState, replay
from clusterforge.health.ladder import NodeHealth, serviceable
from clusterforge.health.policy import Decision, Domain, decide, domains_of
from clusterforge.model.remediation import Remediation
from clusterforge.schedulers import DrainRefused, NodeControl, ResumeFailed, drain_nodes, resume_nodes

if TYPE_CHECKING:
    from clusterforge.health.repair import Repaired

__all__ = ["Outcome", "Run", "plan_domains", "remediate"]

Say = Callable[[str], Any]
Repair = Callable[[str, Action], "Repaired"]
Check = Callable[[Sequence[str]], Sequence[NodeHealth]]


@dataclass
class Outcome:
    decision: Decision
    result: str  # done | returned | still-out | held | kept-out | failed | observed
    detail: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**self.decision.to_dict(), "result": self.result, "detail": self.detail,
                "seconds": round(self.seconds, 1)}


def plan_domains(reach: Reach) -> tuple[Domain, ...]:
    plan = reach.plan
    servers = [(d.name, d.su or 0, d.rack or "") for d in plan.devices if d.name in set(gpu_servers(plan))]
    return domains_of(servers, ((n.name, n.su, n.rack, n.members) for n in plan.nvlink_domains))


@dataclass
class Run:
    reach: Reach
    policy: Remediation
    journal: Journal
    say: Say
    alerts: Any = None
    outcomes: list[Outcome] = field(default_factory=list)
    health: tuple[NodeHealth, ...] = ()
    states: Mapping[str, NodeState] = field(default_factory=dict)

    def decide(self) -> tuple[Decision, ...]:
        """Judge every node and decide, from the journal's state; records nothing."""
        self.states = replay(self.journal.entries())
        self.health = gather(self.reach, alerts=self.alerts, say=self.say)
        return decide({h.name: h for h in self.health}, plan_domains(self.reach), self.states, self.policy,
                      time.time())

    def observe(self, decisions: Sequence[Decision]) -> list[Outcome]:
        for decision in decisions:
            self._record("decided", decision, observe=True)
            self.outcomes.append(Outcome(decision, "observed", "observe mode: nothing was changed"))
        return self.outcomes

    def carry_out(self, decisions: Sequence[Decision], controls: Sequence[NodeControl], repair: Repair,
                  check: Check) -> list[Outcome]:
        for decision in decisions:
            started = time.monotonic()
            try:
                outcome = self._one(decision, controls, repair, check)
            except (DrainRefused, ResumeFailed) as exc:
                self._record("failed", decision, result=str(exc))
                outcome = Outcome(decision, "failed", str(exc))
            outcome.seconds = time.monotonic() - started
            self.say(f"remediate {decision.domain.name}: {outcome.result} in {outcome.seconds:.0f} s"
                     + (f" ({outcome.detail})" if outcome.detail else ""))
            self.outcomes.append(outcome)
        return self.outcomes

    def _record(self, event: str, decision: Decision, **fields: Any) -> None:
        evidence = [e.to_dict() for h in self.health if h.name in decision.targets for e in h.evidence
                    if e.status.value in ("warn", "fail", "unknown")]
        entry = {"domain": decision.domain.name, "targets": list(decision.targets),
                 "action": decision.action.value, "why": decision.why, "evidence": evidence, **fields}
        self.journal.record(event, decision.domain.nodes, **entry)

    def _is_out(self, domain: Domain) -> bool:
        return any(self.states.get(n, NodeState()).out for n in domain.nodes)

    def _one(self, decision: Decision, controls: Sequence[NodeControl], repair: Repair, check: Check) -> Outcome:
        domain, say = decision.domain, self.say
        if decision.kind == "hold":
            self._record("held", decision)
            return Outcome(decision, "held", decision.why)
        if decision.kind == "resume":
            resume_nodes(controls, domain.nodes, say=say)
            self._record("resumed", decision, result="schedulable")
            return Outcome(decision, "returned", "back in service")
        self._record("decided", decision)
        if not self._is_out(domain):
            drain_nodes(controls, domain.nodes, f"clusterforge remediate: {decision.why}"[:200],
                        self.policy.drain_timeout_s, say=say)
            self._record("drained", decision)
        if decision.kind == "keep-out":
            self._record("kept-out", decision, result=f"waits for the operator: {decision.action.value}")
            return Outcome(decision, "kept-out", f"{decision.action.value}: repair it, then `clusterforge replace`")
        problems: list[str] = []
        simulated: list[str] = []
        for node in decision.targets:
            say(f"remediate {node}: {decision.action.value}")
            done = repair(node, decision.action)
            self._record("repaired", decision, targets=[node], result=done.problem or "ok",
                         **({"simulated": done.simulated} if done.simulated else {}))
            if done.problem:
                problems.append(f"{node}: {done.problem}")
            if done.simulated:
                simulated.append(f"{node} {decision.action.value} {done.simulated}")
        after = {h.name: h for h in check(domain.nodes)}
        self._record("checked", decision, result={n: h.verdict.value for n, h in after.items()})
        unwell = [n for n in domain.nodes if n not in after or not serviceable(after[n])]
        if unwell:
            detail = "; ".join(problems) or f"still not serviceable: {', '.join(unwell)}"
            return Outcome(decision, "still-out", detail + "; the next run climbs the ladder")
        resume_nodes(controls, domain.nodes, say=say)
        self._record("resumed", decision, result="schedulable")
        return Outcome(decision, "returned", f"{decision.action.value} cleared the evidence"
                       + "".join(f"; {s}" for s in simulated))


def remediate(reach: Reach, policy: Remediation, journal: Journal, act: bool,
              controls: Callable[[], Sequence[NodeControl]], say: Say, alerts: Any = None) -> Run:
    """One remediate run under the journal's lock: judge, decide, then act (`act`) or only record the
    decisions. `controls` opens the live schedulers, only when a decision changes one."""
    from clusterforge.health.repair import Repairs

    run = Run(reach, policy, journal, say, alerts)
    with journal.open():
        decisions = run.decide()
        if not act:
            run.observe(decisions)
            return run
        changing = [d for d in decisions if d.kind != "hold"]
        opened = controls() if changing else ()
        run.carry_out(decisions, opened, Repairs(reach, say),
                      lambda nodes: gather(reach, nodes, alerts=alerts, say=say))
    return run
