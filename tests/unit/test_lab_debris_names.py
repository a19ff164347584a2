"""The names by which `lab.debris` finds a killed lab's objects (pure parsing; the lab itself is in
tests/lab/test_lab_debris.py)."""

from __future__ import annotations

from pathlib import Path

from clusterforge.lab.debris import _alias_lab, lab_mounts

MOUNTS = """\
cf-lab-su01-r01-gpu01 /srv/a/.lab/lab/hosts/su01-r01-gpu01/root overlay rw,lowerdir=/srv/a/.lab/rootfs/bookworm 0 0
cf-lab-stor-001 /tmp/gone\\040clone/.lab-test/lab/hosts/stor-001/root overlay rw,lowerdir=x 0 0
cf-lab2-node1 /srv/a/.lab/lab2/hosts/node1/root overlay rw,lowerdir=x 0 0
cf-lab-node9 /srv/a/.lab/lab/hosts/node9/root ext4 rw 0 0
other /srv/a/.lab/lab/hosts/node3/root overlay rw,lowerdir=x 0 0
cf-lab-node4 /srv/a/.lab/lab/hosts/node4/upper overlay rw,lowerdir=x 0 0
"""


def test_lab_mounts_are_the_labs_overlay_roots_in_any_home():
    assert lab_mounts("lab", MOUNTS) == [Path("/srv/a/.lab/lab/hosts/su01-r01-gpu01/root"),
                                         Path("/tmp/gone clone/.lab-test/lab/hosts/stor-001/root")]
    assert lab_mounts("lab2", MOUNTS) == [Path("/srv/a/.lab/lab2/hosts/node1/root")]
    assert lab_mounts("la", MOUNTS) == []


def test_a_link_alias_names_its_lab():
    assert _alias_lab("cf:lab:segment=mgmt") == "lab"
    assert _alias_lab("cf:img-gpu-1a2b:node1/mgmt0") == "img-gpu-1a2b"
    assert _alias_lab("cf::x") is None
    assert _alias_lab("cf:lab") is None
    assert _alias_lab("uplink to rack 3") is None
    assert _alias_lab("") is None
