"""Generate large inventories (N SUs of 32 x 8-GPU servers) from the superpod example, for benchmarks."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "inventory" / "superpod-4su.yaml"

POOLS = {
    "data": "10.0.0.0/12", "storage": "10.16.0.0/12", "management": "10.32.0.0/12", "oob": "10.48.0.0/12",
}


def copy_catalog(directory: Path) -> None:
    """The example catalog beside a generated inventory (catalog_files must lie in the inventory's directory)."""
    target = directory / "catalog"
    if not target.is_dir():
        shutil.copytree(BASE.parent / "catalog", target)


def generate(sus: int, out: Path, transport: str = "infiniband", max_sus: int | None = None) -> Path:
    text = BASE.read_text()
    copy_catalog(out.parent)
    text = re.sub(r"envelope: \{max_sus: 4,", f"envelope: {{max_sus: {max_sus or sus},", text)
    text = text.replace("max_racks_per_su: 8, max_rails: 8, storage_servers_max: 32}",
                        "max_racks_per_su: 8, max_rails: 8, storage_servers_max: 64}")
    units = "\n".join(f"  - {{id: {i}, server_model: dgx-h100, nodes: 32, racks: 8, nodes_per_rack: 4}}"
                      for i in range(1, sus + 1))
    text = re.sub(r"(scalable_units:\n)(  - \{id: .*\n)+", lambda m: m[1] + units + "\n", text)
    for plane, pool in POOLS.items():
        text = re.sub(rf"(  {plane}: \{{supernet: )[0-9./]+", rf"\g<1>{pool}", text)
    text = re.sub(r"fabric_links: [0-9./]+", "fabric_links: 10.64.0.0/11", text)
    text = re.sub(r"loopbacks: [0-9./]+", "loopbacks: 10.96.0.0/16", text)
    text = re.sub(r"\nteams:\n(  - .*\n)+", "\n", text)  # quotas are the 4-SU example's
    if transport == "roce":
        text = text.replace("transport: infiniband, nos: infiniband", "transport: roce, nos: sonic")
        text = text.replace("leaf_model: qm9700, spine_model: qm9700", "leaf_model: sn5400, spine_model: sn5400")
    out.write_text(text)
    return out
