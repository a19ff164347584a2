"""Where clusterforge delivers and how it reaches hosts: one record per target, looked up once by its name.

A delivery ``Target`` (the stack's ``clusterforge:target``, ``--target`` of ``preview``/``up``) says what it
provisions, how its hosts are reached (a ``Reach``) and what it can verify. A ``Reach`` (``--target`` of
``verify``, ``provision``, ``replace``, ``roll``, ``health``, ``doctor``) says how the host-side commands get to
a host. The names are words for people and for the settings; code asks the record's fields, never the name.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Reach", "Target", "REACHES", "SIMULATED_PARTS", "TARGETS", "LAB", "SSH", "LOCAL", "reach", "target"]

# The parts of a host the lab twin knowingly simulates (it has no such hardware), each with what stands in for it.
# A host check that cannot read a planned fact names the part it needs; where the reach simulates that part the
# check's outcome is SIMULATED (never a pass), elsewhere it fails (see Reach.fails_unchecked).
SIMULATED_PARTS = {
    "gpus": "GPUs: the lab's servers have none (userland-only driver, no /dev/nvidia*, no NVSwitch; Kubernetes "
            "counts them through cf-sim-gpu-plugin, Slurm through placeholder device files)",
    "rdma_nics": "RDMA NICs: the lab's data-plane links are veth pairs (no /sys/class/infiniband, no DCQCN knobs)",
    "host_kernel": "the host's own kernel: a lab host is a systemd-nspawn container on the lab machine's kernel "
                   "(no initramfs, clock or kernel module of its own)",
}


@dataclass(frozen=True)
class Reach:
    """How hosts are reached by provisioning, the host checks and the scheduler drains."""

    name: str  # lab | ssh | local
    lab: bool  # the lab's hosts: by name through the lab's ssh_config (`lab up` writes it), the lab's Ansible variables
    local: bool  # this machine, checked as exactly one inventory host: no SSH
    says: str  # in words, for help and reports
    simulates: frozenset[str] = frozenset()  # keys of SIMULATED_PARTS its hosts lack and the lab stands in for

    @property
    def uses_ssh(self) -> bool:
        return not self.local

    @property
    def fails_unchecked(self) -> bool:
        """A planned fact its checks cannot read (a part it does not simulate) fails the run: every reach but the
        lab's, whose other unchecked facts stay skips with their reason."""
        return not self.lab


@dataclass(frozen=True)
class Target:
    """Where `up` delivers the plan."""

    name: str  # lab | files | ssh
    emulates: bool  # builds the lab (containers, VMs behind emulated BMCs, golden images) with simulated GPU units
    switches_over_ssh: bool  # switch configuration pushed to each switch's management address (else written as files)
    reach: Reach  # how its hosts are provisioned and checked
    provisions: str  # what `up` makes, in words
    verifies: str  # what its checks can show, in words


LAB = Reach("lab", lab=True, local=False, says="the lab's hosts, through the lab's ssh_config",
            simulates=frozenset(SIMULATED_PARTS))
SSH = Reach("ssh", lab=False, local=False, says="real hosts over SSH (the operator's ssh_config)")
LOCAL = Reach("local", lab=False, local=True, says="this machine, as one inventory host")
REACHES = {r.name: r for r in (LAB, SSH, LOCAL)}

TARGETS = {t.name: t for t in (
    Target("lab", emulates=True, switches_over_ssh=False, reach=LAB,
           provisions="the cluster emulated on this machine: containers, FRR routers, VMs behind Redfish emulators",
           verifies="the host checks on emulated hosts (the GPU units simulated)"),
    Target("files", emulates=False, switches_over_ssh=False, reach=SSH,
           provisions="switch configuration as files in a directory; hosts provisioned over SSH",
           verifies="the host checks on real hosts over SSH"),
    Target("ssh", emulates=False, switches_over_ssh=True, reach=SSH,
           provisions="switch configuration pushed over SSH; hosts provisioned over SSH",
           verifies="the host checks on real hosts over SSH"),
)}  # fmt: skip


def reach(name: str) -> Reach:
    """The reach named ``name``; ValueError naming the choices for any other."""
    try:
        return REACHES[name]
    except KeyError:
        raise ValueError(f"target {name!r}: expected one of {', '.join(REACHES)}") from None


def target(name: str) -> Target:
    """The delivery target named ``name``; ValueError naming the choices for any other."""
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"target {name!r}: expected one of {', '.join(TARGETS)}") from None
