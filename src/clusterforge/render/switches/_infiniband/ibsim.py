"""An InfiniBand subnet (plan/ib_subnet.py) as ibsim's net file: formatting only.

The format is ibnetdiscover's output, which ibsim reads: before each node its GUID
(`switchguid=` / `caguid=`), then `Switch|Ca <ports> "<node id>" # "<description>"` and one line per
cabled port, `[<port>] "<remote node id>"[<remote port>] # lid 0 4x<rate>`. The rate is what ibsim
can announce: HDR at most in ibsim 0.10 (no NDR or XDR), whatever the plan's cable speed; the check
never compares rates.
"""

from __future__ import annotations

from clusterforge.plan.ib_subnet import IbCable, IbSubnet

__all__ = ["ibsim_net", "SIM_RATE"]

SIM_RATE = "4xHDR"  # the fastest link ibsim 0.10 models (200 Gb/s); NDR's bit came with ibsim 0.12


def _ports(subnet: IbSubnet) -> dict[str, dict[int, tuple[str, int]]]:
    ends: dict[str, dict[int, tuple[str, int]]] = {n.node_id: {} for n in subnet.nodes}
    for cable in subnet.cables:
        ends[cable.a[0]][cable.a[1]] = cable.b
        ends[cable.b[0]][cable.b[1]] = cable.a
    return ends


def ibsim_net(subnet: IbSubnet, cables: tuple[IbCable, ...] | None = None) -> str:
    """The net file of `subnet` (with `cables` in place of the planned ones: a miswired copy)."""
    ports = _ports(subnet if cables is None else IbSubnet(subnet.plane, subnet.nodes, cables, 0, 0, None))
    lines = [f"# SIMULATED InfiniBand subnet of plane {subnet.plane}: {len(subnet.nodes)} nodes, "
             f"{sum(len(p) for p in ports.values()) // 2} cables, rendered by clusterforge from the Plan"]
    for node in subnet.nodes:
        lines.append("")
        if node.kind == "switch":
            lines += [f"switchguid=0x{node.guid:016x}", f'Switch\t{node.ports} "{node.node_id}"\t# "{node.node_id}"']
        else:
            lines += [f"caguid=0x{node.guid:016x}", f'Ca\t{node.ports} "{node.node_id}"\t# "{node.node_id}"']
        for port, (peer, peer_port) in sorted(ports[node.node_id].items()):
            lines.append(f'[{port}]\t"{peer}"[{peer_port}]\t# lid 0 {SIM_RATE}')
    return "\n".join(lines) + "\n"
