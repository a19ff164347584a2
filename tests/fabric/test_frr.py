"""Every frr.conf rendered for the lab and roce-128gpu examples is accepted by the real FRR parser."""

from __future__ import annotations

import pytest
from fabric_examples import example

from clusterforge.render.switches.validate import frr_available, frr_check

needs_frr = pytest.mark.skipif(not frr_available(), reason="FRR is not installed (no vtysh); apt-get install frr")

FRR_FILES = [(name, path) for name in ("lab", "roce-128gpu")
             for path in sorted(example(name)[2]) if path.endswith("/frr.conf")]


def test_there_are_frr_configs_to_check():
    assert len(FRR_FILES) >= 8


@needs_frr
@pytest.mark.parametrize(("inventory", "path"), FRR_FILES, ids=[f"{i}/{p}" for i, p in FRR_FILES])
def test_frr_accepts_rendered_config(inventory, path):
    ok, output = frr_check(example(inventory)[2][path])
    assert ok, output


@needs_frr
def test_frr_check_rejects_an_unknown_command():
    ok, output = frr_check("router bgp 65000\n neighbour 10.0.0.1 remote-as 65001\n")
    assert not ok
    assert "neighbour" in output


@needs_frr
def test_frr_check_rejects_a_neighbor_option_before_remote_as():
    # parses as a command, fails when applied: only a real bgpd notices (needs root)
    import os

    if os.geteuid() != 0:
        pytest.skip("bgpd --dryrun needs root to drop privileges to the frr user")
    ok, output = frr_check("router bgp 65000\n neighbor 10.0.0.1 bfd\n")
    assert not ok, output
