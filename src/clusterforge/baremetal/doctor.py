"""`doctor` through a server's BMC: power state, BIOS attributes against the declaration, the system event log.

The troubleshooting list's first questions for a server that does not come up: is it powered, are the BIOS
options the declaration asks for (Above 4G Decoding, Resizable BAR, SR-IOV on 8-GPU servers) in effect or only
pending a reset, and what does the BMC's event log say. Each is a ``Finding`` like the host checks'.
"""

from __future__ import annotations

from collections.abc import Callable

from clusterforge.baremetal.types import Bmc, BmcError
from clusterforge.ops.doctor.findings import Finding, Status
from clusterforge.plan.baremetal import BmcFacts

__all__ = ["BMC_CHECKS", "bmc_findings"]

BMC_CHECKS = ("bmc-power", "bmc-bios", "bmc-sel")


def _power(bmc: Bmc, facts: BmcFacts) -> list[Finding]:
    state = bmc.power_state()
    if state == "On":
        return [Finding("bmc-power", Status.ok, "powered on", f"PowerState={state}")]
    return [Finding("bmc-power", Status.fail, f"power state {state or 'unknown'}", f"PowerState={state}",
                    "power it on through the BMC (clusterforge up does); if it will not stay on, read bmc-sel")]


def _bios(bmc: Bmc, facts: BmcFacts) -> list[Finding]:
    if not facts.bios:
        return [Finding("bmc-bios", Status.skip, "the declaration sets no BIOS attributes")]
    state = bmc.bios()
    result = state.check(dict(facts.bios))
    evidence = "\n".join(f"{name}: declared {want!r}, current {state.current.get(name)!r}"
                         + (f", pending {state.pending[name]!r}" if name in state.pending else "")
                         for name, want in facts.bios)
    if result.wrong:
        names = ", ".join(f"{n}={c!r} (declared {w!r})" for n, w, c in result.wrong)
        return [Finding("bmc-bios", Status.fail, f"BIOS attributes differ from the declaration: {names}", evidence,
                        "clusterforge up applies them to Bios/Settings; they take effect at the next reset")]
    if result.pending:
        return [Finding("bmc-bios", Status.warn, f"set but pending until the next reset: {', '.join(result.pending)}",
                        evidence, "reset the server through its BMC to apply them")]
    return [Finding("bmc-bios", Status.ok, f"{len(result.applied)} declared BIOS attribute(s) in effect", evidence)]


def _sel(bmc: Bmc, facts: BmcFacts) -> list[Finding]:
    log = bmc.event_log()
    if not log.present:
        return [Finding("bmc-sel", Status.skip, "the BMC offers no system event log (no LogServices)")]
    bad = [e for e in log.entries if (e.severity or "").lower() in ("critical", "warning")]
    evidence = "\n".join(f"{e.created or '-'} {e.severity or '-'}: {e.message}" for e in log.entries[-12:])
    if any((e.severity or "").lower() == "critical" for e in bad):
        return [Finding("bmc-sel", Status.fail, f"{len(bad)} critical/warning event(s) in {log.service}", evidence,
                        "read the entries (PSU, thermal, memory ECC, PCIe/GPU) and fix the hardware, then clear"
                        " the log through the BMC")]
    if bad:
        return [Finding("bmc-sel", Status.warn, f"{len(bad)} warning event(s) in {log.service}", evidence)]
    return [Finding("bmc-sel", Status.ok, f"{len(log.entries)} event(s) in {log.service}, none critical", evidence)]


_CHECKS: dict[str, Callable[[Bmc, BmcFacts], list[Finding]]] = {
    "bmc-power": _power, "bmc-bios": _bios, "bmc-sel": _sel}


def bmc_findings(connect: Callable[[], Bmc], facts: BmcFacts, only: tuple[str, ...] = ()) -> list[Finding]:
    """Every BMC finding for the server; a BMC that cannot be reached is one failed finding naming it."""
    try:
        bmc = connect()
    except BmcError as exc:
        return [Finding("bmc-reachable", Status.fail, str(exc),
                        fix="check the BMC's oob link and address, its credentials reference and CA")]
    findings: list[Finding] = []
    try:
        for name, check in _CHECKS.items():
            if only and name not in only:
                continue
            try:
                findings += check(bmc, facts)
            except BmcError as exc:
                findings.append(Finding(name, Status.fail, str(exc)))
    finally:
        bmc.close()
    return findings
