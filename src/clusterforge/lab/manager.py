"""Bring a whole lab up, report on it, take it down.

``up`` is idempotent (a second call on a running lab changes nothing), hosts are prepared
and booted concurrently, and ``down`` removes every container, namespace, link, mount and
directory the lab made, even after a crash or a half-finished ``up``.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from . import container, debris, gateway_forward, image, links, names, netns, overlay, rootfs, sshcfg
from .orphans import orphaned_pids, stop_orphans
from .state import LabState
from .topology import LabTopology
from .util import LabError, Progress, _noop, file_lock, lab_dir, lab_home, missing_prerequisites

T = TypeVar("T")


@dataclass(frozen=True)
class HostStatus:
    host: str
    kind: str
    state: str  # running | stopped | orphaned (nspawn gone, its processes live on) | absent
    netns: str
    pid: int | None
    management_ip: str | None  # the address this machine reaches it on (management, else oob)
    addresses: dict[str, list[str]] = field(default_factory=dict)
    sshd: bool = False


@dataclass(frozen=True)
class UpResult:
    lab: str
    changed: bool
    started: list[str]
    seconds: float
    ssh_config: Path
    known_hosts: Path


@dataclass(frozen=True)
class DownResult:
    lab: str
    stopped: list[str]
    netns: list[str]
    links: list[str]
    mounts: list[str]
    seconds: float


def _lock(lab: str):
    return file_lock(lab_home() / ".locks" / f"{lab}.lock")


def _parallel(fn: Callable[[str], T], items: Sequence[str], workers: int) -> dict[str, T]:
    """Run fn over items concurrently; raise one LabError listing every failure."""
    results: dict[str, T] = {}
    errors: list[str] = []
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(items) or 1))) as ex:
        futs = {ex.submit(fn, it): it for it in items}
        for fut, it in futs.items():
            try:
                results[it] = fut.result()
            except Exception as e:  # noqa: BLE001 - collected and re-raised below
                errors.append(f"{it}: {e}")
    if errors:
        raise LabError("\n".join(errors))
    return results


def _lab_name(lab: LabTopology | str) -> str:
    return lab.name if isinstance(lab, LabTopology) else lab


def _topology_from_state(lab: str) -> LabTopology:
    st = LabState.load(lab)
    if "topology" not in st.data:
        raise LabError(f"lab {lab!r} has no state ({lab_dir(lab)}/state.json); is it up?")
    return LabTopology.model_validate(st.data["topology"])


def as_running(topology: LabTopology) -> LabTopology:
    """``topology`` as the lab that runs now: when its state holds the same topology but for the
    images its hosts boot (`clusterforge up` boots golden images; a plan alone does not name them),
    the running one, so commands on a running lab (replace, lab up/status) neither refuse it nor re-image it."""
    st = LabState.load(topology.name)
    if not st.exists or "topology" not in st.data:
        return topology
    try:
        running = LabTopology.model_validate(st.data["topology"])
    except ValueError:
        return topology
    def strip(t: LabTopology) -> dict[str, Any]:
        d = t.model_dump(mode="json")
        for h in d["hosts"]:
            h.pop("image", None)
        return d

    return running if strip(running) == strip(topology) else topology


def up(
    topology: LabTopology,
    *,
    progress: Progress | None = None,
    boot_timeout: float = 180,
    workers: int = 32,
) -> UpResult:
    """Create (or complete) the lab; returns what changed. Safe to call again on a running lab."""
    progress = progress or _noop
    why = missing_prerequisites()
    if why:
        raise LabError("cannot run the lab here: " + ", ".join(why))
    t0 = time.monotonic()
    lab = topology.name
    topo_json = topology.model_dump(mode="json")
    with _lock(lab):
        st = LabState.load(lab)
        if st.exists and st.data.get("topology") != topo_json:
            running = [
                h for h, d in st.data["hosts"].items()
                if container.is_running(d.get("pid"), Path(d.get("root", "/nonexistent")))
            ]  # fmt: skip
            if running:
                raise LabError(
                    f"lab {lab!r} is running with a different topology ({len(running)} hosts); take it down first"
                )
            progress(None, "stale state from an earlier lab with another topology; cleaning it first")
            _down_locked(lab, progress, grace=0)
            st = LabState(lab)
        _clear_debris(topology, st, progress)
        base = rootfs.ensure_rootfs(progress=progress)
        key, pub = overlay.ensure_lab_key(lab)
        layers = {h.name: image.layers_for(h.image) for h in topology.hosts}  # raises for an image not built
        host_names = [h.name for h in topology.hosts]
        st.update(
            lab=lab,
            topology=topo_json,
            rootfs=str(base),
            bridges={s.name: names.bridge_name(lab, s.name) for s in topology.segments if s.kind == "bridge"},
            link_prefix=names.link_prefix(lab),
        )
        for h in topology.hosts:
            if not st.host(h.name):
                st.update_host(
                    h.name,
                    netns=names.netns_name(lab, h.name),
                    root=str(overlay.root_dir(lab, h.name)),
                    pid=None,
                )
        _raise_host_limits(len(topology.hosts), progress)
        changed = _network(topology, progress, workers)
        if topology.apt_proxy:
            _ensure_apt_proxy(topology, st, progress)
            _ensure_time_server(topology, st, progress)

        stop_orphans(topology, st, progress)

        def prepare(name: str) -> tuple[str, bool]:
            h = topology.host(name)
            root, mounted = overlay.mount(lab, name, base, layers[name])
            d = st.host(name)
            if mounted or not container.is_running(d.get("pid"), root):
                return overlay.prepare(topology, h, root, pub), mounted
            hk = root / "etc/ssh/ssh_host_ed25519_key.pub"
            return hk.read_text().strip(), False

        prepared = _parallel(prepare, host_names, workers)
        changed |= any(m for _, m in prepared.values())
        cfg, kh = sshcfg.write(topology, {n: k for n, (k, _) in prepared.items()})

        def boot(name: str) -> bool:
            d = st.host(name)
            root = Path(d["root"])
            log = overlay.host_dir(lab, name) / "console.log"
            mgmt = topology.reachable_ip(name)
            if container.is_running(d.get("pid"), root):
                if container.sshd_up(d["netns"], mgmt):
                    return False
                started = False
                pid = d["pid"]
            else:
                progress(name, "booting")
                h = topology.host(name)
                binds = [(overlay.data_dir(lab, name, path), path) for path in h.data_dirs]
                pid = container.start(name, root, d["netns"], log, container.host_cgroups(lab, name),
                                      binds=binds, fuse=h.fuse, kubelet=h.kubelet)
                st.update_host(name, pid=pid, started_at=time.time())
                started = True
            waited = container.wait_sshd(pid, root, d["netns"], mgmt, log, timeout=boot_timeout)
            progress(name, f"sshd up after {waited:.1f} s")
            return started

        booted = _parallel(boot, host_names, workers)
        started = sorted(n for n, s in booted.items() if s)
        changed |= bool(started)
        secs = time.monotonic() - t0
        if changed:
            progress(None, f"lab {lab} up: {len(host_names)} hosts ({len(started)} booted) in {secs:.1f} s")
        else:
            progress(None, f"lab {lab} already running ({len(host_names)} hosts); nothing changed")
        return UpResult(lab, changed, started, secs, cfg, kh)


_SYSCTL = Path("/proc/sys")


def _clear_debris(topology: LabTopology, st: LabState, progress: Progress) -> None:
    """Clear what killed labs left in this one's way (see ``debris``); refuse when a live lab or a
    link no lab made stands there. In the way: this lab's own name with no state here, and every
    address overlapping one of its control addresses."""
    lab = topology.name
    in_way: dict[str, str] = {}
    if not st.exists and (netns.list_lab(lab) or links.lab_root_links(lab) or debris.lab_mounts(lab)):
        in_way[lab] = f"its namespaces, links or mounts exist with no state in {lab_dir(lab)}"
    for h in debris.address_holders(lab, [cidr for cidr, _ in topology.control_addresses()]):
        if h.lab is None:
            raise LabError(f"lab {lab!r} cannot take control address {h.wanted}: {h.cidr} on {h.dev} overlaps it and"
                           f" no lab made {h.dev}; remove that address or give the lab another address block")
        in_way.setdefault(h.lab, f"{h.cidr} on {h.dev} overlaps control address {h.wanted}")
    for other, why in sorted(in_way.items()):
        alive = debris.live_pids(other)
        if alive:
            raise LabError(f"lab {other!r} is running ({len(alive)} processes) and stands in the way of lab {lab!r}:"
                           f" {why}; take it down from the checkout that brought it up (`clusterforge lab down`)")
        cleared = debris.clear(other)
        progress(None, f"lab {other!r} was killed without `down` ({why}); cleared {cleared.summary()}")


def _raise_host_limits(hosts: int, progress: Progress) -> None:
    """Every booted systemd holds several inotify instances; the default 128 per user stops
    booting at about 25 hosts ("Too many open files"). Raise (never lower) the limits."""
    want = {
        "fs/inotify/max_user_instances": 256 + 16 * hosts,
        "fs/inotify/max_user_watches": 65536 + 8192 * hosts,
    }
    for key, value in want.items():
        f = _SYSCTL / key
        try:
            have = int(f.read_text())
            if have < value:
                f.write_text(str(value))
                progress(None, f"raised {key.replace('/', '.')} from {have} to {value}")
        except (OSError, ValueError) as e:
            progress(None, f"warning: could not raise {key.replace('/', '.')}: {e}")


def _ensure_apt_proxy(topology: LabTopology, st: LabState, progress: Progress) -> None:
    """The hosts' package source: a caching proxy on the control address (hosts have no route out)."""
    from urllib.parse import urlsplit

    from . import aptproxy

    pid = st.data.get("apt_proxy_pid")
    if pid and Path(f"/proc/{pid}/cmdline").exists() and b"aptproxy" in Path(f"/proc/{pid}/cmdline").read_bytes():
        return
    mirror = urlsplit(rootfs.host_mirror()).hostname or "deb.debian.org"
    allowed = sorted({mirror, "deb.debian.org"})
    pid = aptproxy.start(topology.control.address, lab_home() / "aptcache", allowed,
                         lab_dir(topology.name) / "aptproxy.log")
    st.update(apt_proxy_pid=pid)
    progress(None, f"apt proxy for the hosts on {topology.control.address}:{aptproxy.PORT} ({', '.join(allowed)})")


def _ensure_time_server(topology: LabTopology, st: LabState, progress: Progress) -> None:
    """The hosts' NTP server on the control address (``lab.timeserve``), beside their package source."""
    from . import timeserve

    if timeserve.running(st.data.get("time_server_pid")):
        return
    pid = timeserve.start(topology.name, topology.control.address)
    st.update(time_server_pid=pid)
    progress(None, f"NTP server for the hosts on {topology.control.address}:{timeserve.PORT} (chronyd -x,"
                   " this machine's clock)")


def _network(topology: LabTopology, progress: Progress, workers: int) -> bool:
    """Namespaces, bridges, veths, addresses, control endpoint. True when anything was created."""
    lab = topology.name
    changed = False
    for h in topology.hosts:
        changed |= netns.ensure(names.netns_name(lab, h.name))
    for s in topology.segments:
        if s.kind == "bridge":
            changed |= links.ensure_bridge(lab, s)[1]
    p2p: dict[str, list[links.Endpoint]] = {}

    def host_links(name: str) -> bool:
        h = topology.host(name)
        ns = names.netns_name(lab, name)
        made = False
        for i in h.interfaces:
            seg = topology.segment(i.segment)
            if seg.kind == "bridge":
                made |= links.ensure_bridge_port(lab, links.Endpoint(name, ns, i), seg)
        if h.kind == "router":
            netns.sysctl(ns, **{"net.ipv4.ip_forward": 1, "net.ipv6.conf.all.forwarding": 1})
        elif h.kubelet:  # nspawn leaves /proc/sys read-only inside it (lab/kubelet_host.py)
            from .kubelet_host import NETNS_SYSCTLS

            netns.sysctl(ns, **NETNS_SYSCTLS)
        return made

    for h in topology.hosts:
        for i in h.interfaces:
            if topology.segment(i.segment).kind == "p2p":
                p2p.setdefault(i.segment, []).append(links.Endpoint(h.name, names.netns_name(lab, h.name), i))
    changed |= any(_parallel(host_links, [h.name for h in topology.hosts], workers).values())
    for seg_name, (a, b) in sorted(p2p.items()):
        changed |= links.ensure_p2p(lab, topology.segment(seg_name), a, b)
    changed |= links.ensure_control(lab, topology.control_addresses())
    # the machine routes between the blocks it is the gateway of, and only inside the lab's range
    changed |= gateway_forward.enable(sorted({names.bridge_name(lab, seg) for _, seg in topology.control_addresses()}))

    def host_routes(name: str) -> bool:
        return links.ensure_routes(names.netns_name(lab, name), topology.host(name).routes)

    changed |= any(_parallel(host_routes, [h.name for h in topology.hosts], workers).values())
    note = links.vlan_note([i for h in topology.hosts for i in h.interfaces] + [topology.control])
    if note and changed:
        progress(None, note)
    if changed:
        progress(None, "network: namespaces, bridges, veths and addresses in place")
    return changed


def status(lab: LabTopology | str) -> list[HostStatus]:
    """One row per host: running/stopped/absent, its addresses, whether sshd answers."""
    topology = lab if isinstance(lab, LabTopology) else _topology_from_state(lab)
    st = LabState.load(topology.name)

    def one(name: str) -> HostStatus:
        h = topology.host(name)
        d = st.host(name)
        ns = names.netns_name(topology.name, name)
        root = overlay.root_dir(topology.name, name)
        mgmt = topology.reachable_ip(name)
        if not netns.exists(ns):
            return HostStatus(name, h.kind, "absent", ns, None, mgmt)
        pid = d.get("pid")
        running = container.is_running(pid, root)
        state = "running" if running else ("orphaned" if orphaned_pids(topology.name, name, d) else "stopped")
        return HostStatus(
            name,
            h.kind,
            state,
            ns,
            pid if running else None,
            mgmt,
            links.ns_addresses(ns),
            container.sshd_up(ns, mgmt) if state != "stopped" else False,
        )

    rows = _parallel(one, [h.name for h in topology.hosts], 16)
    return [rows[h.name] for h in topology.hosts]


def down(lab: LabTopology | str, *, progress: Progress | None = None, grace: float = 3.0) -> DownResult:
    """Remove everything the lab made; works from the state file and by scanning for its names."""
    name = _lab_name(lab)
    with _lock(name):
        return _down_locked(name, progress or _noop, grace)


def _down_locked(lab: str, progress: Progress, grace: float) -> DownResult:
    t0 = time.monotonic()
    st = LabState.load(lab)
    ldir = lab_dir(lab)
    hosts: dict[str, dict[str, Any]] = {k: dict(v) for k, v in st.data["hosts"].items()}
    pre = names.netns_prefix(lab)
    for ns in netns.list_lab(lab):
        hosts.setdefault(ns[len(pre) :], {"netns": ns})
    hdir = ldir / "hosts"
    if hdir.is_dir():
        for entry in hdir.iterdir():
            hosts.setdefault(entry.name, {})
    items = []
    for h, d in hosts.items():
        d.setdefault("netns", names.netns_name(lab, h))
        d.setdefault("root", str(overlay.root_dir(lab, h)))
        items.append((d.get("pid"), Path(d["root"]), d["netns"]))
    running = [h for h, d in hosts.items() if container.is_running(d.get("pid"), Path(d["root"]))]
    cgroups = container.lab_cgroups(lab)
    if items or any(c.exists() for c in cgroups):
        progress(None, f"stopping {len(running)} containers")
        container.stop_many(items, grace=grace, cgroups=cgroups)
    left_cg = container.remove_cgroups(cgroups)
    if left_cg:
        progress(None, f"warning: cgroups not removed: {', '.join(map(str, left_cg))}")
    from . import aptproxy

    if aptproxy.stop(st.data.get("apt_proxy_pid")):
        progress(None, "apt proxy stopped")
    from . import timeserve

    if timeserve.stop(st.data.get("time_server_pid")):
        progress(None, "NTP server stopped")
    gateway_forward.disable(list(st.data.get("bridges", {}).values()))
    gone_links = links.delete_lab_links(lab, list(st.data.get("bridges", {}).values()))
    gone_ns = []
    for d in hosts.values():
        if netns.exists(d["netns"]):
            netns.delete(d["netns"])
            gone_ns.append(d["netns"])
    for ns in netns.list_lab(lab):  # anything left with the lab's prefix
        netns.delete(ns)
        gone_ns.append(ns)
    unmounted = [str(p) for p in overlay.unmount_all(ldir)] if ldir.exists() else []
    elsewhere = [r for r in debris.lab_mounts(lab) if not r.is_relative_to(ldir)]  # another home's, or a gone one's
    if elsewhere and debris.live_pids(lab):
        progress(None, f"warning: {len(elsewhere)} roots of lab {lab} in another lab home are in use; left mounted")
    elif elsewhere:
        unmounted += [str(p) for root in elsewhere for p in overlay.unmount_all(root)]
    if ldir.exists():
        if overlay.mounts_under(ldir):
            raise LabError(f"mounts remain under {ldir}; not removing it")
        shutil.rmtree(ldir)
    secs = time.monotonic() - t0
    progress(None, f"lab {lab} down in {secs:.1f} s")
    return DownResult(lab, sorted(running), sorted(set(gone_ns)), gone_links, unmounted, secs)


def ssh_command(lab: LabTopology | str, host: str, remote: Sequence[str] = ()) -> list[str]:
    """argv for ``ssh`` into a lab host (uses the lab's ssh_config; host keys are checked)."""
    name = _lab_name(lab)
    if not sshcfg.ssh_config_path(name).exists():
        raise LabError(f"lab {name!r} is not up (no {sshcfg.ssh_config_path(name)})")
    return sshcfg.command(name, host, remote)


def ssh_config_path(lab: LabTopology | str) -> Path:
    return sshcfg.ssh_config_path(_lab_name(lab))
