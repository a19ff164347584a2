"""The host checks' and the scheduler layers' results as tables, and the host check names for completion."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from clusterforge.cli._common import print_layer_checks

if TYPE_CHECKING:
    from rich.table import Table

    from clusterforge.schedulers import LayerChecks

__all__ = ["check_names", "print_layer", "results_table", "throughput_table"]


def results_table(result, kinds: dict[str, str] | None = None) -> Table:
    """One row per host (GPU servers and storage servers, with their kind), then the totals: passed, failed,
    simulated (the lab stood in for a part the check needs) and skipped, each apart."""
    from rich.table import Table

    kinds = kinds or {}
    table = Table(title=f"host checks ({result.target})", title_justify="left")
    table.add_column("host")
    table.add_column("kind")
    table.add_column("passed", justify="right", style="green")
    table.add_column("failed", justify="right", style="red")
    table.add_column("simulated", justify="right", style="cyan")
    table.add_column("skipped", justify="right", style="yellow")
    for host, hr in result.per_host.items():
        table.add_row(host, kinds.get(host, ""), str(hr.passed), str(hr.failed), str(hr.simulated), str(hr.skipped))
    table.add_row("total", "", str(result.passed), str(result.failed), str(result.simulated), str(result.skipped),
                  style="bold")
    return table


def throughput_table(result) -> Table | None:
    """The tiers' fio smoke figures (records with a throughput_mbps figure) against the declared ones."""
    rows = [r for r in result.records if "throughput_mbps" in (r.get("figures") or {})]
    if not rows:
        return None
    from rich.table import Table

    table = Table(title="tier throughput (fio sequential write)", title_justify="left")
    for column, justify in (("host", "left"), ("tier", "left"), ("MB/s", "right"), ("declared", "right"),
                            ("outcome", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for r in rows:
        fig = r["figures"]
        declared = fig.get("expected_mbps")
        table.add_row(str(r.get("host")), str(fig.get("tier", "")), f"{fig['throughput_mbps']:.0f}",
                      "-" if declared is None else f">= {float(declared):.0f}", r["outcome"])
    return table


def check_names(incomplete: str = "") -> list[str]:
    """The host check modules (verify/hosts/test_<name>.py) starting with ``incomplete``: --check's completion."""
    from clusterforge.verify import hosts

    names = sorted(p.stem.removeprefix("test_") for p in Path(hosts.__file__).parent.glob("test_*.py"))
    return [n for n in names if n.startswith(incomplete)]


def print_layer(name: str, layer: LayerChecks) -> None:
    """A scheduler's checks as a table, or the line saying why none ran."""
    print_layer_checks(name, layer.title, None if layer.checks is None else list(layer.checks), layer.why)
