"""Client-side SSH material for a lab: known_hosts and an ssh_config for ssh/Ansible/testinfra.

Host keys are generated on this machine when a host is created, so ``known_hosts`` is
written before any connection and StrictHostKeyChecking stays on.  Every host entry is
reachable by its name or the address this machine reaches it on (management, else e.g.
oob); a host with neither is reached through its network namespace (ProxyCommand, root).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from clusterforge import paths

from .names import netns_name
from .topology import LabTopology
from .util import lab_dir, write_atomic

_NSPROXY = Path(__file__).with_name("nsproxy.py")


def ssh_config_path(lab: str) -> Path:
    return paths.lab_ssh_config(lab)


def known_hosts_path(lab: str) -> Path:
    return lab_dir(lab) / "known_hosts"


def key_path(lab: str) -> Path:
    return lab_dir(lab) / "id_ed25519"


def write(topo: LabTopology, host_keys: Mapping[str, str]) -> tuple[Path, Path]:
    """Write ``known_hosts`` and ``ssh_config`` for the hosts in ``host_keys`` (name → public key)."""
    lab = topo.name
    kh_lines, cfg = [], [f"# clusterforge lab {lab}: generated, do not edit",
                         # bare-metal servers, each written once its install reports its host key (baremetal.netinstall)
                         f"Include {lab_dir(lab) / 'ssh_config.d'}/*.conf\n"]
    for h in topo.hosts:
        if h.name not in host_keys:
            continue
        ip = topo.reachable_ip(h.name)
        kind, blob = host_keys[h.name].split()[:2]
        kh_lines.append(f"{h.name}{',' + ip if ip else ''} {kind} {blob}")
        cfg.append(f"Host {h.name}{' ' + ip if ip else ''}")
        if ip:
            cfg.append(f"  HostName {ip}")
        else:
            ns = netns_name(lab, h.name)
            cfg.append("  HostName 127.0.0.1")
            cfg.append(f"  ProxyCommand ip netns exec {ns} {sys.executable} {_NSPROXY} 127.0.0.1 22")
        cfg += [
            f"  HostKeyAlias {h.name}",
            "  User root",
            f"  IdentityFile {key_path(lab)}",
            "  IdentitiesOnly yes",
            f"  UserKnownHostsFile {known_hosts_path(lab)}",
            "  GlobalKnownHostsFile /dev/null",
            "  StrictHostKeyChecking yes",
            "  PasswordAuthentication no",
            "  BatchMode yes",
            "  ConnectTimeout 10",
            "  LogLevel ERROR",
            "",
        ]
    write_atomic(known_hosts_path(lab), "\n".join(kh_lines) + "\n", 0o644)
    write_atomic(ssh_config_path(lab), "\n".join(cfg) + "\n", 0o644)
    return ssh_config_path(lab), known_hosts_path(lab)


def command(lab: str, host: str, remote: Sequence[str] = ()) -> list[str]:
    """argv that opens an SSH session (or runs ``remote``) on a lab host."""
    return ["ssh", "-F", str(ssh_config_path(lab)), host, *remote]
