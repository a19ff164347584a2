"""Rolling-change batches from the declaration's rollout_batch per SU."""

from __future__ import annotations

from clusterforge.plan.rollout import Batch, rollout_batches

SERVERS = [(f"su{su:02d}-r{r:02d}-gpu{n:02d}", su, f"su{su:02d}-r{r:02d}") for su in (1, 2) for r in (1, 2)
           for n in (1, 2, 3)]


def test_batches_follow_the_declared_size_su_by_su():
    batches = rollout_batches(SERVERS, {1: 2, 2: 4})
    assert [(b.su, b.index, len(b.hosts)) for b in batches] == [(1, 1, 2), (1, 2, 2), (1, 3, 2), (2, 1, 4), (2, 2, 2)]
    assert sorted(h for b in batches for h in b.hosts) == sorted(name for name, _, _ in SERVERS)


def test_a_batch_takes_racks_in_turn_never_a_whole_rack_first():
    first = rollout_batches(SERVERS, {1: 2})[0]
    assert first == Batch(1, 1, ("su01-r01-gpu01", "su01-r02-gpu01"))


def test_default_is_one_server_at_a_time():
    assert all(len(b.hosts) == 1 for b in rollout_batches(SERVERS, {}))


def test_kubernetes_nodes_are_cordoned_and_drained_before_and_uncordoned_after():
    from clusterforge.cli.roll import drain_commands, uncordon_command

    cordon, drain = drain_commands("kubectl", "/k/config", "su01-r01-gpu01")
    assert cordon == ["kubectl", "--kubeconfig", "/k/config", "cordon", "su01-r01-gpu01"]
    assert drain[3:5] == ["drain", "su01-r01-gpu01"] and "--ignore-daemonsets" in drain
    assert uncordon_command("kubectl", "/k/config", "n1") == ["kubectl", "--kubeconfig", "/k/config", "uncordon", "n1"]
