"""Rootfs cache key and mirror discovery (no root needed)."""

from __future__ import annotations

from clusterforge.lab import rootfs


def test_mirror_from_deb822_skips_security_and_comments(tmp_path):
    d = tmp_path / "sources.list.d"
    d.mkdir()
    (d / "debian.sources").write_text(
        "Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\n"
        "URIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\nComponents: main\n\n"
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n"
    )
    (d / "other.list").write_text("deb https://packages.example/apt cloud-sdk-bookworm main\n")
    assert rootfs.host_mirror("bookworm", tmp_path) == "http://mirror.example/debian"


def test_mirror_from_one_line_list(tmp_path):
    (tmp_path / "sources.list").write_text(
        "# comment\ndeb [arch=amd64] http://m.example/debian bookworm main\n"
        "deb http://security.debian.org/debian-security bookworm-security main\n"
    )
    assert rootfs.host_mirror("bookworm", tmp_path) == "http://m.example/debian"


def test_default_mirror_when_nothing_configured(tmp_path):
    assert rootfs.host_mirror("bookworm", tmp_path) == rootfs.DEFAULT_MIRROR


def test_stamp_hash_tracks_package_list_and_mirror():
    a = rootfs.wanted_stamp(packages=rootfs.PACKAGES, mirror="http://m/debian")
    b = rootfs.wanted_stamp(packages=tuple(reversed(rootfs.PACKAGES)), mirror="http://m/debian")
    c = rootfs.wanted_stamp(packages=rootfs.PACKAGES + ("vim-tiny",), mirror="http://m/debian")
    d = rootfs.wanted_stamp(packages=rootfs.PACKAGES, mirror="http://other/debian")
    assert a["hash"] == b["hash"]  # order does not matter
    assert len({a["hash"], c["hash"], d["hash"]}) == 3
