"""The four planes (data, storage, management, oob), their pools and fabric intent."""

from typing import Literal, Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from clusterforge.model.base import Declared
from clusterforge.model.grammar import ModelKey, Owner, VrfName
from clusterforge.model.numbers import Integer, Number
from clusterforge.model.pools import Ipv4Pool

__all__ = ["PlaneName", "PLANES", "Transport", "Nos", "Qos", "AsnRanges", "Gateway", "Plane", "Networks"]

PlaneName = Literal["data", "storage", "management", "oob"]
PLANES: tuple[str, ...] = ("data", "storage", "management", "oob")
Transport = Literal["roce", "infiniband", "ethernet"]
Nos = Literal["sonic", "cumulus", "eos", "infiniband"]
DEFAULT_CLASS = 0  # priority 0 / DSCP 0: the default, best-effort class
_RANGES = {  # field: allowed range and why, said in the error (the default-class checks below come after)
    "roce_dscp": (0, 63, "a DSCP is 6 bits"),
    "cnp_dscp": (0, 63, "a DSCP is 6 bits"),
    "roce_priority": (1, 6, "PG 0 holds the lossy classes and TC 7 the switch's own control traffic"),
    "cnp_priority": (0, 7, "an 802.1p priority is 3 bits"),
    "pfc_cable_length_m": (1, 10_000, "the switch models' lossless pools bound it further"),
}


class Qos(Declared):
    """One lossless-RoCE intent, rendered per NOS and on hosts."""

    roce_dscp: Integer = Field(default=26, ge=0, le=63)
    # the lossless priority: PG 0 holds every lossy class and TC 7 is the switch's own control traffic
    # (SONiC's TC_TO_PRIORITY_GROUP_MAP 7 -> 7), so 1-6 (docs/pfc-headroom.md)
    roce_priority: Integer = Field(default=3, ge=0, le=6)  # 0: refused below, with the reason
    cnp_dscp: Integer = Field(default=48, ge=0, le=63)
    cnp_priority: Integer = Field(default=6, ge=0, le=7)
    ecn_min_bytes: Integer = Field(default=150_000, gt=0, le=1 << 30)
    ecn_max_bytes: Integer = Field(default=1_500_000, gt=0, le=1 << 30)
    ecn_probability_pct: Integer = Field(default=100, ge=1, le=100)
    pfc_watchdog_ms: Integer = Field(default=200, ge=100, le=5000)  # SONiC PFC_WD detection_time range
    # DWRR share of the RoCE queue; the six lossy queues split the rest, at least 1 % each
    ets_roce_pct: Integer = Field(default=50, ge=1, le=94)
    pfc_cable_length_m: Integer = Field(default=100, ge=1, le=10_000)  # the pools bound it further (plan/headroom.py)
    # DSCP -> traffic class for every DSCP the two RoCE ones leave: "precedence" = DSCP >> 3 (class selector,
    # EOS's and Cumulus's own default: the RoCE DSCP's class is lossless), "best_effort" = TC 0; either way
    # no other DSCP reaches the CNP class (docs/pfc-headroom.md, "DSCP policy")
    dscp_policy: Literal["precedence", "best_effort"] = "precedence"

    @field_validator("roce_dscp", "cnp_dscp", "roce_priority", "cnp_priority", "pfc_cable_length_m", mode="before")
    @classmethod
    def _in_range(cls, value: object, info) -> object:
        # say the allowed range, and why, before pydantic's one-sided "less than or equal to"
        lo, hi, why = _RANGES[info.field_name]
        if value == DEFAULT_CLASS and info.field_name != "pfc_cable_length_m":
            return value  # the default class: refused by the checks below, which say why
        if isinstance(value, int) and not isinstance(value, bool) and not lo <= value <= hi:
            raise ValueError(f"{value} is outside the allowed {lo}-{hi} ({why})")
        return value

    @field_validator("roce_priority", "cnp_priority")
    @classmethod
    def _not_the_default_priority(cls, value: int) -> int:
        # PFC on priority 0 makes the default class (everything untagged) lossless: every port pauses
        if value == DEFAULT_CLASS:
            raise ValueError("priority 0 is the default (best-effort) class that carries all other traffic;"
                             " RoCE and CNP each need a priority of their own, 1-7 (usually RoCE 3, CNP 6)")
        return value

    @field_validator("roce_dscp", "cnp_dscp")
    @classmethod
    def _not_the_default_dscp(cls, value: int) -> int:
        # DSCP 0 is best effort: mapping it to the RoCE class pulls every unmarked packet into the lossless queue
        if value == DEFAULT_CLASS:
            raise ValueError("DSCP 0 is best effort, which every unmarked packet carries; RoCE and CNP each need"
                             " a DSCP of their own, 1-63 (usually RoCE 26, CNP 48)")
        return value


class AsnRanges(Declared):
    """BGP ASNs for routed fabrics: one per leaf from leaf_base, one per spine tier/SU, one for cores."""

    leaf_base: Integer = Field(default=4_200_000_000, ge=1, le=4_294_967_294)
    spine_base: Integer = Field(default=4_200_100_000, ge=1, le=4_294_967_294)
    core: Integer = Field(default=4_200_200_000, ge=1, le=4_294_967_294)


class Gateway(Declared):
    """Who answers the hosts' gateway (.1 of every block) on this plane.

    fabric (default): the plane's switches (plan/gateways.py picks anycast, VRRP or routed links);
    external: a router outside the declaration (a site router) must; `by` names it, and the
    rendered tree (switches/_gateways.json) and the report say so."""

    provider: Literal["fabric", "external"] = "fabric"
    by: Owner | None = Field(default=None, description="who provides an external gateway, e.g. dc1 core router")

    @field_validator("by")
    @classmethod
    def _only_external(cls, by: str | None, info: ValidationInfo) -> str | None:
        if by is not None and info.data.get("provider") == "fabric":
            raise ValueError("the plane's switches answer a fabric gateway: `by` names an external one's owner"
                             " and is never used here; allowed: provider: external with by, or no by")
        return by

    @model_validator(mode="after")
    def _external_names_its_owner(self) -> Self:
        if self.provider == "external" and self.by is None:
            raise ValueError("an external gateway needs `by`: who answers the hosts' .1 (e.g. by: dc1 core router)")
        return self


class Plane(Declared):
    supernet: Ipv4Pool
    vlan: Integer = Field(ge=1, le=4094)
    mtu: Integer = Field(default=1500, ge=1280, le=9216)
    transport: Transport = "ethernet"
    nos: Nos = "sonic"
    leaf_model: ModelKey | None = None
    spine_model: ModelKey | None = None
    core_model: ModelKey | None = None
    oversubscription: Number = Field(default=1.0, ge=1.0, le=16.0, description="downlink:uplink, 1.0 = non-blocking")
    reserved_leaf_ports: Integer = Field(default=0, ge=0, le=4096,
                                     description="ports per leaf kept for appliances (e.g. UFM)")
    min_spines: Integer = Field(default=2, ge=1, le=64)
    spine_groups: Integer = Field(default=1, ge=1, le=64, description="data plane, two tiers: the spines split into"
                              " this many groups, group g joined only to the leaves of the g-th block of"
                              " envelope.max_rails / spine_groups consecutive rails (2: one group per plane of a"
                              " twin-plane Ethernet fabric; max_rails: one per rail); 1 = every spine reaches"
                              " every leaf")
    vrf: VrfName | None = None
    # Cumulus only: the NVUE syntax startup.yaml is written in. 5.15 renamed paths (`ip address` ->
    # `ipv4 address`, `enable on` -> `state enabled`, ...); "5.14" writes the older spelling for switches
    # not yet upgraded (render/switches/nvue_syntax.py)
    nvue_syntax: Literal["5.15", "5.14"] = "5.15"
    gateway: Gateway = Field(default_factory=Gateway.model_construct)


class Networks(Declared):
    data: Plane
    storage: Plane
    management: Plane
    oob: Plane
    asn: AsnRanges = Field(default_factory=AsnRanges.model_construct)
    qos: Qos = Field(default_factory=Qos.model_construct)
    loopbacks: Ipv4Pool = Field(description="pool for switch loopbacks (routed fabrics)")
    fabric_links: Ipv4Pool = Field(description="pool for /31 leaf-spine-core links")

    def plane(self, name: str) -> Plane:
        return getattr(self, name)
