"""Golden image layers: what the roles install once, captured as an overlay layer hosts boot from.

Large clusters do not install a CUDA toolkit on every node: they build an image once and boot every
node from it, then converge the per-host rest. The lab does the same with overlayfs. A builder host
boots from the base rootfs, the image playbook runs the roles on it over SSH, and the builder's upper
layer — everything the roles wrote, with the builder's identity scrubbed — becomes
``.lab/images/<name>/layer``. Hosts whose LabHost names that image mount it between the base rootfs
and their own upper layer (``lowerdir=<layer>:<rootfs>``).

A layer is content-addressed by its caller (the name is a hash of the roles, the image's variables
and the base rootfs), never changed once captured (overlayfs forbids changing a lower layer under a
mount), and renamed into place whole: a half-built image is never used. Images are a cache like the
rootfs: ``lab down`` keeps them; :func:`prune` removes those no lab uses.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from .rootfs import in_use
from .util import LabError, lab_home, write_atomic

__all__ = ["SCRUB", "capture", "image_dir", "is_built", "layer", "layers_for", "prune", "read_stamp", "scrub"]

STAMP = "image.json"
# What a builder leaves in its upper layer that belongs to the builder, not the image: its identity
# (overlay.prepare writes these per host), logs, caches and temporary files. Relative to the root.
SCRUB = (
    "etc/hostname", "etc/hosts", "etc/machine-id", "etc/ssh/ssh_host_ed25519_key",
    "etc/ssh/ssh_host_ed25519_key.pub", "root/.ssh/authorized_keys", "root/.ansible",
    "etc/apt/apt.conf.d/01clusterforge-proxy", "var/log/journal", "var/cache/apt/archives", "tmp", "var/tmp", "run",
    "var/lib/systemd/random-seed", "var/lib/dbus/machine-id", "etc/dpkg/dpkg.cfg.d/clusterforge-image-build",
    # the key the munge package generates at install, and munged's PRNG seed: secrets never go into an image
    # (the Slurm roles write the cluster's key on each host)
    "etc/munge/munge.key", "var/lib/munge/munged.seed",
    # what the builder's Prometheus and Alertmanager (started by their packages) stored: its own samples and
    # alert state, never a host's (the directories, owned by the prometheus user, stay)
    "var/lib/prometheus/metrics2/wal", "var/lib/prometheus/metrics2/chunks_head", "var/lib/prometheus/metrics2/lock",
    "var/lib/prometheus/metrics2/queries.active", "var/lib/prometheus/alertmanager/nflog",
    "var/lib/prometheus/alertmanager/silences",
)  # fmt: skip


def image_dir(name: str) -> Path:
    return lab_home() / "images" / name


def layer(name: str) -> Path:
    return image_dir(name) / "layer"


def read_stamp(name: str) -> dict[str, Any] | None:
    try:
        return json.loads((image_dir(name) / STAMP).read_text())
    except (OSError, ValueError):
        return None


def is_built(name: str) -> bool:
    """True when the image's layer is in place and stamped (a capture that finished)."""
    stamp = read_stamp(name)
    return stamp is not None and stamp.get("name") == name and layer(name).is_dir()


def layers_for(image: str | None) -> tuple[Path, ...]:
    """The overlay lower layers above the base rootfs for a host booting ``image`` (none for None)."""
    if image is None:
        return ()
    if not is_built(image):
        raise LabError(f"image {image} is not built (no {layer(image)}); build it first"
                       " (`clusterforge lab image INVENTORY`, or `clusterforge up`, which builds it)")
    return (layer(image),)


def _remove(path: Path) -> None:
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    elif os.path.lexists(path):  # a whiteout (character device 0/0) or another special file
        os.unlink(path)


def scrub(upper: Path) -> list[str]:
    """Remove the builder's identity, logs and caches from its (unmounted) upper layer.

    Removing a file from the upper layer shows the base rootfs's file again (the base carries none
    of a host's identity); a whiteout for it is removed too. Returns what was removed."""
    gone = []
    for rel in SCRUB:
        path = upper / rel
        if os.path.lexists(path):
            _remove(path)
            gone.append(rel)
    return gone


def capture(upper: Path, name: str, meta: dict[str, Any]) -> Path:
    """Turn a stopped builder's upper layer into image ``name`` (moved, not copied). Returns the layer.

    ``upper`` must not be mounted any more. The layer is scrubbed, then the image directory is
    renamed into place with its stamp; an existing image of that name is kept (built concurrently)."""
    if not upper.is_dir():
        raise LabError(f"no builder layer at {upper}")
    final = image_dir(name)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{name}.tmp-{os.getpid()}"
    _remove(tmp)
    tmp.mkdir()
    try:
        removed = scrub(upper)
        os.rename(upper, tmp / "layer")
        size = sum(f.stat().st_size for f in (tmp / "layer").rglob("*") if f.is_file() and not f.is_symlink())
        stamp = {**meta, "name": name, "captured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "bytes": size, "scrubbed": removed}
        write_atomic(tmp / STAMP, json.dumps(stamp, indent=2, sort_keys=True) + "\n")
        if is_built(name):
            _remove(tmp)
            return layer(name)
        _remove(final)  # a stale, unstamped directory from a capture that died
        os.rename(tmp, final)
    except BaseException:
        _remove(tmp)
        raise
    return layer(name)


def prune(keep: set[str]) -> list[str]:
    """Remove every image not in ``keep`` that no overlay mount uses. Returns the removed names."""
    root = lab_home() / "images"
    if not root.is_dir():
        return []
    removed = []
    for d in sorted(root.iterdir()):
        if d.name in keep or in_use(d / "layer"):
            continue
        _remove(d)
        removed.append(d.name)
    return removed
