"""Declaration rules for the remediation policy; each problem names the field that causes it.

* an automatic action listed twice is a typo, not a stronger wish: refused;
* ``mode: act`` with ``max_out_per_su: 0`` or ``max_out_per_rack: 0`` can never take a node out: the
  policy says act and means observe; refused with the setting that says so.
"""

from __future__ import annotations

from clusterforge.model.cluster import ClusterSpec, Loc

__all__ = ["remediation_problems"]


def remediation_problems(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    policy = spec.remediation
    problems: list[tuple[Loc, str]] = []
    seen: dict[str, int] = {}
    for index, action in enumerate(policy.automatic):
        if action in seen:
            problems.append((("remediation", "automatic", index),
                             f"{action!r} is listed twice (also at automatic[{seen[action]}])"))
        seen.setdefault(action, index)
    if policy.mode == "act":
        for field in ("max_out_per_su", "max_out_per_rack"):
            if getattr(policy, field) == 0:
                problems.append((("remediation", field), "0 lets no node out of service, so `mode: act` could"
                                 " never act; write `mode: observe` or allow at least 1"))
    return problems
