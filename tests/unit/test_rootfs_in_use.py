"""rootfs.in_use: a layer is in use when an overlay names it as a lower layer, by any path that
resolves to it (lab homes reach the shared caches through symlinks)."""

from __future__ import annotations

import os

from clusterforge.lab.rootfs import in_use


def _mounts(lower: str) -> str:
    return f"cf-lab-n1 /h/lab/hosts/n1/root overlay rw,relatime,lowerdir={lower},upperdir=/u,workdir=/w 0 0\n"


def test_a_layer_named_through_a_symlinked_home_is_in_use(tmp_path):
    real = tmp_path / "shared" / "images" / "gpu-1" / "layer"
    real.mkdir(parents=True)
    home = tmp_path / "home-test"
    home.mkdir()
    os.symlink(tmp_path / "shared" / "images", home / "images")
    via_link = home / "images" / "gpu-1" / "layer"
    assert in_use(via_link, _mounts(f"{real}:/base"))
    assert in_use(real, _mounts(f"{via_link}:/base"))
    assert not in_use(real.parent, _mounts(f"{via_link}:/base"))
    assert not in_use(tmp_path / "shared" / "images" / "gpu-2" / "layer", _mounts(f"{real}:/base"))


def test_escaped_spaces_in_mounts_are_read_as_the_path(tmp_path):
    layer = tmp_path / "a b" / "layer"
    layer.mkdir(parents=True)
    escaped = str(layer).replace(" ", "\\040")
    assert in_use(layer, _mounts(f"{escaped}:/base"))
    assert not in_use(layer, "tmpfs /run tmpfs rw 0 0\n")
