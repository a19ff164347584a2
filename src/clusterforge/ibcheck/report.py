"""A check's runs as lines for people and as one JSON document; both say SIMULATED."""

from __future__ import annotations

import dataclasses
from typing import Any

from clusterforge.ibcheck.runner import SimRun

__all__ = ["report_lines", "report_document", "SIMULATED"]

SIMULATED = ("SIMULATED subnet (ibsim 0.10 + OpenSM through libumad2sim): the planned switches, HCAs and cables "
             "answer subnet management packets; no hardware, no data traffic, links at most 4xHDR whatever the "
             "plan's speed, at most 2048 nodes, 256 switches, 13312 ports per plane")


def _pulled_lines(run: SimRun) -> list[str]:
    pulled = run.pulled
    if pulled is None:
        return ["  pulled link: not tried (the first look already differs, or no switch-to-switch cable)"]
    lines = [f"  pulled link {pulled.cable}: {'detected' if pulled.detected else 'NOT DETECTED'}, "
             f"{'rerouted' if pulled.rerouted else 'NOT REROUTED'} (routing engine {pulled.routing_engine}), "
             f"{pulled.unreachable} unreachable pairs"]
    if pulled.links is not None and not pulled.detected:
        lines += [f"    missing: {m}" for m in pulled.links.missing] + [
            f"    unexpected: {u}" for u in pulled.links.unexpected]
    return lines


def report_lines(runs: list[SimRun]) -> list[str]:
    lines = [SIMULATED]
    if not runs:
        return [*lines, "no InfiniBand plane in the plan: nothing to check"]
    for run in runs:
        verdict = "ok" if run.ok else "DIFFERS"
        lines.append(f"plane {run.plane}: {verdict}: {run.switches} switches, {run.hcas} HCAs")
        if run.left_out:
            lines.append(f"  NOT ALL SIMULATED: {run.left_out}")
        links = run.links
        lines.append(f"  links: planned {links.planned}, discovered {links.discovered}, missing {len(links.missing)},"
                     f" unexpected {len(links.unexpected)}, miswired {len(links.miswired)}")
        lines += [f"    {swap}" for swap in links.miswired]
        lines += [f"    missing: {m}" for m in links.missing] + [f"    unexpected: {u}" for u in links.unexpected]
        lines.append(f"  subnet manager: {run.sm_state} (priority {run.sm_priority}), routing engine "
                     f"{run.routing_engine or 'none reported'}")
        loaded = ", ".join(f"{name} {'loaded' if ok else 'NOT LOADED'}" for name, ok in run.partitions.items())
        lines.append(f"  partitions: {loaded or 'none planned'} (P_Key tables of {run.partition_ports_checked} HCA "
                     "ports, one per leaf)")
        lines.append(f"  routing: {run.unreachable} unreachable HCA pairs")
        lines += [f"    {src} -> {dst}" for src, dst in run.unreachable_sample]
        lines += _pulled_lines(run)
    return lines


def report_document(runs: list[SimRun]) -> dict[str, Any]:
    return {"simulated": True, "note": SIMULATED, "ok": all(run.ok for run in runs),
            "planes": [{**dataclasses.asdict(run), "ok": run.ok} for run in runs]}
