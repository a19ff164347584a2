"""CumulusConfig -> startup.yaml's text: the header, then one formatting function per `set` section.

Plain string formatting, not templates (see _eos/running_config.py): the interface section is most
of a leaf's file. The text is YAML written line by line in NVUE's own layout (keys in the object
model's order, `{}` for a present leaf with no value); descriptions are JSON strings, which YAML reads
as the same text. A section that is None or empty does not apply and writes nothing. `nvue` gives
the spelling of the plane's NVUE release (nvue_syntax.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from clusterforge.render.switches._cumulus.schema import (
    CumulusConfig,
    NvueBridge,
    NvueInterface,
    NvueQos,
    NvueRouter,
    NvueSystem,
    NvueWords,
)
from clusterforge.render.switches._frr.router_bgp import RouterBgp
from clusterforge.render.switches.header import HEADER_TEXT

__all__ = ["startup_yaml"]


def startup_yaml(config: CumulusConfig) -> str:
    out = [
        f"# {HEADER_TEXT}\n# {config.nvue.comment}\n- header:\n    nvue-api-version: nvue_v1\n    rev-id: 1.0\n- set:\n"
    ]
    for name, write in _SECTIONS:
        value = getattr(config, name)
        if value:
            write(out, config, value)
    return "".join(out)


def _system(out: list[str], _config: CumulusConfig, system: NvueSystem) -> None:
    out.append(f"    system:\n      hostname: {system.hostname}\n")


def _bridge_vlans(bridge: NvueBridge, indent: str) -> str:
    return "".join(f"{indent}'{vlan}': {{}}\n" for vlan in bridge.vlans)


def _interface(out: list[str], config: CumulusConfig, interfaces: tuple[NvueInterface, ...]) -> None:
    n: NvueWords = config.nvue
    bridge = config.bridge
    append = out.append
    append("    interface:\n")
    trunk = ""  # the bridge lines every trunk port repeats
    for i in interfaces:
        append(f"      {i.name}:\n")
        if i.access_vlan is not None or i.trunk:
            if bridge is None:
                raise ValueError(f"{i.name} is bridged on a switch without a bridge section")
            append(f"        bridge:\n          domain:\n            {bridge.domain}:\n")
            if i.access_vlan is not None:
                append(f"              access: {i.access_vlan}\n")
            else:
                trunk = trunk or "              untagged: none\n              vlan:\n" + _bridge_vlans(bridge, " " * 16)
                append(trunk)
        if i.description:
            append(f"        description: {json.dumps(i.description)}\n")
        if i.addresses:
            append(f"        {n.ip}:\n          address:\n")
            append("".join(f"            {address}: {{}}\n" for address in i.addresses))
            if i.gateway:
                append(f"          gateway:\n            {i.gateway}: {{}}\n")
            if i.vrf and not n.vrf_at_interface:
                append(f"          vrf: {i.vrf}\n")
            if i.vrr:
                append("          vrr:\n            address:\n")
                append("".join(f"              {vip}: {{}}\n" for vip in i.vrr))
                append(f"            {n.switch}: {n.on}\n            {n.vrr_state}:\n              up: {{}}\n")
            if i.vrrp:
                append(f"          vrrp:\n            {n.switch}: {n.on}\n            virtual-router:\n")
                for group in i.vrrp:
                    append(f"              '{group.id}':\n                address:\n")
                    append("".join(f"                  {vip}: {{}}\n" for vip in group.addresses))
                    append(f"                priority: {group.priority}\n")
        if i.mtu or i.speed or i.type == "swp":
            append("        link:\n")
            if i.mtu:
                append(f"          mtu: {i.mtu}\n")
            if i.speed:
                append(f"          speed: {i.speed}\n")
            append("          state:\n            up: {}\n")
        if i.pfc_watchdog:
            append("        qos:\n          pfc-watchdog: {}\n")
        append(f"        type: {i.type}\n")
        if i.vlan is not None:
            append(f"        vlan: {i.vlan}\n")
        if i.vrf and n.vrf_at_interface:
            append(f"        vrf: {i.vrf}\n")


def _bridge(out: list[str], _config: CumulusConfig, bridge: NvueBridge) -> None:
    out.append(f"    bridge:\n      domain:\n        {bridge.domain}:\n")
    if bridge.stp_priority is not None:
        out.append(f"          stp:\n            priority: {bridge.stp_priority}\n")
    out.append("          vlan:\n" + _bridge_vlans(bridge, " " * 12))


def _qos(out: list[str], config: CumulusConfig, q: NvueQos) -> None:
    n = config.nvue
    out.append(
        f"    qos:\n      roce:\n        {n.switch}: {n.on}\n        mode: {q.roce_mode}\n"
        f"      mapping:\n        default-global:\n          trust: {q.trust}\n          dscp:\n"
    )
    out.extend(
        f"            '{dscp}':\n              switch-priority: {priority}\n"
        for dscp, priority in q.dscp_to_priority.items()
    )
    out.append("      egress-queue-mapping:\n        default-global:\n          switch-priority:\n")
    out.extend(
        f"            '{priority}':\n              traffic-class: {tc}\n"
        for priority, tc in q.priority_to_traffic_class.items()
    )
    out.append(
        f"      pfc:\n        default-global:\n          cable-length: {q.pfc_cable_length_m}\n"
        "          rx: enable\n          switch-priority:\n"
    )
    out.extend(f"            '{priority}': {{}}\n" for priority in q.pfc_priorities)
    out.append(
        f"          tx: enable\n      pfc-watchdog:\n        polling-interval: {q.pfc_watchdog.polling_interval_ms}\n"
        f"        robustness: {q.pfc_watchdog.robustness}\n"
        "      congestion-control:\n        default-global:\n          traffic-class:\n"
    )
    for ecn in q.ecn:
        out.append(f"            '{ecn.traffic_class}':\n              ecn: {'enable' if ecn.enabled else 'disable'}\n")
        if ecn.enabled:
            out.append(f"              max-threshold: {ecn.max_bytes}\n              min-threshold: {ecn.min_bytes}\n"
                       f"              probability: {ecn.probability_pct}\n")
    out.append("      egress-scheduler:\n        default-global:\n          traffic-class:\n")
    for tc in q.ets:
        out.append(f"            '{tc.traffic_class}':\n")
        if tc.bw_percent is not None:
            out.append(f"              bw-percent: {tc.bw_percent}\n")
        out.append(f"              mode: {tc.mode}\n")


def _router(out: list[str], config: CumulusConfig, router: NvueRouter) -> None:
    n = config.nvue
    out.append(
        f"    router:\n      bgp:\n        autonomous-system: {router.asn}\n        {n.switch}: {n.on}\n"
        f"        router-id: {router.router_id}\n"
    )


def _vrf(out: list[str], config: CumulusConfig, vrfs: Mapping[str, RouterBgp]) -> None:
    n = config.nvue
    bgp = vrfs["default"]
    out.append(
        "    vrf:\n      default:\n        router:\n          bgp:\n            address-family:\n"
        f"              ipv4-unicast:\n                {n.switch}: {n.on}\n                multipaths:\n"
        f"                  ebgp: {bgp.maximum_paths}\n                network:\n"
    )
    out.extend(f"                  {network}: {{}}\n" for network in bgp.networks)
    out.append(f"            {n.switch}: {n.on}\n            neighbor:\n")
    out.extend(
        f"              {neighbor.ip}:\n                description: {json.dumps(neighbor.description)}\n"
        f"                remote-as: {neighbor.remote_as}\n                type: numbered\n"
        for neighbor in bgp.neighbors
    )
    out.append(f"            path-selection:\n              multipath:\n                aspath-ignore: {n.on}\n")


# CumulusConfig's `set` fields in startup.yaml's order (its declaration order), each with its formatter
_SECTIONS: tuple[tuple[str, Callable[..., None]], ...] = (
    ("system", _system),
    ("interface", _interface),
    ("bridge", _bridge),
    ("qos", _qos),
    ("router", _router),
    ("vrf", _vrf),
)
