"""Run every check on one host, in the order of the troubleshooting list."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from clusterforge.ops.doctor import fabric, gpu, host, slurm
from clusterforge.ops.doctor.findings import Finding, Status
from clusterforge.ops.doctor.shell import Shell

__all__ = ["CHECKS", "Expect", "diagnose"]


@dataclass(frozen=True)
class Expect:
    """What the host should be (from its rendered host_vars); empty when there is no plan (--local)."""

    gpus: int | None = None
    driver_version: str | None = None
    interfaces: Mapping[str, int] = field(default_factory=dict)  # data/storage/management name -> MTU
    roce_interfaces: tuple[str, ...] = ()
    infiniband: bool = False
    mounts: tuple[str, ...] = ()

    @classmethod
    def from_host_vars(cls, hv: Mapping[str, Any]) -> Expect:
        software = hv.get("cf_software") or {}
        roce = hv.get("cf_roce") or {}
        return cls(
            gpus=int(hv["cf_gpu_count"]) if hv.get("cf_gpu_count") is not None else None,
            driver_version=software.get("nvidia_driver_version"),
            interfaces={i["name"]: int(i.get("mtu") or 1500) for i in hv.get("cf_interfaces") or []},
            roce_interfaces=tuple(roce.get("interfaces") or ()) if roce.get("enabled") else (),
            infiniband=any(str(i.get("kind", "")).lower() == "infiniband" or str(i.get("name", "")).startswith("ib")
                           for i in hv.get("cf_interfaces") or []),
            mounts=tuple(m["path"] for m in (hv.get("cf_storage") or {}).get("mounts") or []),
        )


Check = Callable[[Shell, Expect], list[Finding]]
CHECKS: tuple[tuple[str, Check], ...] = (
    ("gpu-visible", gpu.visible),
    ("nouveau", gpu.nouveau),
    ("driver-version", gpu.driver_version),
    ("persistence-mode", gpu.persistence),
    ("xid", gpu.xid),
    ("nvlink", gpu.nvlink),
    ("clocks-power", gpu.throttle),
    ("data-links", fabric.data_links),
    ("ib-links", fabric.ib_links),
    ("pfc", fabric.pfc),
    ("nccl-env", host.nccl_env),
    ("mounts", host.mounts),
    ("slurm", slurm.daemons),
)


def diagnose(shell: Shell, expect: Expect | None = None, only: tuple[str, ...] = ()) -> list[Finding]:
    """Every finding of every check (or of ``only``); a check that breaks is a finding, never a traceback."""
    expect = expect or Expect()
    probe = shell.run("true")
    if not probe.ok:  # one line for a host that does not answer, not one per check
        lines = [line.strip() for line in (probe.err or probe.out).splitlines() if line.strip()]
        return [Finding("reachable", Status.fail, f"{shell.name} unreachable: {lines[-1] if lines else probe.rc}",
                        fix="is it powered and booted? check its management link and sshd; then run doctor again")]
    findings: list[Finding] = []
    for name, check in CHECKS:
        if only and name not in only:
            continue
        try:
            findings += check(shell, expect)
        except Exception as exc:  # noqa: BLE001 - reported as the check's own finding
            findings.append(Finding(name, Status.warn, f"the check could not run: {type(exc).__name__}: {exc}"))
    return findings
