"""Host checks: the NCCL environment and the planned mounts."""

from __future__ import annotations

from clusterforge.ops.doctor.findings import Finding, Status
from clusterforge.ops.doctor.shell import Shell

BAD_NCCL = {  # variable -> (value that hurts, why)
    "NCCL_IB_DISABLE": ("1", "NCCL will not use InfiniBand/RoCE: inter-node traffic falls back to TCP sockets"),
    "NCCL_P2P_DISABLE": ("1", "GPU peer-to-peer (NVLink/PCIe) is off: intra-node collectives go through host memory"),
    "NCCL_SHM_DISABLE": ("1", "shared-memory transport is off"),
    "NCCL_NET_GDR_LEVEL": ("0", "GPUDirect RDMA is off"),
}


def _nccl_vars(shell: Shell) -> dict[str, tuple[str, str]]:
    """NCCL_* variable -> (value, where): /etc/nccl.conf, then the environment (which wins)."""
    found: dict[str, tuple[str, str]] = {}
    for source, script in (("/etc/nccl.conf", "cat /etc/nccl.conf 2>/dev/null"), ("environment", "env")):
        for line in shell.run(script).out.splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and key.startswith("NCCL_"):
                found[key] = (value.strip().strip('"'), source)
    return found


def nccl_env(shell: Shell, expect) -> list[Finding]:
    found = _nccl_vars(shell)
    evidence = "\n".join(f"{k}={v} ({src})" for k, (v, src) in sorted(found.items())) or "no NCCL_* settings"
    problems: list[tuple[Status, str]] = []
    hcas = set(shell.run("ls /sys/class/infiniband 2>/dev/null").out.split())
    rdma = expect.infiniband or bool(expect.roce_interfaces) or bool(hcas)
    for key, (bad, why) in BAD_NCCL.items():
        if key in found and found[key][0] == bad and (key != "NCCL_IB_DISABLE" or rdma):
            problems.append((Status.fail if key == "NCCL_IB_DISABLE" else Status.warn, f"{key}={bad}: {why}"))
    links = {line.split(": ")[1].split("@")[0] for line in shell.run("ip -o link show").out.splitlines()
             if line.count(": ") >= 2}
    if "NCCL_SOCKET_IFNAME" in found:
        wanted = [n for n in found["NCCL_SOCKET_IFNAME"][0].lstrip("^=").split(",") if n]
        prefix_match = lambda n: any(link.startswith(n) for link in links)  # noqa: E731 - NCCL matches prefixes
        if not found["NCCL_SOCKET_IFNAME"][0].startswith("^") and not any(map(prefix_match, wanted)):
            problems.append((Status.fail, f"NCCL_SOCKET_IFNAME={found['NCCL_SOCKET_IFNAME'][0]} matches no interface"
                                          f" here ({', '.join(sorted(links))})"))
    if "NCCL_IB_HCA" in found:
        wanted = [n.split(":")[0] for n in found["NCCL_IB_HCA"][0].lstrip("^=").split(",") if n]
        if not found["NCCL_IB_HCA"][0].startswith("^") and not any(h.startswith(w) for w in wanted for h in hcas):
            problems.append((Status.fail, f"NCCL_IB_HCA={found['NCCL_IB_HCA'][0]} names no RDMA device here"
                                          f" ({', '.join(sorted(hcas)) or 'none'})"))
    if problems:
        worst = Status.fail if any(s is Status.fail for s, _ in problems) else Status.warn
        return [Finding("nccl-env", worst, "; ".join(text for _, text in problems), evidence,
                        "remove or correct these in /etc/nccl.conf and the job environment; NCCL_DEBUG=INFO"
                        " prints the transport NCCL picked")]
    return [Finding("nccl-env", Status.ok, "no NCCL setting that disables a transport or names a missing device",
                    evidence)]


def mounts(shell: Shell, expect) -> list[Finding]:
    if not expect.mounts:
        return [Finding("mounts", Status.skip, "no planned mounts (run with an inventory and --host)")]
    table = {line.split()[1]: line.split()[2] for line in shell.run("cat /proc/mounts").out.splitlines()
             if len(line.split()) > 2}
    missing = [m for m in expect.mounts if m not in table]
    evidence = "\n".join(f"{m}: {table.get(m, 'not mounted')}" for m in expect.mounts)
    if missing:
        return [Finding("mounts", Status.fail, f"not mounted: {', '.join(missing)}", evidence,
                        "systemctl status the mount unit (systemd-escape --path --suffix=mount PATH); check the"
                        " storage server and the storage network (see data-links)")]
    return [Finding("mounts", Status.ok, f"{len(expect.mounts)} planned mount(s) in place", evidence)]
