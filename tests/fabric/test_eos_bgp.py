"""EOS BGP as the other NOS run it: FRR's datacenter timers (3/9 s), BFD and one peer group on every session,
and a per-neighbour route limit sized from what the plane originates, read back from the rendered configs."""

from __future__ import annotations

import re

import pytest
from golden_cases import rendered

from clusterforge.render.switches._eos.routing import EOS_DEFAULT_MAX_ROUTES, maximum_routes

CASES = ("lab-eos", "roce-128gpu-eos")


def _bgp_blocks(case: str) -> dict[str, str]:
    out = {}
    for path, text in rendered(case).items():
        if path.endswith("/running-config"):
            block = re.search(r"(?ms)^router bgp \d+\n(.*?)^!", text)
            if block:
                out[path.split("/")[-2]] = block.group(1)
    return out


@pytest.mark.parametrize("case", CASES)
def test_every_eos_session_has_3_9_timers_bfd_and_the_peer_group(case: str) -> None:
    blocks = _bgp_blocks(case)
    assert blocks
    for switch, block in blocks.items():
        neighbors = set(re.findall(r"(?m)^   neighbor (\d+\.\d+\.\d+\.\d+) remote-as", block))
        if not neighbors:
            continue
        assert "   timers bgp 3 9\n" in block, switch
        group = re.search(r"(?m)^   neighbor (\S+) peer group$", block).group(1)
        assert f"   neighbor {group} bfd\n" in block, switch
        assert set(re.findall(rf"(?m)^   neighbor (\S+) peer group {group}$", block)) == neighbors, switch


@pytest.mark.parametrize("case", CASES)
def test_maximum_routes_holds_twice_what_the_plane_originates(case: str) -> None:
    """Counted from the rendered configs alone: every `network` any EOS switch of the case originates."""
    blocks = _bgp_blocks(case)
    originated = {n for block in blocks.values() for n in re.findall(r"(?m)^   network (\S+)$", block)}
    limit = re.compile(r"(?m)^   neighbor \S+ maximum-routes (\d+)$")
    limits = {int(m) for block in blocks.values() for m in limit.findall(block)}
    assert originated and limits
    assert min(limits) >= max(EOS_DEFAULT_MAX_ROUTES, 2 * len(originated) // max(1, len(limits)))


def test_maximum_routes_grows_past_eos_default_with_the_plane() -> None:
    assert maximum_routes(100) == EOS_DEFAULT_MAX_ROUTES
    assert maximum_routes(6_001) == 13_000  # 12,002 routes: EOS's default would shut the session down
    assert maximum_routes(40_000) >= 2 * 40_000
