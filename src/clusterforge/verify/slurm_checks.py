"""The Slurm layer's checks, against the live slurmctld: Slurm's own commands run on the controller.

Every check is one fact with its outcome and a detail naming what differs: each planned GPU server is
a Slurm node in state IDLE with its planned `gres/gpu` count; the switch tree (or the NVLink blocks)
`scontrol show topology` reports is the plan's; and two live probes: a job asking one GPU more than the
smallest team's limit stays PENDING with the association-limit reason (AssocGrpGRES: the account's
GrpTRES=gres/gpu), and a one-GPU-per-node job in the largest team runs on two nodes.

`expected` comes from the plan (`slurm_expected` in clusterforge.schedulers.slurm.expected): {"nodes": [{name, gpus}],
"topology": {plugin, switches: [{name, nodes, switches}], blocks: [{name, nodes}]}, "accounts": [{name,
gpus}]}. Names reach the shell only through shlex.quote and have passed the declaration's Slurm name
grammar. `run(command)` runs a shell command on the controller and returns (exit status, stdout,
stderr). In the lab the GPU servers have no GPUs: they are SIMULATED (`slurm.hardware: simulated`: each GPU
an empty placeholder file that gres.conf names) and the node checks say so.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Mapping
from typing import Any

from clusterforge.verify.layer_check import LayerCheck

__all__ = ["SlurmCheck", "run_slurm_checks", "parse_fields", "PROBE_JOB", "LIMIT_REASONS"]

PROBE_JOB = "clusterforge-verify"
# Slurm 22.05's reason for a job held by its association's GrpTRES on a GRES (src/common/slurm_protocol_defs.c,
# job_state_reason_string: WAIT_ASSOC_GRP_GRES); later releases say the same.
LIMIT_REASONS = ("AssocGrpGRES",)
Runner = Callable[[str], tuple[int, str, str]]


SlurmCheck = LayerCheck
SIMULATED_GPUS = "GPUs: gres/gpu counted from placeholder device files (the lab has no GPUs)"


def parse_fields(line: str) -> dict[str, str]:
    """`scontrol --oneliner` output: space-separated Key=Value pairs (values hold no spaces we read)."""
    fields: dict[str, str] = {}
    for word in line.split():
        key, sep, value = word.partition("=")
        if sep:
            fields[key] = value
    return fields


def _eventually(probe: Callable[[], Any], timeout_s: float, every_s: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(every_s)


def _gpus(gres: str) -> str:
    """'gpu:2' or 'gpu:h200:2(S:0-1)' -> '2'; no gpu entry -> '0'."""
    for item in gres.split(","):
        parts = item.split("(")[0].split(":")
        if parts[0] == "gpu" and len(parts) >= 2:
            return parts[-1]
    return "0"


def _node(run: Runner, name: str) -> dict[str, str] | None:
    rc, stdout, _ = run(f"scontrol --oneliner show node {shlex.quote(name)}")
    return parse_fields(stdout) if rc == 0 and stdout.strip() else None


def _nodes(run: Runner, expected: Mapping[str, Any], simulated: bool, timeout_s: float) -> list[SlurmCheck]:
    out = []
    gres_kind = " (SIMULATED GPUs: placeholder files, no devices)" if simulated else ""
    for node in expected["nodes"]:
        name, gpus = node["name"], str(node["gpus"])

        def idle(name: str = name) -> dict[str, str] | None:
            fields = _node(run, name)
            return fields if fields is not None and fields.get("State") == "IDLE" else None

        fields = _eventually(idle, timeout_s) or _node(run, name)
        if fields is None:
            out.append(SlurmCheck(f"node {name}", False, "not a Slurm node (scontrol show node found nothing)"))
            continue
        state, got = fields.get("State", "?"), _gpus(fields.get("Gres", ""))
        reason = f", reason {fields['Reason']}" if fields.get("Reason") else ""
        out.append(SlurmCheck(f"node {name}", state == "IDLE" and got == gpus,
                              f"{state}{reason}, gres/gpu {got}, planned {gpus}{gres_kind}",
                              SIMULATED_GPUS if simulated else ""))
    return out


def _hostnames(run: Runner, hostlist: str) -> list[str]:
    """Slurm's own expansion of a hostlist expression (scontrol show hostnames)."""
    if not hostlist:
        return []
    rc, stdout, _ = run(f"scontrol show hostnames {shlex.quote(hostlist)}")
    return stdout.split() if rc == 0 else [hostlist]


def _reported_topology(run: Runner, stdout: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """name -> (its own nodes, its child switches) of each SwitchName/BlockName line scontrol reports."""
    reported: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for line in stdout.splitlines():
        fields = parse_fields(line)
        name = fields.get("SwitchName") or fields.get("BlockName")
        if not name:
            continue
        # Slurm lists every node below an upper switch too; only a leaf's (Level=0) are its own.
        own = "BlockName" in fields or fields.get("Level") == "0"
        nodes = tuple(sorted(_hostnames(run, fields.get("Nodes", "")))) if own else ()
        reported[name] = (nodes, tuple(sorted(_hostnames(run, fields.get("Switches", "")))))
    return reported


def _topology(run: Runner, expected: Mapping[str, Any]) -> SlurmCheck:
    topology = expected["topology"]
    plugin = topology["plugin"]
    if plugin is None:
        return SlurmCheck("topology", True, "no topology planned (no data fabric)")
    rc, stdout, stderr = run("scontrol --oneliner show topology")
    if rc != 0:
        return SlurmCheck("topology", False, f"scontrol show topology failed: {(stderr or stdout).strip()[:300]}")
    reported = _reported_topology(run, stdout)
    planned = {s["name"]: (tuple(sorted(s["nodes"])), tuple(sorted(s.get("switches", ()))))
               for s in [*topology["switches"], *topology["blocks"]]}
    if reported == planned:
        unit = "switches" if plugin == "topology/tree" else "blocks"
        return SlurmCheck("topology", True, f"{len(planned)} {unit} as planned ({plugin})")
    missing = sorted(set(planned) - set(reported))
    extra = sorted(set(reported) - set(planned))
    differ = sorted(s for s in set(planned) & set(reported) if planned[s] != reported[s])
    parts = [*(["missing " + ", ".join(missing)] if missing else []),
             *(["not planned " + ", ".join(extra)] if extra else []),
             *(f"{s}: nodes {','.join(reported[s][0]) or '-'} switches {','.join(reported[s][1]) or '-'},"
               f" planned nodes {','.join(planned[s][0]) or '-'} switches {','.join(planned[s][1]) or '-'}"
               for s in differ)]
    return SlurmCheck("topology", False, f"{plugin}: " + "; ".join(parts)[:1000])


def _submit(run: Runner, account: str, options: str, script: str = "hostname") -> tuple[str | None, str]:
    command = (f"sbatch --parsable --job-name={PROBE_JOB} --account={shlex.quote(account)} {options}"
               f" --output=/dev/null --wrap={shlex.quote(script)}")
    rc, stdout, stderr = run(command)
    job = stdout.strip().split(";")[0]
    return (job, "") if rc == 0 and job.isdigit() else (None, (stderr or stdout).strip()[:300])


def _job(run: Runner, job: str) -> dict[str, str]:
    rc, stdout, _ = run(f"scontrol --oneliner show job {job}")
    return parse_fields(stdout) if rc == 0 else {}


def _over_limit(run: Runner, team: Mapping[str, Any], timeout_s: float) -> SlurmCheck:
    name, limit = team["name"], int(team["gpus"])
    check = f"limit {name}"
    job, why = _submit(run, name, f"--gpus={limit + 1}")
    if job is None:
        return SlurmCheck(check, False, f"a {limit + 1}-GPU job in account {name} was not queued: {why}")
    try:
        def held() -> dict[str, str] | None:
            fields = _job(run, job)
            return fields if fields.get("Reason") in LIMIT_REASONS else None

        fields = _eventually(held, timeout_s) or _job(run, job)
    finally:
        run(f"scancel {job}")
    state, reason = fields.get("JobState", "?"), fields.get("Reason", "?")
    return SlurmCheck(check, state == "PENDING" and reason in LIMIT_REASONS,
                      f"a {limit + 1}-GPU job (limit gres/gpu={limit}): {state}, reason {reason}")


def _within_limit(run: Runner, team: Mapping[str, Any], node_names: set[str], timeout_s: float) -> SlurmCheck:
    name = team["name"]
    check = f"job {name}"
    per_node = " --gres=gpu:1" if int(team["gpus"]) >= 2 else ""  # within the limit: one GPU a node
    job, why = _submit(run, name, f"--nodes=2 --ntasks-per-node=1{per_node}", "srun hostname")
    if job is None:
        return SlurmCheck(check, False, f"a two-node job in account {name} was not queued: {why}")
    try:
        def finished() -> dict[str, str] | None:
            fields = _job(run, job)
            return fields if fields.get("JobState") in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                                                         "NODE_FAIL", "OUT_OF_MEMORY") else None

        fields = _eventually(finished, timeout_s) or _job(run, job)
    finally:
        run(f"scancel {job}")
    ran_on = _hostnames(run, fields.get("NodeList", "")) if fields.get("NodeList") not in (None, "(null)") else []
    ok = fields.get("JobState") == "COMPLETED" and len(set(ran_on)) == 2 and set(ran_on) <= node_names
    return SlurmCheck(check, ok, f"a one-GPU-per-node job on two nodes (srun -N2): {fields.get('JobState', '?')}"
                                 f" on {', '.join(ran_on) or 'no node'}, reason {fields.get('Reason', '?')}")


def run_slurm_checks(run: Runner, expected: Mapping[str, Any], simulated: bool = False,
                     timeout_s: float = 60.0) -> list[SlurmCheck]:
    checks = [*_nodes(run, expected, simulated, timeout_s), _topology(run, expected)]
    teams = [t for t in expected["accounts"] if int(t["gpus"]) > 0]
    if not teams:
        return [*checks, SlurmCheck("probe", True, "no team GPU limit declared: nothing to probe")]
    smallest = min(teams, key=lambda t: int(t["gpus"]))
    largest = max(teams, key=lambda t: int(t["gpus"]))
    node_names = {n["name"] for n in expected["nodes"]}
    return [*checks, _over_limit(run, smallest, timeout_s), _within_limit(run, largest, node_names, timeout_s)]
