"""The declaration's pydantic classes are built when first used, not at import (model/base.Declared's
defer_build): an instance of a Declared class as a field default would build it, and every class it nests,
as the module loads; such defaults are written as default_factory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_no_declared_class_is_built_at_import() -> None:
    probe = (
        "import clusterforge.loading\n"
        "from clusterforge.model.base import Declared\n"
        "def subclasses(cls):\n"
        "    for sub in cls.__subclasses__():\n"
        "        yield sub\n"
        "        yield from subclasses(sub)\n"
        "classes = list(subclasses(Declared))\n"
        "print(len(classes))\n"
        "print(' '.join(sorted(c.__name__ for c in classes if c.__pydantic_complete__)))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    count, built = out.split("\n")[:2]
    assert int(count) > 40  # the probe saw the model's classes
    assert built == "", f"built at import: {built}"


def test_default_factories_give_the_declared_defaults() -> None:
    from clusterforge.model.catalog import AcceptanceFloors, NicGroup, PrecisionFloors, ServerNics

    nics = ServerNics(data=NicGroup(count=8, speed_gbps=400))
    assert (nics.storage.count, nics.storage.speed_gbps) == (2, 200)
    assert (nics.management.count, nics.management.speed_gbps) == (1, 25)
    assert (nics.oob.count, nics.oob.speed_gbps) == (1, 1)
    assert AcceptanceFloors().burst_tflops == PrecisionFloors()


def test_validate_builds_one_validator() -> None:
    """Loading and planning lab.yaml builds ClusterSpec's validator and no other class's: a nested default
    (model_construct) or a dump of one part (model_dump) would build that class's own as well."""
    probe = (
        "from clusterforge.loading import load_and_plan\n"
        "from clusterforge.model.base import Declared\n"
        "def subclasses(cls):\n"
        "    for sub in cls.__subclasses__():\n"
        "        yield sub\n"
        "        yield from subclasses(sub)\n"
        "spec, plan, _ = load_and_plan('inventory/lab.yaml')\n"
        "print(plan.summary.servers)\n"
        "print(' '.join(sorted(c.__name__ for c in subclasses(Declared) if c.__pydantic_complete__)))\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root).stdout
    servers, built = out.split("\n")[:2]
    assert int(servers) > 0
    assert built == "ClusterSpec"
