"""`clusterforge export containerlab | batfish | device-types` and `clusterforge collection build`:
the Plan in other tools' formats, and the roles as an Ansible collection. Every output is written
atomically (clusterforge.render.write_tree)."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from clusterforge.cli._common import Format, collector_paused, emit_json, err, format_option, load, say, usage_error
from clusterforge.cli._common import out as stdout
from clusterforge.cli._output import out_arg, write_out

__all__ = ["register"]

export_app = typer.Typer(help="Export the Plan: containerlab topology, Batfish snapshot, device-type library.",
                         no_args_is_help=True, rich_markup_mode=None)
collection_app = typer.Typer(help="The roles as the clusterforge.gpu Ansible collection.", no_args_is_help=True,
                             rich_markup_mode=None)
_IMAGE = re.compile(r"^([a-z0-9_-]+)=([A-Za-z0-9][A-Za-z0-9._/:@-]*)$")


def _written(kind: str, out_dir: Path, files: dict[str, str], left_out: tuple[str, ...], format: Format,
             adapted: tuple[str, ...] = ()) -> None:
    write_out(out_dir, files)
    if format is Format.json:
        out = {"export": kind, "out": str(out_dir), "files": sorted(files), "left_out": list(left_out)}
        if adapted:
            out["adapted"] = list(adapted)
        emit_json(out)
        return
    for line in left_out:
        say(err, f"left out: {line}")
    for line in adapted:
        say(err, f"adapted for the analyser: {line}")
    say(stdout, f"wrote {len(files)} files under {out_dir}")


@export_app.command("containerlab")
@collector_paused
def containerlab(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    out_dir: Path = typer.Option(..., "--out", "-o", parser=out_arg, help="output directory: clab.yml and configs/"),
    image: list[str] = typer.Option([], "--image", help="KIND=IMAGE per containerlab kind (repeatable), e.g. "
                                    "sonic-vs=docker-sonic-vs:202405 [default: sonic-vs=docker-sonic-vs:latest,"
                                    " arista_ceos=ceos:latest, nvidia_cumulusvx=vrnetlab/nvidia_cumulusvx:latest,"
                                    " linux=debian:bookworm-slim]"),
    format: Format = format_option(),
) -> None:
    """clab.yml with the planned nodes, links and startup configs (deploy: containerlab deploy -t clab.yml)."""
    from clusterforge.export import ExportError, export_containerlab
    from clusterforge.export.containerlab import DEFAULT_IMAGES, SWITCH_NOS
    from clusterforge.render.switches import render_switches

    images = {}
    for entry in image:
        match = _IMAGE.match(entry)
        if not match or match.group(1) not in DEFAULT_IMAGES:
            usage_error(f"--image {entry!r}: expected KIND=IMAGE with KIND one of {', '.join(DEFAULT_IMAGES)}")
        images[match.group(1)] = match.group(2)
    spec, plan, _ = load(inventory)
    try:
        exported = export_containerlab(plan, render_switches(plan, SWITCH_NOS), images)
    except ExportError as exc:
        say(err, f"{inventory}: containerlab: {exc}")
        raise typer.Exit(1) from None
    _written("containerlab", out_dir, exported.files, exported.left_out, format)


@export_app.command("batfish")
@collector_paused
def batfish(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    out_dir: Path = typer.Option(..., "--out", "-o", parser=out_arg,
                                 help="snapshot directory (configs/, sonic_configs/, hosts/, batfish/)"),
    format: Format = format_option(),
) -> None:
    """A Batfish snapshot of the switch configs, hosts and physical links (bf.init_snapshot(DIR))."""
    from clusterforge.export import export_batfish
    from clusterforge.export.batfish import SWITCH_NOS
    from clusterforge.render.switches import render_switches

    spec, plan, _ = load(inventory)
    snapshot = export_batfish(plan, render_switches(plan, SWITCH_NOS))
    _written("batfish", out_dir, snapshot.files, snapshot.left_out, format, snapshot.adapted)


@export_app.command("device-types")
@collector_paused
def device_types_cmd(
    inventory: Path = typer.Argument(..., help="inventory YAML"),
    out_dir: Path = typer.Option(..., "--out", "-o", parser=out_arg,
                                 help="output directory: device-types/<vendor>/<slug>.yaml"),
    format: Format = format_option(),
) -> None:
    """The Plan's hardware as NetBox/Nautobot device-type library YAML (importable by both)."""
    from clusterforge.export.devicetypes import device_types, export_device_types

    spec, plan, _ = load(inventory)
    _written("device-types", out_dir, export_device_types(device_types(spec, plan)), (), format)


@collection_app.command("build")
def build(
    out_dir: Path = typer.Option(Path("dist"), "--out", "-o", parser=out_arg,
                                 help="where the tarball goes [default: dist]"),
    format: Format = format_option(),
) -> None:
    """Assemble roles/ and playbooks/ as clusterforge.gpu and build it with ansible-galaxy."""
    from clusterforge.outdir import OutputRefused
    from clusterforge.provision.collection import CollectionError
    from clusterforge.provision.collection import build as build_collection

    try:
        tarball = build_collection(out_dir)
    except (CollectionError, OutputRefused) as exc:
        say(err, f"collection: {exc}")
        raise typer.Exit(3) from None
    if format is Format.json:
        emit_json({"tarball": str(tarball)})
        return
    say(stdout, f"built {tarball}")


def register(app: typer.Typer) -> None:
    app.add_typer(export_app, name="export")
    app.add_typer(collection_app, name="collection")
