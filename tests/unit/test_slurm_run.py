"""The Slurm layer's pure parts: scontrol output parsing, the MUNGE key resource's rules, what the plan
expects Slurm to report. The daemons themselves are tested on the lab (tests/lab_cluster/test_slurm.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge.pulumi.providers.munge_key import KEY_BYTES, MungeKeyProvider, make_key
from clusterforge.verify.slurm_checks import _gpus, parse_fields

ROOT = Path(__file__).resolve().parents[2]


def test_scontrol_oneliner_fields():
    line = ("NodeName=su01-r01-gpu01 Arch=x86_64 CoresPerSocket=8 Gres=gpu:2 NodeAddr=198.18.8.16"
            " State=IDLE+DRAIN ThreadsPerCore=1 Reason=clusterforge-roll [root@2026-12-02T01:00:00]")
    fields = parse_fields(line)
    assert fields["NodeName"] == "su01-r01-gpu01" and fields["State"] == "IDLE+DRAIN"
    assert fields["Gres"] == "gpu:2" and fields["Reason"] == "clusterforge-roll"


@pytest.mark.parametrize(("gres", "gpus"), [("gpu:2", "2"), ("gpu:h200:8(S:0-1)", "8"), ("(null)", "0"),
                                            ("", "0"), ("mps:100,gpu:4", "4")])
def test_gpu_count_of_a_gres_string(gres, gpus):
    assert _gpus(gres) == gpus


def test_a_munge_key_is_new_each_time_and_long_enough():
    first, second = make_key(), make_key()
    assert first != second
    assert len(first) == 2 * KEY_BYTES and int(first, 16) >= 0


def test_the_munge_key_is_replaced_only_for_another_cluster():
    provider = MungeKeyProvider()
    assert not provider.diff("id", {"cluster": "lab", "key": "k"}, {"cluster": "lab", "key": None}).changes
    moved = provider.diff("id", {"cluster": "lab", "key": "k"}, {"cluster": "other", "key": None})
    assert moved.changes and moved.replaces == ["cluster"]


def test_lab_expectations_come_from_the_plan():
    from clusterforge.loading import load_and_plan
    from clusterforge.schedulers.slurm.expected import slurm_expected

    plan = load_and_plan(ROOT / "inventory" / "lab.yaml")[1]
    expected = slurm_expected(plan)
    servers = [d for d in plan.devices if d.kind == "server"]
    assert [n["name"] for n in expected["nodes"]] == [d.name for d in servers]
    assert {n["gpus"] for n in expected["nodes"]} == {2}
    assert expected["topology"]["plugin"] == "topology/tree"
    assert [s["name"] for s in expected["topology"]["switches"]] == [s.name for s in plan.scheduler.tree]
    assert sorted(a["name"] for a in expected["accounts"]) == ["inference", "research"]


def test_resume_waits_for_the_node_to_settle():
    """Seen on the lab: IDLE+NOT_RESPONDING for a moment after a job; resume reports the settled state."""
    from clusterforge.ops.slurm_drain import resume_node

    states = iter(["IDLE+NOT_RESPONDING", "IDLE+NOT_RESPONDING", "IDLE"])
    commands = []

    def run(command: str) -> tuple[int, str, str]:
        commands.append(command)
        if command.startswith("scontrol update"):
            return 0, "", ""
        return 0, f"NodeName=n1 State={next(states)} Gres=gpu:2", ""

    assert resume_node(run, "n1", settle_s=10) == "IDLE"
    assert commands[0] == "scontrol update NodeName=n1 State=RESUME" and len(commands) == 4
