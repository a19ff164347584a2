"""`clusterforge engine status | install`: the Pulumi engine that preview/up/destroy drive.

An installed wheel has no tools/bin: `engine install` builds the pinned engine (and clusterforge's own
Python language host) into ``<state dir>/engine/bin`` with the recipe the wheel carries, or links a
pulumi of the pinned version found on PATH. Exit codes: 0 ok, 3 no engine / the build failed.
"""

from __future__ import annotations

import typer

from clusterforge.cli._common import Format, emit_json, err, format_option, out, say

__all__ = ["register"]

engine_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                         help="The Pulumi engine preview/up/destroy drive: where it is, and building it.")


@engine_app.command("status", epilog="Example: clusterforge engine status --format json")
def status(format: Format = format_option()) -> None:
    """Show which Pulumi engine would run (checkout, state dir or PATH) and its pinned version; exit 3 if none."""
    from clusterforge.pulumi import engine

    try:
        found = engine.find()
    except engine.EngineMissing as exc:
        if format is Format.json:
            emit_json({"ok": False, "version": engine.ENGINE_VERSION, "error": str(exc),
                       "looked_at": [str(b) for _, b in engine.candidates()]})
        else:
            say(err, f"error: {exc}")
        raise typer.Exit(3) from None
    if format is Format.json:
        emit_json({"ok": True, "version": engine.ENGINE_VERSION, "origin": found.origin, "binary": str(found.binary)})
    else:
        say(out, f"pulumi v{engine.ENGINE_VERSION} ({found.origin}): {found.binary}")


@engine_app.command("install", epilog="Example: clusterforge engine install   # then: clusterforge preview INVENTORY")
def install(format: Format = format_option()) -> None:
    """Build the pinned Pulumi engine into <state dir>/engine/bin (needs Go), or link a matching PATH pulumi."""
    from clusterforge.pulumi import engine

    try:
        found = engine.install(lambda line: say(err, line))
    except engine.EngineMissing as exc:
        if format is Format.json:
            emit_json({"ok": False, "version": engine.ENGINE_VERSION, "error": str(exc)})
        say(err, f"error: {exc}")
        raise typer.Exit(3) from None
    if format is Format.json:
        emit_json({"ok": True, "version": engine.ENGINE_VERSION, "origin": found.origin, "binary": str(found.binary)})
    else:
        say(out, f"pulumi v{engine.ENGINE_VERSION} ready: {found.binary}")


def register(app: typer.Typer) -> None:
    app.add_typer(engine_app, name="engine")
