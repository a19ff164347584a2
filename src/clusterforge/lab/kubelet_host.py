"""What a lab host needs, beyond a booted systemd-nspawn, to run containerd and a real kubelet.

A real GPU server has a kernel of its own; a lab host shares this machine's. Four things differ, and the lab
arranges each for hosts that run a kubelet (LabHost.kubelet), leaving the roles exactly what a real host runs:

* cgroups: nspawn hands a container the machine's cgroup v1 controllers read-only (this machine mounts
  cgroup v1 controllers and a controller-less cgroup2: a hybrid layout). The lab puts each host in a cgroup
  of its own in every hierarchy (container.cgroup_roots) and, inside, remounts the controllers writable:
  containerd, runc and the kubelet make the pod cgroups under the host's own, never beside another host's.
  The kubelet runs with the cgroupfs driver and failCgroupV1: false here (k8s_node_allow_cgroup_v1); a real
  host runs cgroup v2 with the systemd driver, which the role requires there.
* the kernel's tunables: the kubelet sets vm.overcommit_memory=1, kernel.panic=10, kernel.panic_on_oops=1
  (and checks vm.panic_on_oom and the root key limits) on its host. Here they are the machine's, shared by
  every host, and stay as they are: each lab host is shown the values the kubelet sets (read-only files bound
  over those /proc/sys entries), so the kubelet finds them set and writes nothing. SIMULATED, lab only.
* keyrings: runc gives every container a session keyring; nspawn's system-call filter refuses keyctl
  (keyrings are not namespaced). Kubelet hosts are started with the @keyring calls allowed.
* OOM scores: the pod sandbox's oom_score_adj is -998, and lowering a score needs CAP_SYS_RESOURCE, which this
  machine withholds from every process (its bounding set). containerd is told to keep scores no lower than its
  own (restrict_oom_score_adj, what rootless and user-namespaced nodes use; playbooks/vars/lab.yml): the pods'
  OOM order differs from a real node's, nothing else.
* /var/lib/containerd: the overlayfs snapshotter cannot put an overlay's upper directory on overlayfs (the
  host's root): it is a directory of this machine's file system (LabHost.data_dirs), as on a real disk.
* /dev/kmsg: the kubelet's OOM watcher reads the kernel log; it is bound in read-only, and the host keeps
  CAP_SYSLOG (reading it needs that where the kernel restricts dmesg).
* the network namespace's own tunables (IPv4 forwarding: pods route through their host; what kube-proxy sets:
  route_localnet and its conntrack TCP timeouts): nspawn leaves /proc/sys read-only inside the container, so the
  lab sets them in the host's network namespace from outside (manager, NETNS_SYSCTLS), as it does for its
  routers; kube-proxy finds them set and writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from .util import write_atomic

__all__ = ["CONTAINERD_DIR", "KUBELET_SYSCTLS", "NETNS_SYSCTLS", "UNIT", "write_unit"]

CONTAINERD_DIR = "/var/lib/containerd"
# What the kubelet's container manager sets on its host (pkg/kubelet/cm/container_manager_linux.go,
# setupKernelTunables) and the values it wants.
KUBELET_SYSCTLS = {
    "vm/overcommit_memory": "1",
    "vm/panic_on_oom": "0",
    "kernel/panic": "10",
    "kernel/panic_on_oops": "1",
    "kernel/keys/root_maxkeys": "1000000",
    "kernel/keys/root_maxbytes": "25000000",
}
# Per network namespace, set from outside: forwarding, and kube-proxy's values (its defaults: conntrack
# tcpEstablishedTimeout 24h, tcpCloseWaitTimeout 1h; route_localnet for NodePorts on localhost).
NETNS_SYSCTLS = {
    "net.ipv4.ip_forward": 1,
    "net.ipv4.conf.all.route_localnet": 1,
    "net.netfilter.nf_conntrack_tcp_timeout_established": 86400,
    "net.netfilter.nf_conntrack_tcp_timeout_close_wait": 3600,
}
UNIT = "cf-lab-kubelet-host.service"
_SCRIPT = "usr/local/sbin/cf-lab-kubelet-host"
_VIEW = "/etc/clusterforge/lab-sysctl"


def _script() -> str:
    binds = "\n".join(f"view {path} {value}" for path, value in KUBELET_SYSCTLS.items())
    return f"""#!/bin/sh
# LAB ONLY (clusterforge.lab.kubelet_host): ready this container for containerd and a kubelet.
set -eu
# the cgroup v1 controllers nspawn mounted read-only: writable, inside this host's own cgroup
for c in /sys/fs/cgroup/*; do
    case "$(findmnt -n -o FSTYPE "$c" 2>/dev/null)" in
        cgroup) findmnt -n -o OPTIONS "$c" | grep -q '^ro' && mount -o remount,bind,rw "$c" ;;
    esac
done
# SIMULATED kernel tunables: this host shares the machine's kernel; the kubelet is shown its own values
mkdir -p {_VIEW}
view() {{
    f="{_VIEW}/$(echo "$1" | tr / .)"
    printf '%s\\n' "$2" > "$f"
    findmnt -n "/proc/sys/$1" >/dev/null 2>&1 || mount --bind -o ro "$f" "/proc/sys/$1"
}}
{binds}
"""


def _unit() -> str:
    return f"""# LAB ONLY (clusterforge.lab.kubelet_host): cgroups writable, the kubelet's kernel tunables shown
[Unit]
Description=clusterforge lab: ready this container for containerd and a kubelet
DefaultDependencies=no
After=local-fs.target
Before=containerd.service kubelet.service sysinit.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/{_SCRIPT}

[Install]
WantedBy=sysinit.target
"""


def write_unit(root: Path) -> None:
    """Write the unit and its script into a host's (mounted) root and enable it; idempotent."""
    write_atomic(root / _SCRIPT, _script(), 0o755)
    unit = root / "etc/systemd/system" / UNIT
    write_atomic(unit, _unit(), 0o644)
    link = root / "etc/systemd/system/sysinit.target.wants" / UNIT
    if not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(f"/etc/systemd/system/{UNIT}", link)
