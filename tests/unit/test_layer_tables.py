"""The Kubernetes and Slurm tables `clusterforge verify` prints (cli/verify.print_kube, cli/slurm.print_slurm).

`verify` on the lab stack ended in a NameError once the Kubernetes checks had run: print_kube used rich's Table,
imported only for type checking. The lab tests call the checks directly, so nothing printed the table."""

from __future__ import annotations

import pytest

from clusterforge.cli import _common
from clusterforge.cli.slurm import print_slurm
from clusterforge.cli.verify import print_kube
from clusterforge.verify.layer_check import LayerCheck

CHECKS = [LayerCheck("node gpu-01", True, "Ready, nvidia.com/gpu 2"), LayerCheck("quota team-a", False, "4 != 6")]


@pytest.fixture
def printed(monkeypatch: pytest.MonkeyPatch) -> object:
    from rich.console import Console

    console = Console(record=True, width=160, force_terminal=False)
    monkeypatch.setattr(_common.out, "print", console.print)
    return console


@pytest.mark.parametrize("show", [lambda c: print_kube(c, ""), lambda c: print_slurm(c, "", True)],
                         ids=["kubernetes", "slurm"])
def test_a_layer_table_prints_every_check_with_its_outcome(show, printed) -> None:
    show(CHECKS)
    text = printed.export_text()
    assert "node gpu-01" in text and "Ready, nvidia.com/gpu 2" in text
    assert "quota team-a" in text and "FAIL" in text and "4 != 6" in text
