"""fanout.py: items done by forked workers come back in item order, identical to a serial run; a
worker that dies has its share done by the caller; small inputs stay in one process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clusterforge.fanout import MIN_PER_WORKER, fan_out
from clusterforge.loading import load_and_plan
from clusterforge.render import render_all

ROOT = Path(__file__).resolve().parents[2]


def test_workers_render_in_item_order():
    items = list(range(101))
    results = fan_out(lambda i: (i * i, os.getpid()), items, workers=3)
    assert [square for square, _ in results] == [i * i for i in items]
    pids = {pid for _, pid in results}
    assert os.getpid() in pids and len(pids) == 3  # the caller and two forked children


def test_a_dead_worker_has_its_share_rendered_by_the_caller():
    parent = os.getpid()

    def render(i: int) -> int:
        if os.getpid() != parent:
            os._exit(3)  # a worker killed mid-render
        return i + 1

    assert fan_out(render, list(range(20)), workers=2) == list(range(1, 21))


def test_a_renderer_error_is_raised_in_the_caller():
    def render(i: int) -> int:
        if i == 7:  # item 7 is in the worker's share (odd items)
            raise ValueError("no renderer for item 7")
        return i

    with pytest.raises(ValueError, match="item 7"):
        fan_out(render, list(range(10)), workers=2)


def test_small_inputs_stay_in_one_process():
    pids = set(fan_out(lambda _: os.getpid(), list(range(MIN_PER_WORKER - 1))))
    assert pids == {os.getpid()}


@pytest.mark.parametrize("name", ["superpod-4su", "roce-128gpu"])
def test_a_forked_render_is_the_serial_render(name):
    _, plan, _ = load_and_plan(ROOT / "inventory" / f"{name}.yaml")
    assert render_all(plan, workers=2) == render_all(plan, workers=1)
    assert list(render_all(plan, workers=3)) == list(render_all(plan, workers=1))  # the same order of files


def test_the_fabric_checks_halves_run_apart_and_report_in_order(monkeypatch):
    """load_and_plan runs check_fabric's two halves on two cores for a large plan; problems keep their order."""
    from clusterforge import loading
    from clusterforge.fanout import default_workers
    from clusterforge.model import DeclarationError
    from clusterforge.plan import fabric_checks

    parts = (lambda plan: [f"first half in {os.getpid()}"], lambda plan: [f"second half in {os.getpid()}"])
    monkeypatch.setattr(fabric_checks, "CHECK_PARTS", parts)
    monkeypatch.setattr(loading, "PARALLEL_CHECK_LINKS", 0)
    with pytest.raises(DeclarationError) as caught:
        load_and_plan(ROOT / "inventory" / "superpod-4su.yaml")
    text = str(caught.value)
    assert text.index("fabric: first half") < text.index("fabric: second half")
    here = [half for half in ("first", "second") if f"{half} half in {os.getpid()}" in text]
    assert len(here) == (2 if default_workers() == 1 else 1)  # on 2+ cores, one half is a forked worker's


def test_items_are_dealt_in_turn_the_caller_taking_a_smaller_share():
    from clusterforge.fanout import CALLER_WEIGHT, _deal

    shares = _deal(1000, 3)
    assert sorted(i for share in shares for i in share) == list(range(1000))
    assert all(share == sorted(share) for share in shares)
    assert abs(len(shares[0]) - CALLER_WEIGHT * len(shares[1])) <= 2 and abs(len(shares[1]) - len(shares[2])) <= 1
    assert max(b - a for a, b in zip(shares[1], shares[1][1:], strict=False)) <= 3  # interleaved, not blocks
