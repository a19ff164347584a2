"""Xid codes and ECC lines of a kernel log as evidence, with the action each class of code calls for.

Sources (facts, in our words):
* NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html) gives each code a
  resolution bucket for the immediate action: RESTART_APP (the application's own fault), RESET_GPU,
  RESTART_BM (restart the machine), CONTACT_SUPPORT.
* NVIDIA Health Validation's Xid checks (docs.nvidia.com/health-validation/reference/checks/xid) mark
  Xid 46 and 48 CRITICAL with the recommended action ``drain: reset_gpu -> service_required``.
* Dynamic page retirement and row remapping (docs.nvidia.com/deploy/dynamic-page-retirement,
  a100-gpu-mem-error-mgmt): Xid 48 is a double-bit ECC error, 63 a page retired or row remapped (a GPU
  reset activates it), 64 a retirement or remap that failed (the memory cannot heal itself).
* The kernel's EDAC core (drivers/edac/edac_mc.c) logs host memory errors as ``EDAC MCn: <count> CE`` or
  ``UE``: corrected (watched) and uncorrected (the DIMM is replaced).

The classes:

============  =======================  ========  ===========
class         codes                    verdict   action
============  =======================  ========  ===========
application   13 31 43 45              WARN      none (the job restarts; the node is sound)
watch         92 94                    WARN      none (a high corrected-error rate, a contained error)
reset         46 48 63 74 95 119 120   CRITICAL  reset_gpu (63: WARN, the remap waits for a reset)
reboot        79                       CRITICAL  reboot (the GPU left the PCIe bus)
service       64                       CRITICAL  rma
============  =======================  ========  ===========

A code outside the table is WARN with no automatic action: the operator looks it up in the catalog.

A GPU reset answers the codes at or below its rung, not the kernel log: the lines stay in this boot's log.
remediate's reset_gpu repair therefore writes RESET_MARK into the kernel log after a reset that succeeded,
and only the Xid lines after the last such line count; a code that asks for more than a reset (79, 64) still
counts from before it (a reboot starts a new boot's log; an RMA keeps the node out).

SIMULATED (the lab): the lab's hosts are containers on the machine's kernel, so its kernel log is shared by
every host and no drill may write there. On the lab, health also reads SIMULATED_KERNEL_LOG, a per-host file
under /run (gone at the host's next boot, like a boot's kernel log) that the lab's fault drills write Xid lines
into; every line read from it carries SIMULATED_MARK, and its evidence says `simulated`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clusterforge.health.evidence import Action, Evidence, Status

__all__ = ["RESET_MARK", "SIMULATED_KERNEL_LOG", "SIMULATED_MARK", "XID_CLASSES", "XidClass", "kernel_log_evidence",
           "xid_class"]

# the lab's fault drills append this to the lines they inject: evidence from them says `simulated`
SIMULATED_MARK = "clusterforge-simulated"
# SIMULATED: a lab host's own kernel log for the drills (the lab only; see the module's text)
SIMULATED_KERNEL_LOG = "/run/clusterforge/simulated-kernel.log"
# written into the kernel log by remediate's reset_gpu repair once the reset succeeded
RESET_MARK = "clusterforge-remediate: GPU reset"
XID_LINE = re.compile(r"NVRM: Xid \(([^)]*)\): (\d+)")
EDAC_LINE = re.compile(r"EDAC (MC\d+): (\d+) (CE|UE)\b")


@dataclass(frozen=True, slots=True)
class XidClass:
    name: str
    status: Status
    action: Action
    meaning: str


_APPLICATION = XidClass("application", Status.warn, Action.none, "the application's own fault; its job restarts")
_WATCH = XidClass("watch", Status.warn, Action.none, "corrected or contained memory errors: watched")
XID_CLASSES: dict[int, XidClass] = {
    13: _APPLICATION, 31: _APPLICATION, 43: _APPLICATION, 45: _APPLICATION,
    92: _WATCH, 94: _WATCH,
    46: XidClass("reset", Status.fail, Action.reset_gpu, "GPU stopped processing"),
    48: XidClass("reset", Status.fail, Action.reset_gpu, "double-bit ECC error"),
    63: XidClass("reset", Status.warn, Action.reset_gpu, "a row remap or page retirement waits for a GPU reset"),
    74: XidClass("reset", Status.fail, Action.reset_gpu, "NVLink error"),
    95: XidClass("reset", Status.fail, Action.reset_gpu, "uncontained ECC error"),
    119: XidClass("reset", Status.fail, Action.reset_gpu, "GSP RPC timeout"),
    120: XidClass("reset", Status.fail, Action.reset_gpu, "GSP error"),
    79: XidClass("reboot", Status.fail, Action.reboot, "the GPU has fallen off the bus"),
    64: XidClass("service", Status.fail, Action.rma, "a row remap or page retirement failed"),
}  # fmt: skip
_UNLISTED = XidClass("unlisted", Status.warn, Action.none, "not in our table: look it up in NVIDIA's Xid catalog")


def xid_class(code: int) -> XidClass:
    return XID_CLASSES.get(code, _UNLISTED)


def kernel_log_evidence(node: str, log: str) -> list[Evidence]:
    """One evidence per Xid code and per EDAC memory controller with errors, from this boot's kernel log;
    one `ok` evidence when there is none. Xid lines before the last RESET_MARK line whose code a GPU reset
    answers are not counted (one `ok` evidence says which)."""
    found: dict[int, list[str]] = {}
    answered: dict[int, int] = {}
    reset_line = ""
    for line in log.splitlines():
        if RESET_MARK in line:
            reset_line = line.strip()
            for code in list(found):
                if xid_class(code).action.rank <= Action.reset_gpu.rank:
                    answered[code] = answered.get(code, 0) + len(found.pop(code))
            continue
        match = XID_LINE.search(line)
        if match:
            found.setdefault(int(match.group(2)), []).append(line.strip())
    evidence = []
    if answered:
        codes = ", ".join(f"Xid {code} x{count}" for code, count in sorted(answered.items()))
        evidence.append(Evidence(node, "kernel:gpu-reset", Status.ok, f"answered by the GPU reset logged after them:"
                                 f" {codes}", detail=reset_line, simulated=SIMULATED_MARK in reset_line))
    for code, lines in sorted(found.items()):
        cls = xid_class(code)
        gpus = sorted({m.group(1) for line in lines if (m := XID_LINE.search(line))})
        evidence.append(Evidence(node, f"kernel:xid-{code}", cls.status,
                                 f"Xid {code} ({cls.name}: {cls.meaning}) x{len(lines)} on {', '.join(gpus)}",
                                 cls.action, "\n".join(lines[-3:]), all(SIMULATED_MARK in line for line in lines)))
    edac: dict[tuple[str, str], int] = {}
    edac_lines: dict[tuple[str, str], list[str]] = {}
    for line in log.splitlines():
        match = EDAC_LINE.search(line)
        if match:
            key = (match.group(1), match.group(3))
            edac[key] = edac.get(key, 0) + int(match.group(2))
            edac_lines.setdefault(key, []).append(line.strip())
    for (controller, kind), count in sorted(edac.items()):
        lines = edac_lines[(controller, kind)]
        uncorrected = kind == "UE"
        evidence.append(Evidence(
            node, f"kernel:ecc-{kind.lower()}", Status.fail if uncorrected else Status.warn,
            f"{count} {'uncorrected' if uncorrected else 'corrected'} host memory error(s) on {controller}",
            Action.rma if uncorrected else Action.none, "\n".join(lines[-3:]),
            all(SIMULATED_MARK in line for line in lines)))
    return evidence or [Evidence(node, "kernel:xid", Status.ok, "no Xid or EDAC memory error in this boot's"
                                 " kernel log")]
