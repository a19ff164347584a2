"""Generate large inventories (N SUs of 32 x 8-GPU servers) from the superpod example, for benchmarks."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "inventory" / "superpod-4su.yaml"

POOLS = {
    "data": "10.0.0.0/12", "storage": "10.16.0.0/12", "management": "10.32.0.0/12", "oob": "10.48.0.0/12",
}


def generate(sus: int, out: Path, transport: str = "infiniband") -> Path:
    text = BASE.read_text()
    text = text.replace("catalog_files: [catalog/", f"catalog_files: [{BASE.parent}/catalog/").replace(
        ", catalog/", f", {BASE.parent}/catalog/")
    text = re.sub(r"envelope: \{max_sus: 4,", f"envelope: {{max_sus: {sus},", text)
    text = text.replace("max_racks_per_su: 8, max_rails: 8, storage_servers_max: 32}",
                        "max_racks_per_su: 8, max_rails: 8, storage_servers_max: 64}")
    units = "\n".join(f"  - {{id: {i}, server_model: dgx-h100, nodes: 32, racks: 8, nodes_per_rack: 4}}"
                      for i in range(1, sus + 1))
    text = re.sub(r"(scalable_units:\n)(  - \{id: .*\n)+", lambda m: m[1] + units + "\n", text)
    for plane, pool in POOLS.items():
        text = re.sub(rf"(  {plane}: \{{supernet: )[0-9./]+", rf"\g<1>{pool}", text)
    text = re.sub(r"fabric_links: [0-9./]+", "fabric_links: 10.64.0.0/11", text)
    text = re.sub(r"loopbacks: [0-9./]+", "loopbacks: 10.96.0.0/16", text)
    # Past ~32 SUs one storage spine tier of 64-port switches runs out of ports; scale tests model the
    # storage spines as a modular chassis (illustrative figures) instead of a third storage tier.
    text = text.replace("catalog: {}", """catalog:
  switches:
    chassis-2304:
      vendor: modular
      description: modular chassis storage spine modelled as one switch (illustrative, scale tests only)
      ports: 2304
      speed_gbps: 400
      lanes_per_port: 8
      max_draw_w: 20000
      height_u: 16
      weight_kg: 300
      price: 2000000""")
    if sus > 32:
        text = text.replace("leaf_model: sn5400, spine_model: sn5400, oversubscription: 1.0}",
                            "leaf_model: sn5400, spine_model: chassis-2304, oversubscription: 4.0}")
    if transport == "roce":
        text = text.replace("transport: infiniband, nos: infiniband", "transport: roce, nos: sonic")
        text = text.replace("leaf_model: qm9700, spine_model: qm9700", "leaf_model: sn5400, spine_model: sn5400")
    out.write_text(text)
    return out
