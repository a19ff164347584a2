"""ConnectX-8 on Ethernet is two 400GbE planes per GPU: a RoCE cluster of DGX B300 (`dgx-b300-eth`,
`nics.data.planes: 2`) plans 16 rails of 400G, a leaf per rail, and renders SONiC configs for them."""

from __future__ import annotations

import re
import shutil
from functools import cache
from pathlib import Path

from clusterforge.loading import load_and_plan
from clusterforge.plan.fabric_checks import check_fabric
from clusterforge.render.switches import render_switches

REPO = Path(__file__).resolve().parents[2]


@cache
def two_plane(tmp: str):
    text = (REPO / "inventory" / "roce-128gpu.yaml").read_text()
    text = text.replace("catalog/cables.yaml]", "catalog/cables.yaml, catalog/nics.yaml]")
    # one 14.5 kW DGX B300 per rack fits the example's 24 kW racks; 8 nodes, no team quotas
    text = text.replace("server_model: hgx-h200-8gpu, nodes: 16, racks: 8, nodes_per_rack: 2",
                        "server_model: dgx-b300-eth, nodes: 8, racks: 8, nodes_per_rack: 1")
    text = text.split("teams:")[0]
    text = re.sub(r"max_rails: \d+", "max_rails: 16", text).replace("fabric_links: 10.30.0.0/21",
                                                                       "fabric_links: 10.30.0.0/20")
    shutil.copytree(REPO / "inventory" / "catalog", Path(tmp) / "catalog", dirs_exist_ok=True)
    path = Path(tmp) / "b300-eth.yaml"
    path.write_text(text)
    return load_and_plan(path)[1]


def test_each_gpu_nic_is_two_rails_of_400g(tmp_path_factory):
    plan = two_plane(str(tmp_path_factory.mktemp("b300eth")))
    host = plan.device("su01-r01-gpu01")
    data = [i for i in host.interfaces if i.plane == "data"]
    assert [i.rail for i in data] == list(range(16)) and {i.speed_gbps for i in data} == {400}
    leaves = {link.b.device for link in plan.links
              if link.a.device == host.name and link.tier == "node-leaf" and link.plane == "data"}
    assert len(leaves) == 16
    assert plan.fabric["data"].leaves == 16  # one SU built: a leaf per rail
    assert check_fabric(plan) == []


def test_the_rails_render_sonic_configs(tmp_path_factory):
    plan = two_plane(str(tmp_path_factory.mktemp("b300eth")))
    files = render_switches(plan)
    assert "switches/su01-leaf-rail15/config_db.json" in files
