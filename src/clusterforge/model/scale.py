"""Grow a declaration to N scalable units: capacity what-ifs, scale tests and benchmarks.

`scaled(spec, sus)` keeps everything the declaration says (models, facility, planes, storage) and
changes only what must change for N SUs to fit: the envelope's max_sus, the SU list (SU k copies
the declared SU (k-1) mod len(declared), with id k) and the address pools, which are re-cut from
10.0.0.0/8 wide enough for a 512-SU envelope. Pure: a new, validated ClusterSpec.
"""

from __future__ import annotations

from clusterforge.model.cluster import ClusterSpec

__all__ = ["scaled", "SCALED_POOLS"]

# disjoint slices of 10.0.0.0/8, each wider than the largest example needs at 512 SUs
SCALED_POOLS = {
    "data": "10.0.0.0/11", "fabric_links": "10.32.0.0/11", "storage": "10.64.0.0/12",
    "management": "10.80.0.0/12", "oob": "10.96.0.0/12", "loopbacks": "10.112.0.0/14",
}


def scaled(spec: ClusterSpec, sus: int) -> ClusterSpec:
    if sus < 1:
        raise ValueError(f"a cluster has at least one scalable unit, not {sus}")
    declared = sorted(spec.scalable_units, key=lambda unit: unit.id)
    units = [declared[(k - 1) % len(declared)].model_copy(update={"id": k}) for k in range(1, sus + 1)]
    nets = spec.networks
    planes = {name: nets.plane(name).model_copy(update={"supernet": SCALED_POOLS[name]})
              for name in ("data", "storage", "management", "oob")}
    networks = nets.model_copy(update={**planes, "fabric_links": SCALED_POOLS["fabric_links"],
                                       "loopbacks": SCALED_POOLS["loopbacks"]})
    envelope = spec.envelope.model_copy(update={"max_sus": sus})
    teams: list = []  # team quotas are per declared GPU count; a what-if has none
    return ClusterSpec.model_validate({
        **spec.model_dump(), "envelope": envelope.model_dump(), "scalable_units": [u.model_dump() for u in units],
        "networks": networks.model_dump(), "teams": teams,
    })
