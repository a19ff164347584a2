"""Build a golden image layer: boot a one-host builder lab, let a caller converge it, capture its layer.

The builder is a lab of its own (``img-<name>``: one server host on a management bridge, this machine
on the control address, packages through the lab's caching apt proxy), so it never touches a running
lab's hosts. ``converge`` gets the builder's ssh_config and host name and runs whatever installs the
image (clusterforge runs the image playbook's roles there). Then the builder stops, its upper layer
is scrubbed and captured (clusterforge.lab.image.capture) and the builder lab is taken down. Any
failure or interrupt takes the builder down too and leaves no image: the next run starts again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import container, image, overlay
from .manager import _lock, down, up
from .state import LabState
from .topology import LabHost, LabInterface, LabSegment, LabTopology
from .util import LabError, Progress, _noop, write_atomic

__all__ = ["BUILDER_HOST", "build_layer", "builder_topology"]

BUILDER_HOST = "builder"
# dpkg on the builder writes without an fsync per file (what Debian's own container images do): the
# layer is captured only after the builder has stopped cleanly, and a build that dies leaves no image.
# The file is the builder's alone: image.SCRUB removes it from the layer, so hosts keep safe writes.
UNSAFE_IO = "etc/dpkg/dpkg.cfg.d/clusterforge-image-build"
# The builder's management subnet: in the benchmarking range, away from the blocks the examples plan
# (198.18.0.0/16). A running lab on the same addresses is refused by the lab's control-address check.
BUILDER_SUBNET = "198.19.254"

Converge = Callable[[Path, str], dict[str, Any]]


def builder_topology(name: str) -> LabTopology:
    """The one-host lab that builds image ``name``."""
    host = LabHost(name=BUILDER_HOST, interfaces=(LabInterface(name="mgmt0", segment="mgmt",
                                                               ip=f"{BUILDER_SUBNET}.2/24"),))
    return LabTopology(name=f"img-{name}"[:63].rstrip("-"), hosts=(host,),
                       segments=(LabSegment(name="mgmt"),),
                       control=LabInterface(name="ctl0", segment="mgmt", ip=f"{BUILDER_SUBNET}.1/24"),
                       apt_proxy=True)


def _stop_and_unmount(lab: str, host: str) -> Path:
    """Stop the builder host and unmount its overlay; returns its upper layer (now plain files)."""
    with _lock(lab):
        st = LabState.load(lab)
        d = st.host(host) or {}
        root = Path(d.get("root") or overlay.root_dir(lab, host))
        container.stop_many([(d.get("pid"), root, d.get("netns") or "")], grace=10,
                            cgroups=container.host_cgroups(lab, host))
        overlay.unmount_all(overlay.host_dir(lab, host))
        st.update_host(host, pid=None)
    return overlay.host_dir(lab, host) / "upper"


def build_layer(name: str, converge: Converge, *, progress: Progress | None = None,
                boot_timeout: float = 180) -> dict[str, Any]:
    """Image ``name``, built now unless it is already there. Returns its stamp (``cached`` says which)."""
    progress = progress or _noop
    if image.is_built(name):
        return {**(image.read_stamp(name) or {}), "cached": True}
    topology = builder_topology(name)
    started = time.monotonic()
    progress(None, f"image {name}: booting the builder ({topology.name})")
    down(topology.name, grace=0)  # a builder a killed run left behind: start clean
    try:
        result = up(topology, progress=progress, boot_timeout=boot_timeout)
        write_atomic(overlay.root_dir(topology.name, BUILDER_HOST) / UNSAFE_IO, "force-unsafe-io\n")
        meta = converge(result.ssh_config, BUILDER_HOST)
        converged = time.monotonic()
        upper = _stop_and_unmount(topology.name, BUILDER_HOST)
        image.capture(upper, name, {**meta, "converge_seconds": round(converged - started, 1)})
    finally:
        down(topology.name, grace=0)
    stamp = image.read_stamp(name)
    if stamp is None:
        raise LabError(f"image {name}: captured, but its stamp cannot be read")
    progress(None, f"image {name}: built in {time.monotonic() - started:.0f} s"
                   f" ({stamp.get('bytes', 0) / 2**20:.0f} MiB)")
    return {**stamp, "cached": False, "build_seconds": round(time.monotonic() - started, 1)}
