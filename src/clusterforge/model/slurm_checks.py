"""Declaration rules for the schedulers and Slurm; each problem names the field that causes it.

* schedulers: listed once each; Slurm needs a control node (slurmctld and slurmdbd run there);
  ``slurm:`` settings without Slurm among the schedulers are never applied, so they are refused;
* names through Slurm's grammar: the cluster name (ClusterName, when ``slurm.cluster_name`` is unset),
  team names (they become accounts; ``root`` is the account every other hangs from), partition names
  (``default`` is slurm.conf's PartitionName=DEFAULT record), once each;
* the Slurm version: 22.05 or later (what the rendered slurm.conf is written for);
* partitions: at most one default; the SUs they name exist; a default time within the partition's
  maximum (slurmctld only logs "DefaultTime exceeds MaxTime" and drops the default: src/slurmctld/read_config.c);
* the catalog: every GPU server model of a Slurm cluster states its CPU topology and memory
  (node lines), and ``nvml`` detection is for real GPUs only; two GPU models of the cluster never share
  a GRES type (``--gres=gpu:h100:1`` would take either).

Team GPU limits above the cluster's GPUs are refused by checks._quotas (they become GrpTRES=gres/gpu=N).
Partition node names are checked by the plan (plan/slurm.py), which knows the node names.
"""

from __future__ import annotations

import re

from clusterforge.model.cluster import ClusterSpec, Loc
from clusterforge.model.grammar import GRAMMARS

__all__ = ["slurm_problems", "SLURM_MIN_VERSION", "slurm_version", "slurm_minutes", "gres_type"]

SLURM_MIN_VERSION = (22, 5)
_SLURM_NAME = re.compile(GRAMMARS["Slurm name"][0])
_ALLOWED = GRAMMARS["Slurm name"][1]
RESERVED_ACCOUNTS = ("root",)
RESERVED_PARTITIONS = ("default",)


def slurm_version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def slurm_minutes(text: str) -> float:
    """A Slurm time (the grammar's forms) in minutes; UNLIMITED and INFINITE are infinite."""
    if text in ("UNLIMITED", "INFINITE"):
        return float("inf")
    days, _, clock = text.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    if days:  # DAYS-HH[:MM[:SS]]
        hours, minutes, seconds = (parts + [0, 0])[:3]
        return int(days) * 1440 + hours * 60 + minutes + seconds / 60
    if len(parts) == 3:  # HH:MM:SS
        return parts[0] * 60 + parts[1] + parts[2] / 60
    return parts[0] + (parts[1] / 60 if len(parts) == 2 else 0)  # MINUTES or MINUTES:SECONDS


def gres_type(gpu_model: str) -> str:
    """The GRES type of a GPU model: its first word (up to '-', '_' or a space), in lower case."""
    return re.split(r"[-_ ]", gpu_model.strip(), maxsplit=1)[0].lower()


def slurm_problems(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    for index, name in enumerate(spec.schedulers):
        if name in spec.schedulers[:index]:
            problems.append((("schedulers", index), f"scheduler {name!r} is listed twice"))
    if "slurm" not in spec.schedulers:
        if "slurm" in spec.model_fields_set:
            problems.append((("slurm",), "slurm settings are never applied: add slurm to schedulers"
                             " (schedulers: [kubernetes, slurm]) or drop them"))
        return problems
    where = ("schedulers", spec.schedulers.index("slurm"))
    if not spec.control.nodes:
        problems.append((where, "Slurm needs a control node for slurmctld and slurmdbd; declare control.nodes"
                         " (1 or 3) and control.server_model"))
    version = spec.software.slurm_version
    if len(version.split(".")) > 3 or slurm_version(version) < SLURM_MIN_VERSION:
        problems.append((("software", "slurm_version"), f"Slurm {version}: the rendered files are for Slurm"
                         " 22.05 or later, written YY.MM or YY.MM.PATCH (e.g. 22.05, 24.05.4)"))
    slurm = spec.slurm
    if slurm.cluster_name is None and not _SLURM_NAME.fullmatch(spec.name):
        problems.append((("name",), f"{spec.name!r} is the Slurm ClusterName (slurm.cluster_name is unset) and not"
                         f" a valid Slurm name; allowed: {_ALLOWED}; or set slurm.cluster_name"))
    for index, team in enumerate(spec.teams):
        loc: Loc = ("teams", index, "name")
        if not _SLURM_NAME.fullmatch(team.name):
            problems.append((loc, f"team {team.name!r} becomes a Slurm account and is not a valid Slurm name;"
                             f" allowed: {_ALLOWED}"))
        elif team.name in RESERVED_ACCOUNTS:
            problems.append((loc, f"{team.name!r} is Slurm's root account, which every account hangs from;"
                             " name the team otherwise"))
    problems += _partitions(spec)
    problems += _hardware(spec)
    return problems


def _partitions(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    seen: dict[str, int] = {}
    defaults: list[int] = []
    sus = {unit.id for unit in spec.scalable_units}
    for index, part in enumerate(spec.slurm.partitions):
        where: Loc = ("slurm", "partitions", index)
        if part.name in RESERVED_PARTITIONS:
            problems.append(((*where, "name"), "PartitionName=DEFAULT is slurm.conf's defaults record; name the"
                             " partition otherwise"))
        if part.name in seen:
            problems.append(((*where, "name"), f"duplicate partition name {part.name!r}"
                             f" (also at slurm.partitions.{seen[part.name]}.name)"))
        seen.setdefault(part.name, index)
        if part.default:
            defaults.append(index)
            if len(defaults) > 1:
                problems.append(((*where, "default"), f"a second default partition (also slurm.partitions."
                                 f"{defaults[0]}); Slurm takes one Default=YES"))
        if part.default_time is not None and slurm_minutes(part.default_time) > slurm_minutes(part.max_time):
            problems.append(((*where, "default_time"), f"default time {part.default_time} is above the partition's"
                             f" max_time {part.max_time}; slurmctld drops it and jobs get max_time; allowed:"
                             " default_time <= max_time"))
        for i, su in enumerate(part.sus):
            if su not in sus:
                known = ", ".join(str(s) for s in sorted(sus))
                problems.append(((*where, "sus", i), f"SU {su} is not declared; scalable units: {known}"))
    return problems


def _hardware(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    cat, slurm = spec.catalog, spec.slurm
    if slurm.gpu_detection == "nvml" and slurm.hardware == "simulated":
        problems.append((("slurm", "gpu_detection"), "nvml detection needs real GPUs; simulated hardware has"
                         " placeholder GPUs (gpu_detection: files)"))
    types: dict[str, tuple[str, str]] = {}  # GRES type -> (GPU model, the server model that has it)
    for model_name in sorted({unit.server_model for unit in spec.scalable_units}):
        model = cat.servers.get(model_name)
        if model is None or not model.gpu.count:  # unknown model: cluster.cross_problems names it
            continue
        kind = gres_type(model.gpu.model)
        first = types.setdefault(kind, (model.gpu.model, model_name))
        if first[0] != model.gpu.model:
            problems.append((("catalog", "servers", model_name, "gpu", "model"), f"{model.gpu.model!r} and"
                             f" {first[0]!r} (server model {first[1]}) are both GRES type gpu:{kind} (the GPU"
                             " model's first word), so a job asking for one may get the other; give the GPU"
                             " models different first words, or one GPU model"))
        for field in ("cpu", "memory_gb"):
            if getattr(model, field) is None:
                problems.append((("catalog", "servers", model_name, field),
                                 f"Slurm node lines need the server model's {field}"
                                 " (cpu: {sockets, cores_per_socket, threads_per_core}; memory_gb: installed GiB)"))
    return problems
