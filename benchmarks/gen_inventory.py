"""Generate large inventories (N SUs of 32 x 8-GPU servers) from the superpod example, for benchmarks.

The example is grown with clusterforge.model.scale.scaled (pools re-cut from 10.0.0.0/8, no team
quotas; past 64 SUs a modular chassis core for the data and storage planes, since 64-port cores
cannot reach more SUs in three tiers) and written out as a self-contained YAML inventory (the
catalog inline), so the benchmark measures loading it too.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BASE = ROOT / "inventory" / "superpod-4su.yaml"
CHASSIS_FROM = 64  # SUs beyond which the envelope needs chassis cores


def generate(sus: int, out: Path, transport: str = "infiniband", max_sus: int | None = None) -> Path:
    from clusterforge.model import ClusterSpec, load_cluster
    from clusterforge.model.scale import scaled

    envelope = max_sus or sus
    data = load_cluster(BASE)[0].model_dump(mode="json")
    if transport == "roce":
        data["networks"]["data"].update(transport="roce", nos="sonic", leaf_model="sn5400", spine_model="sn5400")
    spec = scaled(ClusterSpec.model_validate(data), envelope, chassis_cores=envelope > CHASSIS_FROM)
    text = spec.model_dump(mode="json")
    text["scalable_units"] = text["scalable_units"][:sus]
    if "slurm" not in text.get("schedulers", ()):
        text.pop("slurm", None)  # a dump writes the defaults out; declared without Slurm they are refused
    text["catalog_files"] = []
    out.write_text(yaml.safe_dump(text, sort_keys=False, width=200))
    return out
