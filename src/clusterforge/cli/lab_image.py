"""`clusterforge lab image`: the golden images the lab's hosts boot, built (cached by content) and listed."""

from __future__ import annotations

from pathlib import Path

import typer

from clusterforge.cli._common import Format, emit_json, err, format_option, load, out

__all__ = ["image"]


def image(inventory: Path = typer.Argument(..., help="inventory YAML"),
          prune: bool = typer.Option(False, "--prune", help="then remove cached images this inventory does not use"),
          format: Format = format_option()) -> None:
    """Build the golden images the lab's GPU servers and control nodes boot (what `up` builds first; cached by
    content)."""
    from clusterforge.lab import LabError
    from clusterforge.pulumi.images import build_lab_images
    from clusterforge.pulumi.providers.host_image import ImageBuildFailed

    _, plan, _ = load(inventory)
    try:
        rows, pruned = build_lab_images(plan, prune, say=lambda line: err.print(line, markup=False, highlight=False,
                                                                                 soft_wrap=True))
    except (LabError, ImageBuildFailed) as exc:
        err.print(f"lab image: {exc}", markup=False, highlight=False)
        raise typer.Exit(3) from None
    if format is Format.json:
        emit_json({"images": rows, "pruned": pruned})
        return
    for row in rows:
        out.print(f"image {row['image']} ({'cached' if row['cached'] else 'built'} in {row['seconds']} s,"
                  f" {row['mib']} MiB) for {len(row['hosts'])} hosts: {', '.join(row['hosts'])}",
                  markup=False, highlight=False)
    for name in pruned:
        out.print(f"pruned image {name}", markup=False, highlight=False)
