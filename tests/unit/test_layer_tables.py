"""The scheduler tables `clusterforge verify` prints (cli/verify.print_layer, a driver's LayerChecks).

`verify` on the lab stack ended in a NameError once the Kubernetes checks had run: the table used rich's Table,
imported only for type checking. The lab tests call the checks directly, so nothing printed the table."""

from __future__ import annotations

import pytest

from clusterforge.cli import _common
from clusterforge.cli._tables import print_layer
from clusterforge.schedulers import LayerChecks
from clusterforge.verify.layer_check import LayerCheck

CHECKS = (LayerCheck("node gpu-01", True, "Ready, nvidia.com/gpu 2"), LayerCheck("quota team-a", False, "4 != 6"))


@pytest.fixture
def printed(monkeypatch: pytest.MonkeyPatch) -> object:
    from rich.console import Console

    console = Console(record=True, width=160, force_terminal=False)
    monkeypatch.setattr(_common.out, "print", console.print)
    monkeypatch.setattr(_common.err, "print", console.print)
    return console


@pytest.mark.parametrize("name", ["kubernetes", "slurm"])
def test_a_layer_table_prints_every_check_with_its_outcome(name, printed) -> None:
    print_layer(name, LayerChecks(CHECKS, "", f"{name} layer"))
    text = printed.export_text()
    assert f"{name} layer" in text
    assert "node gpu-01" in text and "Ready, nvidia.com/gpu 2" in text
    assert "quota team-a" in text and "FAIL" in text and "4 != 6" in text


def test_a_layer_that_could_not_run_says_why(printed) -> None:
    print_layer("slurm", LayerChecks(None, "slurmctld does not answer", "slurm layer"))
    text = printed.export_text()
    assert "slurm: not checked: slurmctld does not answer" in text and "FAIL" not in text
