"""PFC headroom: how many bytes a lossless priority group must hold, and whether a switch model's
lossless pool holds it for every port. Pure arithmetic on the declaration; docs/pfc-headroom.md
shows it with worked figures. The SONiC renderer (render/switches/_sonic/buffers.py) sizes its
BUFFER_PROFILE from ``headroom``; loading refuses a declaration ``lossless_budget_problems`` rejects.
"""

from __future__ import annotations

from math import ceil

from clusterforge.model import ClusterSpec
from clusterforge.vocab import Nos, Plane, Transport

__all__ = ["headroom", "lossless_budget_problems", "PROPAGATION_NS_PER_M", "RESPONSE_NS", "FRAME_OVERHEAD_B"]

PROPAGATION_NS_PER_M = 5   # signal speed in copper/fibre is about 2/3 c: 5 ns per metre
RESPONSE_NS = 1000         # allowance for both ends' PHY/MAC latency and the peer's reaction to PFC
FRAME_OVERHEAD_B = 18      # Ethernet header (14) + FCS (4) on top of the port MTU


def headroom(speed_gbps: int, cable_m: int, mtu: int) -> dict[str, int]:
    """xon/xoff/size in bytes for one lossless PG.

    xoff: bytes that still arrive after the pause is sent = the link's round trip (2 x cable) plus
    the response allowance, at line rate, plus one maximum frame in flight at each end.
    xon: resume once two maximum frames have drained. size: the PG's reserved headroom, xoff + xon.
    """
    frame = mtu + FRAME_OVERHEAD_B
    delay_ns = 2 * cable_m * PROPAGATION_NS_PER_M + RESPONSE_NS
    in_flight = ceil(speed_gbps * delay_ns / 8)  # Gb/s x ns = bits; / 8 = bytes
    xoff = in_flight + 2 * frame
    xon = 2 * frame
    return {"xon": xon, "xoff": xoff, "size": xon + xoff}


def lossless_budget_problems(spec: ClusterSpec) -> list[tuple[tuple, str]]:
    """Declaration-level check, before anything renders: on every SONiC RoCE plane, each switch
    model's ingress lossless pool must hold the headroom of all its ports at their full speed.
    Returns (field location, message) pairs."""
    out: list[tuple[tuple, str]] = []
    cable = spec.networks.qos.pfc_cable_length_m
    for plane_name in Plane.values():
        plane = spec.networks.plane(plane_name)
        if plane.nos != Nos.SONIC or plane.transport != Transport.ROCE:
            continue
        for field in ("leaf_model", "spine_model", "core_model"):
            name = getattr(plane, field)
            model = spec.catalog.switches.get(name) if name else None
            if model is None or model.sonic is None:
                continue  # unknown model / no port map: reported by the model's own checks
            if model.sonic.buffers is None:
                out.append((("networks", plane_name, field), f"switch model {name!r} has no SONiC buffer pool"
                            " sizes in the catalog (`sonic.buffers`); a RoCE plane needs them"))
                continue
            need = sum(headroom(p.speed_gbps, cable, plane.mtu)["size"] for p in model.sonic.ports())
            pool = model.sonic.buffers.ingress_lossless_pool
            if need > pool:
                problem = (("networks", "qos", "pfc_cable_length_m"),
                            f"{cable} m of cable needs {need} B of lossless headroom on a fully used {name}"
                            f" ({plane_name} plane), more than its {pool} B ingress lossless pool;"
                            " see docs/pfc-headroom.md")
                if problem not in out:  # leaves and spines of one model: said once
                    out.append(problem)
    return out
