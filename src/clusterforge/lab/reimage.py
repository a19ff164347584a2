"""RMA in the lab: one host back from the base image, with the identity the plan gives it."""

from __future__ import annotations

import shutil
from pathlib import Path

from . import container, names, overlay
from .manager import UpResult, _lock, up
from .state import LabState
from .topology import LabTopology
from .util import LabError, Progress, _noop

__all__ = ["reimage"]


def reimage(topology: LabTopology, host: str, *, progress: Progress | None = None,
            boot_timeout: float = 180) -> UpResult:
    """RMA in the lab: the host comes back from the base image (its name and addresses are the plan's;
    a new machine-id and SSH host key, as a swapped machine has), the rest of the lab untouched."""
    progress = progress or _noop
    lab = topology.name
    topology.host(host)  # raises for a name the lab does not have
    with _lock(lab):
        st = LabState.load(lab)
        d = st.host(host)
        if not d:
            raise LabError(f"lab {lab!r} has no host {host!r} running here; bring the lab up first")
        root = Path(d.get("root") or overlay.root_dir(lab, host))
        ns = d.get("netns") or names.netns_name(lab, host)
        progress(host, "stopping and wiping it (back to the base image)")
        container.stop_many([(d.get("pid"), root, ns)], grace=3, cgroups=container.host_cgroups(lab, host))
        hdir = overlay.host_dir(lab, host)
        overlay.unmount_all(hdir)
        for layer in ("upper", "work"):
            shutil.rmtree(hdir / layer, ignore_errors=True)
        st.update_host(host, pid=None)
    return up(topology, progress=progress, boot_timeout=boot_timeout)
