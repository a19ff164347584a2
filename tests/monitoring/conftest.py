"""Make this directory's helper modules (alert_cases, monitoring_tools) importable by its tests; the lab's
monitoring files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from monitoring_tools import ROOT  # noqa: E402 (importable once the directory is on the path)


@pytest.fixture(scope="session")
def lab_plan():
    from clusterforge.loading import load_and_plan

    _, plan, _ = load_and_plan(ROOT / "inventory" / "lab.yaml")
    return plan


@pytest.fixture(scope="session")
def lab_monitoring(lab_plan) -> dict[str, str]:
    from clusterforge.render.monitoring import monitoring_files

    return monitoring_files(lab_plan)


@pytest.fixture
def written(lab_monitoring: dict[str, str], tmp_path: Path) -> Path:
    """The lab's monitoring files in a scratch directory, prometheus.yml's installed paths pointed there and the
    Kubernetes credential files it names present (empty)."""
    from clusterforge.render.monitoring import PROMETHEUS_CONFIG_DIR
    from clusterforge.render.monitoring.prometheus_yml import KUBERNETES_CA_FILE, KUBERNETES_TOKEN_FILE

    for path, text in lab_monitoring.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.replace(PROMETHEUS_CONFIG_DIR, str(tmp_path)))
    for path in (KUBERNETES_TOKEN_FILE, KUBERNETES_CA_FILE):
        (tmp_path / Path(path).name).write_text("")
    return tmp_path
