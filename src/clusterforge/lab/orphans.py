"""Hosts whose systemd-nspawn died (killed, crashed) while the container's systemd lives on.

Such a host answers SSH but the lab no longer tracks it; booting it again on top would fight over
its root and namespace. ``orphaned_pids`` finds what is left of it; ``stop_orphans`` stops that
before `up` boots the host afresh.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import container, names, overlay
from .state import LabState
from .topology import LabTopology
from .util import Progress

__all__ = ["orphaned_pids", "stop_orphans"]


def orphaned_pids(lab: str, host: str, d: dict[str, Any]) -> list[int]:
    """Processes of a host whose nspawn is gone (killed, crashed) while its systemd lives on."""
    root = Path(d.get("root") or overlay.root_dir(lab, host))
    if container.is_running(d.get("pid"), root):
        return []
    ns = d.get("netns") or names.netns_name(lab, host)
    return container.leftover_pids([(None, root, ns)], container.host_cgroups(lab, host))


def stop_orphans(topology: LabTopology, st: LabState, progress: Progress) -> None:
    """Before booting a host again, stop what is left of its last boot (it holds the root and the namespace)."""
    for h in topology.hosts:
        d = st.host(h.name)
        left = orphaned_pids(topology.name, h.name, d)
        if left:
            progress(h.name, f"nspawn is gone but {len(left)} of its processes live on; stopping them")
            root = Path(d.get("root") or overlay.root_dir(topology.name, h.name))
            ns = d.get("netns") or names.netns_name(topology.name, h.name)
            container.stop_many([(None, root, ns)], grace=0, cgroups=container.host_cgroups(topology.name, h.name))
