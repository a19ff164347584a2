"""The shipped catalog (every file under inventory/catalog/), loaded through an example declaration: the
catalog tests (test_hardware_catalog.py) and the GPU floor tests (test_gpu_floors.py) read the same spec."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from clusterforge.model import ClusterSpec
from clusterforge.model.loader import load_cluster

REPO = Path(__file__).resolve().parents[2]
CATALOG_FILES = ["catalog/servers.yaml", "catalog/switches.yaml", "catalog/pdus.yaml", "catalog/cables.yaml",
                 "catalog/nics.yaml", "catalog/cooling.yaml", "catalog/racks.yaml"]


def load_shipped_catalog() -> ClusterSpec:
    """superpod-4su.yaml with every catalog file declared, loaded from a copy of inventory/catalog/."""
    text = (REPO / "inventory" / "superpod-4su.yaml").read_text().replace(
        "catalog_files: [catalog/servers.yaml, catalog/switches.yaml, catalog/pdus.yaml, catalog/cables.yaml]",
        f"catalog_files: [{', '.join(CATALOG_FILES)}]")
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(REPO / "inventory" / "catalog", Path(tmp) / "catalog")
        path = Path(tmp) / "catalog-test.yaml"
        path.write_text(text)
        spec, _ = load_cluster(path)
    return spec
