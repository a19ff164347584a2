"""The whole declaration: ClusterSpec, and the rules that span several objects."""

from itertools import combinations

from netaddr import IPNetwork
from pydantic import Field

from clusterforge.model.base import Declared
from clusterforge.model.catalog import Catalog
from clusterforge.model.control import Control
from clusterforge.model.grammar import Name
from clusterforge.model.hardware_checks import hardware_problems
from clusterforge.model.kubernetes import Kubernetes
from clusterforge.model.management import Baremetal
from clusterforge.model.monitoring import Monitoring
from clusterforge.model.network import PLANES, Networks
from clusterforge.model.remediation import Remediation
from clusterforge.model.site import Site
from clusterforge.model.slurm import SchedulerName, Slurm
from clusterforge.model.software import Software, Team
from clusterforge.model.state import State
from clusterforge.model.storage import Storage
from clusterforge.model.units import Envelope, ScalableUnit

__all__ = ["ClusterSpec", "Loc", "cross_problems"]

Loc = tuple[str | int, ...]


class ClusterSpec(Declared):
    name: Name
    site: Site
    catalog_files: list[str] = Field(default=[], max_length=32)  # loader.MAX_CATALOG_FILES
    catalog: Catalog
    envelope: Envelope = Field(default_factory=Envelope.model_construct)
    scalable_units: list[ScalableUnit] = Field(min_length=1, max_length=4096)
    networks: Networks
    storage: Storage = Field(default_factory=Storage.model_construct)
    control: Control = Field(default_factory=Control.model_construct)
    software: Software = Field(default_factory=Software.model_construct)
    teams: list[Team] = Field(default=[], max_length=1000)
    schedulers: list[SchedulerName] = Field(default=["kubernetes"], min_length=1, max_length=2)
    slurm: Slurm = Field(default_factory=Slurm.model_construct)
    kubernetes: Kubernetes = Field(default_factory=Kubernetes.model_construct)
    # how servers are managed through their BMCs, by model
    baremetal: Baremetal = Field(default_factory=Baremetal.model_construct)
    monitoring: Monitoring = Field(default_factory=Monitoring.model_construct)
    # how `clusterforge remediate` may act on the health verdicts (model/remediation.py)
    remediation: Remediation = Field(default_factory=Remediation.model_construct)
    # how the Pulumi state is split into stacks (model/state.py, plan/stacks.py)
    state: State = Field(default_factory=State.model_construct)

    def su(self, su_id: int) -> ScalableUnit:
        for unit in self.scalable_units:
            if unit.id == su_id:
                return unit
        raise KeyError(su_id)


def _pools(spec: ClusterSpec) -> list[tuple[Loc, IPNetwork]]:
    pools: list[tuple[Loc, IPNetwork]] = []
    if "kubernetes" in spec.schedulers:  # pod and service addresses must never equal a host's or a switch's
        # first: a clash is reported at the plane's line, which a default pod or service range has not
        pools.append((("kubernetes", "pod_cidr"), IPNetwork(spec.kubernetes.pod_cidr)))
        pools.append((("kubernetes", "service_cidr"), IPNetwork(spec.kubernetes.service_cidr)))
    pools += [(("networks", plane, "supernet"), IPNetwork(spec.networks.plane(plane).supernet)) for plane in PLANES]
    pools.append((("networks", "loopbacks"), IPNetwork(spec.networks.loopbacks)))
    pools.append((("networks", "fabric_links"), IPNetwork(spec.networks.fabric_links)))
    return pools


def cross_problems(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    """Rules spanning objects; each problem names where in the declaration it lives."""
    problems: list[tuple[Loc, str]] = []
    cat = spec.catalog
    seen: dict[int, int] = {}
    env = spec.envelope
    for index, unit in enumerate(spec.scalable_units):
        where = ("scalable_units", index)
        if unit.id in seen:
            problems.append(
                ((*where, "id"), f"duplicate scalable unit id {unit.id} (also at scalable_units[{seen[unit.id]}]);"
                 " ids are stable identities and are never reused")
            )
        seen.setdefault(unit.id, index)
        if unit.server_model not in cat.servers:
            problems.append(((*where, "server_model"), _unknown("server model", unit.server_model, cat.servers)))
        if unit.id > env.max_sus:
            problems.append(((*where, "id"), f"SU id {unit.id} exceeds envelope.max_sus={env.max_sus}"))
        if unit.nodes > env.max_nodes_per_su:
            problems.append(
                ((*where, "nodes"), f"{unit.nodes} nodes exceed envelope.max_nodes_per_su={env.max_nodes_per_su}")
            )
        if unit.racks > env.max_racks_per_su:
            problems.append(
                ((*where, "racks"), f"{unit.racks} racks exceed envelope.max_racks_per_su={env.max_racks_per_su}")
            )
    for plane_name in ("data", "storage", "management", "oob"):
        plane = spec.networks.plane(plane_name)
        for field in ("leaf_model", "spine_model", "core_model"):
            model = getattr(plane, field)
            if model is not None and model not in cat.switches:
                problems.append((("networks", plane_name, field), _unknown("switch model", model, cat.switches)))
            elif model is not None and plane.nos == "sonic" and cat.switches[model].sonic is None:
                with_map = ", ".join(sorted(n for n, m in cat.switches.items() if m.sonic)) or "(none)"
                problems.append((("networks", plane_name, field),
                                 f"switch model {model!r} has no SONiC port map in the catalog (`sonic:`);"
                                 f" models with one: {with_map}"))
        if plane_name != "data" and plane.spine_groups != 1:
            problems.append((("networks", plane_name, "spine_groups"), "spine groups split the data plane's spines"
                             f" by rail; the {plane_name} plane has no rails; allowed: spine_groups: 1"))
    groups = spec.networks.data.spine_groups
    if env.max_rails % groups:
        fits = ", ".join(str(g) for g in range(1, env.max_rails + 1) if not env.max_rails % g)
        problems.append((("networks", "data", "spine_groups"), f"{groups} spine groups do not split"
                         f" envelope.max_rails={env.max_rails} rails into equal blocks of consecutive rails;"
                         f" allowed: a divisor of {env.max_rails} ({fits})"))
    if spec.site.facility.pdu_model not in cat.pdus:
        problems.append(
            (("site", "facility", "pdu_model"), _unknown("PDU model", spec.site.facility.pdu_model, cat.pdus))
        )
    if spec.storage.server_model and spec.storage.server_model not in cat.servers:
        problems.append(
            (("storage", "server_model"), _unknown("server model", spec.storage.server_model, cat.servers))
        )
    problems.extend(hardware_problems(spec))
    for model in spec.baremetal.models:
        if model not in cat.servers:
            problems.append((("baremetal", "models", model), _unknown("server model", model, cat.servers)))
    if spec.control.server_model and spec.control.server_model not in cat.servers:
        problems.append(
            (("control", "server_model"), _unknown("server model", spec.control.server_model, cat.servers))
        )
    for (loc_a, net_a), (loc_b, net_b) in combinations(_pools(spec), 2):
        if net_a.first <= net_b.last and net_b.first <= net_a.last:
            default = ", the default: declare one clear of the planes" if (
                loc_a[0] == "kubernetes" and loc_a[1] not in spec.kubernetes.model_fields_set) else ""
            problems.append((loc_b, f"{net_b} overlaps {'.'.join(map(str, loc_a))} ({net_a}{default}); pools must be"
                             " disjoint"))
    return problems


def _unknown(what: str, name: str, known: dict) -> str:
    allowed = ", ".join(sorted(known)) or "(catalog is empty)"
    return f"unknown {what} {name!r}; the catalog has: {allowed}"
