"""The words the Plan is written in: device kinds, planes, link tiers, transports, NOS names.

Each set follows NetBox's ``choices.py``: class attributes are the stored values (plain ``str``, so
JSON, YAML and templates see exactly what they saw before), ``CHOICES`` pairs each with a label,
and named groups (``DeviceKind.SWITCHES``) say which values belong together. The declaration schema
spells the same values as ``Literal`` types (``clusterforge.model.network``); a unit test keeps the
two in step. This module imports nothing: every layer may use it.
"""

from __future__ import annotations

__all__ = ["ChoiceSet", "DeviceKind", "Plane", "LinkTier", "Transport", "Nos", "LoopbackRole", "GatewayMethod"]


class ChoiceSet:
    """Constants plus ``CHOICES = ((value, label), ...)``; ``values()`` in declaration order."""

    CHOICES: tuple[tuple[str, str], ...] = ()

    @classmethod
    def values(cls) -> tuple[str, ...]:
        return tuple(value for value, _ in cls.CHOICES)

    @classmethod
    def label(cls, value: str) -> str:
        return dict(cls.CHOICES)[value]


class DeviceKind(ChoiceSet):
    SERVER = "server"
    STORAGE = "storage"
    CONTROL = "control"
    LEAF = "leaf"
    SPINE = "spine"
    CORE = "core"
    MGMT_SWITCH = "mgmt-switch"
    PDU = "pdu"

    CHOICES = (
        (SERVER, "GPU server"),
        (LEAF, "Leaf switch"),
        (SPINE, "Spine switch"),
        (CORE, "Core switch"),
        (STORAGE, "Storage server"),
        (CONTROL, "Control/head node"),
        (MGMT_SWITCH, "Management/OOB switch"),
        (PDU, "PDU"),
    )
    HOSTS = (SERVER, STORAGE, CONTROL)  # run an OS; provisioned by Ansible, checked by testinfra
    SWITCHES = (LEAF, SPINE, CORE, MGMT_SWITCH)
    FABRIC_SWITCHES = (LEAF, SPINE, CORE)  # routed data/storage fabric tiers


class Plane(ChoiceSet):
    DATA = "data"
    STORAGE = "storage"
    MANAGEMENT = "management"
    OOB = "oob"

    CHOICES = (
        (DATA, "Data (GPU east-west)"),
        (STORAGE, "Storage"),
        (MANAGEMENT, "In-band management"),
        (OOB, "Out-of-band (BMC, switch eth0, PDU)"),
    )
    FABRICS = (DATA, STORAGE)  # leaf/spine(/core), routed on Ethernet
    ACCESS = (MANAGEMENT, OOB)  # ToR + aggregation pair, layer 2


class LinkTier(ChoiceSet):
    """``Link.tier``; the three fabric tiers also name the /31 point-to-point pools."""

    NODE_LEAF = "node-leaf"
    DATA_LEAF_SPINE = "data-leaf-spine"
    DATA_SPINE_CORE = "data-spine-core"
    STORAGE_LEAF_SPINE = "storage-leaf-spine"
    STORAGE_SPINE_CORE = "storage-spine-core"  # three-tier storage: pod spines to storage cores
    SERVER_SPINE = "server-spine"  # storage servers straight onto the storage spines
    NODE_TOR = "node-tor"
    TOR_AGG = "tor-agg"
    AGG_CORE = "agg-core"  # management/oob: aggregation pairs joined by a core pair

    CHOICES = (
        (NODE_LEAF, "Node NIC to leaf"),
        (DATA_LEAF_SPINE, "Data leaf to spine"),
        (DATA_SPINE_CORE, "Data spine to core"),
        (STORAGE_LEAF_SPINE, "Storage leaf to spine"),
        (STORAGE_SPINE_CORE, "Storage pod spine to core"),
        (SERVER_SPINE, "Storage server to the storage top tier"),
        (NODE_TOR, "Node to management/OOB ToR"),
        (TOR_AGG, "ToR to aggregation"),
        (AGG_CORE, "Aggregation to access core"),
    )
    SERVER_P2P = "storage-server"  # the /31 pool of storage servers on a routed top tier (no Link carries it)
    P2P = (DATA_LEAF_SPINE, DATA_SPINE_CORE, STORAGE_LEAF_SPINE, SERVER_P2P, STORAGE_SPINE_CORE)  # /31 pools, in order


class LoopbackRole(ChoiceSet):
    """The /32 loopback ranges, one per routed switch role."""

    DATA_LEAF = "data-leaf"
    DATA_SPINE = "data-spine"
    DATA_CORE = "data-core"
    STORAGE_LEAF = "storage-leaf"
    STORAGE_SPINE = "storage-spine"
    STORAGE_CORE = "storage-core"

    CHOICES = (
        (DATA_LEAF, "Data leaves"),
        (DATA_SPINE, "Data spines"),
        (DATA_CORE, "Data cores"),
        (STORAGE_LEAF, "Storage leaves"),
        (STORAGE_SPINE, "Storage spines"),
        (STORAGE_CORE, "Storage cores"),
    )


class Transport(ChoiceSet):
    ROCE = "roce"
    INFINIBAND = "infiniband"
    ETHERNET = "ethernet"

    CHOICES = ((ROCE, "RoCEv2 (lossless Ethernet)"), (INFINIBAND, "InfiniBand"), (ETHERNET, "Ethernet"))


class Nos(ChoiceSet):
    SONIC = "sonic"
    CUMULUS = "cumulus"
    EOS = "eos"
    INFINIBAND = "infiniband"  # managed by UFM / OpenSM; rendered as a port and partition plan

    CHOICES = ((SONIC, "SONiC"), (CUMULUS, "Cumulus Linux (NVUE)"), (EOS, "Arista EOS"), (INFINIBAND, "InfiniBand"))


class GatewayMethod(ChoiceSet):
    """How a plane's hosts reach their first hop (plan/gateways.py decides, per plane)."""

    ROUTED = "routed"      # a /31 per host NIC: the leaf port is the next hop (data plane)
    ANYCAST = "anycast"    # the same gateway address and virtual MAC on every switch the host is cabled to
    VRRP = "vrrp"          # one elected master owns the gateway on an L2 segment that spans the pair
    SINGLE = "single"      # the gateway on one switch only (a NOS without VRRP on an L2 segment)
    EXTERNAL = "external"  # declared: a site router provides it
    NONE = "none"          # no IP gateway (InfiniBand: IPoIB subnets are on-link)

    CHOICES = ((ROUTED, "Routed host links"), (ANYCAST, "Anycast gateway"), (VRRP, "VRRP"),
               (SINGLE, "Single switch gateway"), (EXTERNAL, "External router"), (NONE, "No gateway"))
