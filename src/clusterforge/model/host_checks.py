"""Declaration rules about what lands on a host, each refused at its field with what is allowed.

* storage mounts: never a system directory (a tier mounted on /usr or /proc hides the OS), never inside
  another tier's mount;
* NIC names: never a name the kernel keeps (``lo``; ``all``/``default`` are sysctl directories under
  /proc/sys/net/ipv4/conf) and never a name the plan gives another interface of the same server (``bond0``
  for the storage bond, ``bmc``, the default ``railN``/``storN``/``mgmt0`` of an unnamed group);
* software: the CUDA version is a CUDA release and the driver branch runs it, by the same table the
  cuda_toolkit role checks on the host (roles/cuda_toolkit/defaults/main.yml, kept equal by a test).
"""

from __future__ import annotations

from clusterforge.model.cluster import ClusterSpec, Loc

__all__ = ["host_problems", "SYSTEM_DIRS", "RESERVED_NIC_NAMES", "CUDA_RELEASES", "DRIVER_MAX_CUDA",
           "CUDA_MIN_DRIVER_BRANCH"]

# Refused as a mount point and everything below them: the OS and the kernel's own trees (FHS 3.0).
SYSTEM_DIRS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/root", "/run",
               "/sbin", "/sys", "/tmp", "/usr", "/var")
# Refused as the mount point itself (they hold other mounts or users), allowed below: /mnt/hot, /home/data.
SHARED_ROOTS = ("/", "/home", "/mnt", "/media", "/opt", "/srv", "/srv/bricks")
RESERVED_NIC_NAMES = ("lo", "all", "default", "bonding_masters")
# CUDA toolkit releases (major.minor), from NVIDIA's release-notes archive (docs.nvidia.com/cuda/archive):
# there was no 12.7.
CUDA_RELEASES = ("11.0", "11.1", "11.2", "11.3", "11.4", "11.5", "11.6", "11.7", "11.8",
                 "12.0", "12.1", "12.2", "12.3", "12.4", "12.5", "12.6", "12.8", "12.9",
                 "13.0", "13.1", "13.2", "13.3", "13.4", "13.5")
# Highest CUDA each driver branch runs without the forward-compatibility package: the cuda_toolkit role's
# cuda_toolkit_driver_max_cuda (CUDA release notes, "CUDA Toolkit and minimum required driver version").
DRIVER_MAX_CUDA = {"470": "11.4", "495": "11.5", "510": "11.6", "515": "11.7", "520": "11.8", "525": "12.0",
                   "530": "12.1", "535": "12.2", "545": "12.3", "550": "12.4", "555": "12.5", "560": "12.6",
                   "565": "12.7", "570": "12.8", "575": "12.9", "580": "13.0"}


CUDA_MIN_DRIVER_BRANCH = {11: 450, 12: 525, 13: 580}  # CUDA major -> lowest driver branch that runs it


def host_problems(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    return [*_mounts(spec), *_nic_names(spec), *_cuda(spec)]


def _inside(path: str, directory: str) -> bool:
    return directory == "/" or path == directory or path.startswith(directory + "/")


def _mounts(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    tiers = spec.storage.tiers
    for i, tier in enumerate(tiers):
        loc: Loc = ("storage", "tiers", i, "mount")
        system = next((d for d in SYSTEM_DIRS if _inside(tier.mount, d)), None)
        if system is not None:
            problems.append((loc, f"{tier.mount} is in the system directory {system}; mounting a tier there hides"
                             " the OS's files. Allowed: a directory of its own, e.g. /mnt/" + tier.name))
        elif tier.mount in SHARED_ROOTS:
            problems.append((loc, f"{tier.mount} holds other mounts and files; mount the tier below it, e.g."
                             f" {tier.mount.rstrip('/')}/{tier.name}"))
        for j, other in enumerate(tiers):
            if j != i and tier.mount != other.mount and _inside(tier.mount, other.mount):
                problems.append((loc, f"{tier.mount} is inside tier {other.name!r}'s mount {other.mount}"
                                 f" (storage.tiers.{j}.mount); each tier needs a mount point of its own"))
    return problems


def _nic_names(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    problems: list[tuple[Loc, str]] = []
    for model_name, model in spec.catalog.servers.items():
        nics = model.nics
        planned: dict[str, str] = {}  # name -> what the plan gives it on this server
        if nics.storage.count:
            planned["bond0"] = "the storage bond"
        if nics.oob.count:
            planned["bmc"] = "the BMC (oob) interface"
        defaults = {"management": ("mgmt", min(nics.management.count, 1)), "storage": ("stor", nics.storage.count),
                    "data": ("rail", nics.data.count)}
        for group, (prefix, count) in defaults.items():
            if getattr(nics, group).names is None:
                planned.update({f"{prefix}{i}": f"the {group} NIC {i} (unnamed group)" for i in range(count)})
        for group in ("data", "storage", "management", "oob"):
            for i, name in enumerate(getattr(nics, group).names or []):
                loc: Loc = ("catalog", "servers", model_name, "nics", group, "names", i)
                if name in RESERVED_NIC_NAMES:
                    problems.append((loc, f"{name!r} is the kernel's own ({', '.join(RESERVED_NIC_NAMES)} are"
                                     " reserved); name the NIC after its port, e.g. ens1f0"))
                elif name in planned:
                    problems.append((loc, f"{name!r} is the name the plan gives {planned[name]} of this server;"
                                     " choose another"))
    return problems


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _cuda(spec: ClusterSpec) -> list[tuple[Loc, str]]:
    sw = spec.software
    loc: Loc = ("software", "cuda_version")
    release = ".".join(sw.cuda_version.split(".")[:2])
    if release not in CUDA_RELEASES:
        return [(loc, f"CUDA {sw.cuda_version} is not a CUDA release; known: {', '.join(CUDA_RELEASES)}")]
    branch = int(sw.nvidia_driver_branch)
    if branch < CUDA_MIN_DRIVER_BRANCH.get(int(release.split(".")[0]), 0):
        return []  # model.checks names the CUDA major's minimum branch
    table = [int(b) for b in DRIVER_MAX_CUDA if int(b) <= branch]
    if not table:
        return [(("software", "nvidia_driver_branch"), f"driver branch {branch} is older than every branch the"
                 f" CUDA table knows ({min(map(int, DRIVER_MAX_CUDA))} and later); it cannot run CUDA {release}")]
    nearest = str(max(table))
    highest = DRIVER_MAX_CUDA[nearest]
    if _version_key(release) > _version_key(highest):
        return [(loc, f"driver branch {branch} runs CUDA up to {highest} (branch {nearest} in the CUDA table);"
                 f" CUDA {release} needs a newer nvidia_driver_branch")]
    return []
