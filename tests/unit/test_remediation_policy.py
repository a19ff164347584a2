"""The remediation policy, pure: failure domains (a node, or a whole NVLink domain), the decisions under
the declared limits, cooldown and automatic actions, the journal's replay after a killed run, and the
policy's own declaration errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, assert_refused, line_of, run_cli, workdir

from clusterforge.health import Action, Evidence, NodeHealth, Status, judge
from clusterforge.health.journal import Journal, JournalError, NodeState, replay
from clusterforge.health.policy import decide, domains_of
from clusterforge.health.repair import Repaired
from clusterforge.model.remediation import Remediation
from clusterforge.targets import SSH

ROOT = Path(__file__).resolve().parents[2]
NOW = 1_000_000.0
ACT = Remediation(mode="act")


def _sick(name: str, action: Action = Action.drain) -> NodeHealth:
    return judge(name, [Evidence(name, "doctor:data-links", Status.fail, "rail0 is down", action)])


def _well(name: str) -> NodeHealth:
    return judge(name, [Evidence(name, "doctor:data-links", Status.ok, "up")])


def _cluster(*health: NodeHealth) -> dict[str, NodeHealth]:
    return {h.name: h for h in health}


SERVERS = [("a1", 1, "r01"), ("a2", 1, "r01"), ("b1", 1, "r02"), ("c1", 2, "r03")]
DOMAINS = domains_of(SERVERS, [])


def test_a_sick_node_is_acted_on_and_healthy_ones_get_no_decision():
    [decision] = decide(_cluster(_sick("a1"), _well("a2"), _well("b1")), DOMAINS, {}, ACT, NOW)
    assert (decision.kind, decision.action, decision.targets) == ("act", Action.drain, ("a1",))


def test_a_second_fault_in_the_same_su_beyond_the_limit_is_held():
    decisions = decide(_cluster(_sick("a1"), _sick("b1"), _sick("c1")), DOMAINS, {}, ACT, NOW)
    got = {d.domain.name: d.kind for d in decisions}
    assert got == {"a1": "act", "b1": "hold", "c1": "act"}  # c1 is in SU 2
    held = next(d for d in decisions if d.domain.name == "b1")
    assert "max_out_per_su: 1" in held.why


def test_a_domain_already_out_holds_its_place_and_goes_first():
    states = {"b1": NodeState(out=True, repairs=(Action.drain,), last_repair_t=NOW - 10_000)}
    decisions = decide(_cluster(_sick("a1"), _sick("b1")), DOMAINS, states, ACT, NOW)
    assert [(d.domain.name, d.kind, d.action) for d in decisions] == [("b1", "act", Action.reset_gpu),
                                                                     ("a1", "hold", Action.drain)]


def test_the_rack_limit_holds_a_second_node_of_the_rack():
    policy = Remediation(mode="act", max_out_per_su=5, max_out_per_rack=1)
    decisions = decide(_cluster(_sick("a1"), _sick("a2"), _sick("b1")), DOMAINS, {}, policy, NOW)
    assert {d.domain.name: d.kind for d in decisions} == {"a1": "act", "a2": "hold", "b1": "act"}
    assert "rack r01" in next(d for d in decisions if d.domain.name == "a2").why


def test_an_nvlink_domain_goes_out_whole_and_counts_once():
    domains = domains_of(SERVERS + [("t1", 1, "r09"), ("t2", 1, "r09"), ("t3", 1, "r09")],
                         [("r09-nvl", 1, "r09", ("t1", "t2", "t3"))])
    [decision] = decide(_cluster(_well("t1"), _sick("t2", Action.reset_gpu), _well("t3")), domains, {}, ACT, NOW)
    assert decision.domain.nodes == ("t1", "t2", "t3") and decision.targets == ("t2",)
    assert "NVLink domain r09-nvl: all 3 trays go out as one" in decision.why


def test_a_domain_out_whose_members_all_pass_is_resumed():
    domains = domains_of([("t1", 1, "r09"), ("t2", 1, "r09")], [("nvl", 1, "r09", ("t1", "t2"))])
    states = {"t1": NodeState(out=True), "t2": NodeState(out=True, repairs=(Action.reset_gpu,))}
    [decision] = decide(_cluster(_well("t1"), _well("t2")), domains, states, ACT, NOW)
    assert (decision.kind, decision.domain.nodes) == ("resume", ("t1", "t2"))


def test_an_unknown_node_is_held_and_not_resumed():
    unknown = judge("a1", [])
    [decision] = decide(_cluster(unknown), DOMAINS, {"a1": NodeState(out=True)}, ACT, NOW)
    assert decision.kind == "hold" and "stays out" in decision.why


def test_a_repair_within_the_cooldown_is_held():
    states = {"a1": NodeState(out=True, repairs=(Action.drain,), last_repair_t=NOW - 60)}
    [decision] = decide(_cluster(_sick("a1")), DOMAINS, states, ACT, NOW)
    assert decision.kind == "hold" and "cooldown" in decision.why and decision.action is Action.reset_gpu


def test_an_action_the_policy_does_not_automate_is_held():
    policy = Remediation(mode="act", automatic=["drain"])
    [decision] = decide(_cluster(_sick("a1", Action.reboot)), DOMAINS, {}, policy, NOW)
    assert decision.kind == "hold" and "reboot is not automatic" in decision.why


@pytest.mark.parametrize("action", [Action.reimage, Action.rma])
def test_reimage_and_rma_keep_the_node_out_for_the_operator(action):
    [decision] = decide(_cluster(_sick("a1", action)), DOMAINS, {}, ACT, NOW)
    assert (decision.kind, decision.action) == ("keep-out", action)


def test_the_same_inputs_give_the_same_decisions():
    cluster = _cluster(_sick("c1"), _sick("b1"), _sick("a1"), _sick("a2"))
    assert decide(cluster, DOMAINS, {}, ACT, NOW) == decide(dict(reversed(cluster.items())), DOMAINS, {}, ACT, NOW)


def test_the_nvl72_example_makes_one_domain_per_rack():
    from clusterforge.health.act import plan_domains
    from clusterforge.health.gather import Reach, gpu_servers
    from clusterforge.loading import load_and_plan

    _, plan, _ = load_and_plan(ROOT / "inventory" / "gb200-nvl72-su.yaml")
    domains = plan_domains(Reach(plan, SSH))
    nvlink = [d for d in domains if d.nvlink]
    assert len(nvlink) == len(plan.nvlink_domains) > 0
    assert {n for d in domains for n in d.nodes} == set(gpu_servers(plan))
    assert all(len(d.nodes) == 18 and len(d.racks) == 1 for d in nvlink)


def test_replay_after_a_run_killed_between_drain_and_repair(tmp_path):
    journal = Journal(tmp_path / "remediation.jsonl", who="test")
    journal.record("decided", ["a1"], action="drain")
    journal.record("drained", ["a1"], action="drain")
    states = replay(journal.entries())
    assert states["a1"].out and states["a1"].last_repair is None  # the next run repairs at the same rung
    journal.record("repaired", ["a1"], targets=["a1"], action="drain", result="ok")
    journal.record("checked", ["a1"], action="drain", result={"a1": "CRITICAL"})
    states = replay(journal.entries())
    assert states["a1"].out and states["a1"].last_repair is Action.drain
    journal.record("resumed", ["a1"], action="none")
    assert not replay(journal.entries())["a1"].out


def test_a_torn_last_line_is_skipped_and_the_next_entry_starts_clean(tmp_path):
    path = tmp_path / "remediation.jsonl"
    journal = Journal(path, who="test")
    journal.record("drained", ["a1"], action="drain")
    with path.open("a") as handle:
        handle.write('{"at": "2026-12-06T03:00:00+00:00", "event": "resu')
    journal.record("repaired", ["a1"], action="drain", result="ok")
    entries = journal.entries()
    assert [e["event"] for e in entries] == ["drained", "repaired"] and journal.torn == [2]
    assert all(json.loads(line) for i, line in enumerate(path.read_text().splitlines()) if i != 1)


def test_a_journal_line_that_is_not_json_is_located(tmp_path):
    path = tmp_path / "remediation.jsonl"
    path.write_text('{"event": "drained", "nodes": ["a1"]}\nnot json at all\n')
    with pytest.raises(JournalError, match=r"remediation.jsonl:2:1: not JSON"):
        Journal(path).entries()


def test_a_second_run_on_the_same_journal_is_refused(tmp_path):
    first, second = Journal(tmp_path / "j.jsonl"), Journal(tmp_path / "j.jsonl")
    with first.open(), pytest.raises(JournalError, match="another remediate run"), second.open():
        pass


@pytest.mark.parametrize(("block", "needle", "field", "message"), [
    ('  cooldown_s: "5"\n', "cooldown_s", "remediation.cooldown_s", "a string is not a valid"),
    ("  automatic: [drain, rma]\n", "automatic", "remediation.automatic.1", "Input should be"),
    ("  automatic: [drain, drain]\n", "automatic", "remediation.automatic.1", "listed twice"),
    ("  mode: act\n  max_out_per_rack: 0\n", "max_out_per_rack", "remediation.max_out_per_rack", "could never act"),
    ("  mode: sometimes\n", "mode", "remediation.mode", "Input should be"),
    ("  max_out_per_su: -1\n", "max_out_per_su", "remediation.max_out_per_su", "greater than"),
    ("  retries: 3\n", "retries", "remediation.retries", "unknown field"),
])
def test_a_bad_policy_is_refused_with_its_location(tmp_path, capsys, block, needle, field, message):
    text = LAB_TEXT + "remediation:\n" + block
    path = workdir(tmp_path) / "policy.yaml"
    path.write_text(text)
    outcome = run_cli(capsys, "validate", str(path))
    assert_refused(outcome, path, line_of(text, f"\n  {needle}:") + 1, field, message)


def test_the_policy_defaults_are_cautious():
    policy = Remediation()
    assert (policy.mode, policy.max_out_per_su, policy.max_out_per_rack) == ("observe", 1, 1)
    assert "reimage" not in policy.automatic and "rma" not in policy.automatic


class _Scheduler:
    """A NodeControl that records what remediate asks of it (the lab test drives the real ones)."""

    scheduler = "fake"

    def __init__(self, nodes: set[str], refuse_resume: bool = False) -> None:
        self.nodes, self.refuse_resume = nodes, refuse_resume
        self.calls: list[tuple[str, str, str]] = []

    def manages(self, node: str) -> bool:
        return node in self.nodes

    def drain(self, node, reason, timeout_s, say):
        from clusterforge.schedulers import Drained

        self.calls.append(("drain", node, reason))
        return Drained(self.scheduler, node, "0 pod(s) evicted")

    def rejoin(self, node, rendered, private, say):
        return None

    def resume(self, node):
        if self.refuse_resume:
            raise RuntimeError("the controller does not answer")
        self.calls.append(("resume", node, ""))
        return "resumed"


def _run(tmp_path, health, states=None):
    from clusterforge.health.act import Run

    run = Run(None, ACT, Journal(tmp_path / "remediation.jsonl", who="test"), say=lambda _line: None)  # type: ignore[arg-type]
    run.health = tuple(health.values())
    decisions = decide(health, DOMAINS, states or {}, ACT, NOW)
    return run, decisions


def test_a_repair_that_does_not_clear_the_fault_leaves_the_node_out_and_a_later_pass_returns_it(tmp_path):
    """act: drained with remediate's reason, repaired, checked; still failing: it stays out (no resume). The
    next run, the node passing again: resumed in the scheduler and recorded, and the journal says it is in."""
    scheduler = _Scheduler({"a1", "a2", "b1", "c1"})
    health = _cluster(_sick("a1"), _well("a2"), _well("b1"), _well("c1"))
    run, decisions = _run(tmp_path, health)
    repaired: list[tuple[str, Action]] = []
    outcomes = run.carry_out(decisions, [scheduler], lambda n, a: repaired.append((n, a)) or Repaired(),
                             lambda nodes: [health[n] for n in nodes])
    assert [(o.decision.domain.name, o.result) for o in outcomes] == [("a1", "still-out")]
    assert repaired == [("a1", Action.drain)]
    assert scheduler.calls == [("drain", "a1", "clusterforge remediate: a1: CRITICAL -> drain")]
    entries = run.journal.entries()
    assert [e["event"] for e in entries] == ["decided", "drained", "repaired", "checked"]
    assert replay(entries)["a1"].out

    well = _cluster(_well("a1"), _well("a2"), _well("b1"), _well("c1"))
    again, decisions = _run(tmp_path, well, replay(entries))
    assert [(d.kind, d.domain.name) for d in decisions] == [("resume", "a1")]
    outcomes = again.carry_out(decisions, [scheduler], lambda n, a: pytest.fail("nothing to repair"),
                               lambda nodes: pytest.fail("nothing to check"))
    assert [(o.decision.domain.name, o.result) for o in outcomes] == [("a1", "returned")]
    assert scheduler.calls[-1] == ("resume", "a1", "")
    entries = again.journal.entries()
    assert (entries[-1]["event"], entries[-1]["nodes"]) == ("resumed", ["a1"]) and not replay(entries)["a1"].out


def test_a_scheduler_that_cannot_take_the_node_back_is_a_failed_step_and_the_node_stays_out(tmp_path):
    earlier = Journal(tmp_path / "remediation.jsonl", who="test")
    earlier.record("drained", ["a1"], domain="a1", action="drain")
    earlier.record("repaired", ["a1"], domain="a1", targets=["a1"], action="drain", result="ok")
    health = _cluster(_well("a1"), _well("a2"), _well("b1"), _well("c1"))
    run, decisions = _run(tmp_path, health, replay(earlier.entries()))
    outcomes = run.carry_out(decisions, [_Scheduler({"a1"}, refuse_resume=True)], lambda n, a: Repaired(),
                             lambda nodes: [health[n] for n in nodes])
    assert [(o.result, o.detail) for o in outcomes] == [("failed", "fake: the controller does not answer")]
    entries = run.journal.entries()
    assert [e["event"] for e in entries] == ["drained", "repaired", "failed"]
    assert replay(entries)["a1"].out  # the next run tries the return again


def test_a_simulated_reset_that_clears_the_evidence_returns_the_node_in_one_run_and_says_simulated(tmp_path):
    """The lab's reset_gpu rung (no GPU): the repair says SIMULATED, the journal's `repaired` entry carries it,
    and the node is resumed once the re-check passes."""
    scheduler = _Scheduler({"a1", "a2", "b1", "c1"})
    health = _cluster(_sick("a1", Action.reset_gpu), _well("a2"), _well("b1"), _well("c1"))
    run, decisions = _run(tmp_path, health)
    outcomes = run.carry_out(decisions, [scheduler], lambda n, a: Repaired(None, "SIMULATED: no GPU"),
                             lambda nodes: [_well(n) for n in nodes])
    assert [(o.result, o.detail) for o in outcomes] == [("returned", "reset_gpu cleared the evidence;"
                                                          " a1 reset_gpu SIMULATED: no GPU")]
    entries = run.journal.entries()
    assert [e["event"] for e in entries] == ["decided", "drained", "repaired", "checked", "resumed"]
    assert (entries[2]["result"], entries[2]["simulated"]) == ("ok", "SIMULATED: no GPU")
    assert scheduler.calls[-1] == ("resume", "a1", "")
