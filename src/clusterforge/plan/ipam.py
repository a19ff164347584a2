"""IP address plan: every address is a pure function of stable ids and the declared pools.

Layout (per plane) is fixed by the design envelope, never by what is built today:

* management / storage / oob: one block per SU (index = SU id - 1), then one site block.
  Inside a block: .1 gateway, nodes at offset 16 + node - 1, then SU switches and PDUs (oob).
  The storage site block is cut into one server block per top-switch pair that takes storage
  servers (StorageDims.server_pairs): a server's subnet is answered only by the pair it is cabled to.
  With one pair (two spines, or three tiers) the server block is the whole site block.
* data (RoCE): one /31 per host NIC, block per SU, index ((node - 1) x rails + rail); leaf .0, host .1.
  data (InfiniBand): one IPoIB subnet per (SU, rail); host = subnet + node.
* fabric links: /31 per switch-to-switch link, ranges per tier; loopbacks: /32 per switch.
"""

from __future__ import annotations

import math
import socket
import struct
from dataclasses import dataclass
from typing import NamedTuple

from netaddr import IPNetwork

from clusterforge.model import ClusterSpec
from clusterforge.plan.errors import PlanError
from clusterforge.plan.fabric_dims import DataDims, StorageDims, access_cores, agg_groups
from clusterforge.plan.numbering import NODE_OFFSET
from clusterforge.vocab import LinkTier, LoopbackRole, Plane, Transport

__all__ = ["Pools", "Block", "build_pools", "ip_str", "NODE_OFFSET"]

SITE_PDU_RACKS = 20  # site racks whose PDUs get oob addresses: 5 categories x 4 racks


def ip_str(value: int) -> str:
    return socket.inet_ntoa(struct.pack("!I", value))


def _pow2(count: int) -> int:
    return 1 << max(2, math.ceil(math.log2(max(count, 1))))


def _pow2_at_least(count: int) -> int:
    return 1 << math.ceil(math.log2(max(count, 1)))


class Block(NamedTuple):
    """A per-SU (or site) block: base address, size, prefix length. A named tuple: one is made for
    every address asked for (hundreds of thousands at 512 SUs)."""

    base: int
    size: int

    @property
    def prefixlen(self) -> int:
        return 32 - int(math.log2(self.size))

    def addr(self, offset: int) -> str:
        if not 0 < offset < self.size - 1:
            raise ValueError(f"offset {offset} outside block of {self.size}")
        return f"{ip_str(self.base + offset)}/{self.prefixlen}"

    def gateway(self) -> str:
        return ip_str(self.base + 1)

    def cidr(self) -> str:
        return f"{ip_str(self.base)}/{self.prefixlen}"


@dataclass(frozen=True)
class Pools:
    """Computed layout for every pool; methods return addresses for stable ids."""

    planes: dict[str, tuple[int, int, int, int]]  # plane -> (pool base, su block size, site offset, site size)
    data_base: int
    data_block: int
    data_rail_block: int
    data_transport: str
    rails: int
    max_nodes: int
    links_base: int
    links_offsets: dict[str, int]
    loop_base: int
    loop_offsets: dict[str, int]
    su_switch_offset: int  # oob: first SU switch offset inside an SU block
    su_pdu_offset: int
    site_switch_offset: int
    usage: dict[str, dict[str, object]]
    server_pairs: int = 1  # storage: top-switch pairs with their own server block

    def server_block(self, pair: int) -> Block:
        """The storage servers' subnet of top-switch pair `pair` (0-based): a slice of the storage site block."""
        site = self.site_block(Plane.STORAGE)
        size = site.size // _pow2_at_least(self.server_pairs)
        return Block(site.base + pair * size, size)

    def su_block(self, plane: str, su: int) -> Block:
        base, size, _, _ = self.planes[plane]
        return Block(base + (su - 1) * size, size)

    def site_block(self, plane: str) -> Block:
        base, _, site_offset, site_size = self.planes[plane]
        return Block(base + site_offset, site_size)

    def node(self, plane: str, su: int, node: int) -> str:
        return self.su_block(plane, su).addr(NODE_OFFSET + node - 1)

    def data_nic(self, su: int, node: int, rail: int) -> tuple[str, str]:
        """(host address, leaf address) of the NIC on `rail` of `node` in `su`."""
        if self.data_transport == Transport.INFINIBAND:
            base = self.data_base + (su - 1) * self.data_block + rail * self.data_rail_block
            prefix = 32 - int(math.log2(self.data_rail_block))
            return f"{ip_str(base + node)}/{prefix}", ""
        index = ((node - 1) * self.rails + rail) * 2
        base = self.data_base + (su - 1) * self.data_block + index
        return f"{ip_str(base + 1)}/31", f"{ip_str(base)}/31"

    def p2p(self, tier: str, index: int) -> tuple[str, str]:
        """(child address, parent address) of a /31 fabric link: child .1, parent .0 (AVD rule)."""
        base = self.links_base + (self.links_offsets[tier] + index) * 2
        return f"{ip_str(base + 1)}/31", f"{ip_str(base)}/31"

    def loopback(self, role: str, index: int) -> str:
        return f"{ip_str(self.loop_base + self.loop_offsets[role] + index)}/32"


def _check(problems: list, loc: tuple, pool: str, need: int, what: str) -> int:
    net = IPNetwork(pool)
    if need > net.size:
        problems.append((loc, f"pool {net} holds {net.size} addresses; {what} needs {need}:"
                               f" {need - net.size} addresses missing"))
    return int(net.first)


def build_pools(spec: ClusterSpec, data: DataDims, storage: StorageDims) -> Pools:
    env = spec.envelope
    nets = spec.networks
    problems: list = []
    su_switches = data.leaves_per_su + storage.leaves_per_su + (data.spines if data.tiers == 3 else 0)
    su_switches += 2 * env.max_racks_per_su
    planes: dict[str, tuple[int, int, int, int]] = {}
    usage: dict[str, dict[str, object]] = {}
    pairs = spec.site.facility.pdus_per_side  # PDU pair k's addresses follow pair k-1's region: none move
    site_switches = ((data.spines if data.tiers == 2 else 0) + data.cores + storage.site_switches
                     + 4 * agg_groups(spec) + 2 * access_cores(spec))
    server_pairs = storage.server_pairs
    site_needs = {
        "management": NODE_OFFSET + env.storage_servers_max + 1,
        # one server block per top-switch pair, each aligned: a power of two of equal blocks
        "storage": _pow2_at_least(server_pairs) * _pow2(NODE_OFFSET + math.ceil(env.storage_servers_max / server_pairs)
                                                         + 1),
        "oob": NODE_OFFSET + site_switches + env.storage_servers_max + 2 * SITE_PDU_RACKS * pairs + 1,
    }
    su_needs = {
        "management": NODE_OFFSET + env.max_nodes_per_su + 1,
        "storage": NODE_OFFSET + env.max_nodes_per_su + 1,
        "oob": NODE_OFFSET + env.max_nodes_per_su + su_switches + 2 * (env.max_racks_per_su + 4) * pairs + 1,
    }
    for plane in (Plane.MANAGEMENT, Plane.STORAGE, Plane.OOB):
        block = _pow2(su_needs[plane])
        site = _pow2(site_needs[plane])
        site_offset = math.ceil(env.max_sus * block / site) * site
        pool = nets.plane(plane).supernet
        need = site_offset + site
        base = _check(problems, ("networks", plane, "supernet"), pool, need,
                      f"the envelope ({env.max_sus} SUs x /{32 - int(math.log2(block))} + site /"
                      f"{32 - int(math.log2(site))})")
        planes[plane] = (base, block, site_offset, site)
        usage[plane] = {"pool": pool, "size": IPNetwork(pool).size, "reserved_by_envelope": need,
                        "su_block_prefix": 32 - int(math.log2(block))}
    rails = env.max_rails
    if nets.data.transport == Transport.INFINIBAND:
        rail_block = _pow2(env.max_nodes_per_su + 2)
        data_block = rails * rail_block
    else:
        rail_block = 0
        data_block = _pow2(env.max_nodes_per_su * rails * 2)
    need = env.max_sus * data_block
    data_base = _check(problems, ("networks", "data", "supernet"), nets.data.supernet, need,
                       f"{env.max_sus} SUs x {env.max_nodes_per_su} nodes x {rails} rails")
    usage[Plane.DATA] = {"pool": nets.data.supernet, "size": IPNetwork(nets.data.supernet).size,
                         "reserved_by_envelope": need}
    offsets: dict[str, int] = {}
    count = 0
    for tier, links in (
        (LinkTier.DATA_LEAF_SPINE, env.max_sus * data.leaves_per_su * data.uplinks_per_leaf),
        (LinkTier.DATA_SPINE_CORE, env.max_sus * data.spines * data.spine_uplinks if data.tiers == 3 else 0),
        (LinkTier.STORAGE_LEAF_SPINE, env.max_sus * storage.leaves_per_su * storage.uplinks_per_leaf),
        (LinkTier.SERVER_P2P, env.storage_servers_max * 2),
        (LinkTier.STORAGE_SPINE_CORE, storage.pods * storage.spines * storage.spine_uplinks),  # 3-tier only
    ):
        offsets[tier] = count
        count += links
    links_base = _check(problems, ("networks", "fabric_links"), nets.fabric_links, count * 2,
                        f"{count} point-to-point /31 links")
    usage["fabric_links"] = {"pool": nets.fabric_links, "size": IPNetwork(nets.fabric_links).size,
                             "reserved_by_envelope": count * 2}
    loops: dict[str, int] = {}
    count = 0
    for role, number in (
        (LoopbackRole.DATA_LEAF, env.max_sus * data.leaves_per_su),
        (LoopbackRole.DATA_SPINE, data.spines * (env.max_sus if data.tiers == 3 else 1)),
        (LoopbackRole.DATA_CORE, data.cores),
        (LoopbackRole.STORAGE_LEAF, env.max_sus * storage.leaves_per_su),
        (LoopbackRole.STORAGE_SPINE, storage.spines * (storage.pods if storage.tiers == 3 else 1)),
        (LoopbackRole.STORAGE_CORE, storage.cores),  # 3-tier only
    ):
        loops[role] = count
        count += number
    loop_base = _check(problems, ("networks", "loopbacks"), nets.loopbacks, count, f"{count} switch loopbacks")
    usage["loopbacks"] = {"pool": nets.loopbacks, "size": IPNetwork(nets.loopbacks).size,
                          "reserved_by_envelope": count}
    if problems:
        raise PlanError(problems)
    su_switch_offset = NODE_OFFSET + env.max_nodes_per_su
    return Pools(planes, data_base, data_block, rail_block, nets.data.transport, rails, env.max_nodes_per_su,
                 links_base, offsets, loop_base, loops, su_switch_offset, su_switch_offset + su_switches,
                 NODE_OFFSET + env.storage_servers_max, usage, server_pairs)
