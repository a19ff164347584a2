"""One file out of a Debian package, without installing the package on this machine.

``apt-get download`` fetches the .deb through this machine's apt sources (the only registry the lab may use)
into ``cache/debs``; ``dpkg-deb -x`` unpacks it beside; the one member wanted is copied out and renamed into
place whole, so an interrupted fetch leaves nothing that looks finished. Used for tools the lab runs or
puts into an image but that must not be installed here (a package that conflicts with an installed one,
or whose maintainer scripts would start a daemon that sets this machine's clock).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from clusterforge.hostio import HostError, run

__all__ = ["member_of"]


def member_of(cache: Path, package: str, member: str, name: str, mode: int = 0o755) -> Path:
    """``member`` (a path inside ``package``, e.g. ``usr/sbin/chronyd``) copied to ``cache/name``."""
    out = cache / name
    if out.is_file():
        return out
    debs = cache / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    if not list(debs.glob(f"{package}_*.deb")):
        got = subprocess.run(["apt-get", "download", package], cwd=debs, capture_output=True, text=True,
                             timeout=300)
        if got.returncode != 0:
            why = (got.stderr.strip().splitlines() or ["?"])[-1]
            raise HostError(f"apt-get download {package} failed: {why}")
    deb = sorted(debs.glob(f"{package}_*.deb"))[-1]
    unpack = cache / f"{name}.unpack"
    shutil.rmtree(unpack, ignore_errors=True)
    run(["dpkg-deb", "-x", deb, unpack])
    if not (unpack / member).is_file():
        shutil.rmtree(unpack, ignore_errors=True)
        raise HostError(f"{deb.name} has no {member}")
    tmp = cache / f".{name}.tmp"
    shutil.copyfile(unpack / member, tmp)
    os.chmod(tmp, mode)
    os.replace(tmp, out)
    shutil.rmtree(unpack, ignore_errors=True)
    return out
