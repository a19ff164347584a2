"""Golden image layers on real overlayfs: captured from a builder, booted by hosts, scrubbed of identity."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from lab_fixtures import leftovers, skip_reason

from clusterforge.lab import LabError, LabHost, LabInterface, LabSegment, LabTopology, down, image, overlay, rootfs, up
from clusterforge.lab.builder import BUILDER_HOST, UNSAFE_IO, build_layer, builder_topology

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


@pytest.fixture
def image_name():
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield name
    shutil.rmtree(image.image_dir(name), ignore_errors=True)


def _builder_layer(tmp_path: Path) -> Path:
    """An unmounted upper layer as a builder leaves it: a payload, its identity, a whiteout, caches."""
    upper = tmp_path / "upper"
    for rel, text in {"opt/payload/tool": "installed by the image\n", "etc/hostname": "builder\n",
                      "etc/machine-id": "0123456789abcdef0123456789abcdef\n", "root/.ssh/authorized_keys": "key\n",
                      "etc/ssh/ssh_host_ed25519_key": "secret\n", "var/log/journal/x/system.journal": "log\n",
                      "var/cache/apt/archives/cuda.deb": "deb\n"}.items():
        (upper / rel).parent.mkdir(parents=True, exist_ok=True)
        (upper / rel).write_text(text)
    (upper / "etc").mkdir(exist_ok=True)
    os.mknod(upper / "etc" / "motd", 0o600 | 0o020000, os.makedev(0, 0))  # a whiteout: the image removed motd
    return upper


def _base(tmp_path: Path) -> Path:
    base = tmp_path / "base"
    (base / "etc").mkdir(parents=True)
    (base / "etc" / "hostname").write_text("localhost\n")
    (base / "etc" / "motd").write_text("base motd\n")
    (base / "etc" / "machine-id").write_text("")
    return base


def test_capture_scrubs_identity_and_keeps_payload_and_whiteouts(tmp_path, image_name):
    layer = image.capture(_builder_layer(tmp_path), image_name, {"profile": {"x": 1}})
    assert image.is_built(image_name)
    assert (layer / "opt/payload/tool").read_text() == "installed by the image\n"
    for rel in ("etc/hostname", "etc/machine-id", "root/.ssh/authorized_keys", "etc/ssh/ssh_host_ed25519_key",
                "var/log/journal", "var/cache/apt/archives"):
        assert not os.path.lexists(layer / rel), rel
    assert os.stat(layer / "etc/motd", follow_symlinks=False).st_rdev == os.makedev(0, 0)
    stamp = image.read_stamp(image_name)
    assert stamp["name"] == image_name and stamp["profile"] == {"x": 1} and "etc/hostname" in stamp["scrubbed"]
    assert not list(layer.parent.parent.glob(f".{image_name}.tmp-*"))


def test_host_boots_layer_over_base_and_writes_only_its_own_layer(tmp_path, image_name):
    base = _base(tmp_path)
    image.capture(_builder_layer(tmp_path), image_name, {})
    lab = f"cfimg{uuid.uuid4().hex[:6]}"
    root, created = overlay.mount(lab, "h1", base, image.layers_for(image_name))
    try:
        assert created
        assert (root / "opt/payload/tool").read_text() == "installed by the image\n"
        assert (root / "etc/hostname").read_text() == "localhost\n"  # the base's, not the builder's
        assert not (root / "etc/motd").exists()  # the image's whiteout hides the base file
        assert rootfs.in_use(base) and rootfs.in_use(image.layer(image_name))
        # in use: kept (the other images of the cache are kept by name: the cache is shared with `make up`)
        others = {d.name for d in image.image_dir(image_name).parent.iterdir()} - {image_name}
        assert image_name not in image.prune(others)
        (root / "opt/payload/tool").write_text("changed on the host\n")
        assert (image.layer(image_name) / "opt/payload/tool").read_text() == "installed by the image\n"
        assert (overlay.host_dir(lab, "h1") / "upper/opt/payload/tool").read_text() == "changed on the host\n"
    finally:
        overlay.unmount_all(overlay.host_dir(lab, "h1"))
        down(lab)
    assert not rootfs.in_use(image.layer(image_name))


def test_a_host_cannot_boot_an_image_that_is_not_built():
    with pytest.raises(LabError, match="is not built"):
        image.layers_for("gpu-0000000000000000")


def test_builder_to_booted_host_end_to_end(tmp_path, image_name):
    """A real builder lab converges (over its SSH), is captured, and a host of another lab boots the image
    with its own identity; the builder lab is gone afterwards."""
    seen = {}

    def converge(ssh_config: Path, host: str) -> dict:
        def ssh(*cmd: str) -> str:
            return subprocess.run(["ssh", "-F", str(ssh_config), host, *cmd], check=True, capture_output=True,
                                  text=True, timeout=60).stdout

        ssh("mkdir -p /opt/cf-image && echo golden > /opt/cf-image/marker && rm -f /etc/motd")
        seen["machine_id"] = ssh("cat /etc/machine-id").strip()
        seen["unsafe_io"] = ssh(f"cat /{UNSAFE_IO}").strip()  # dpkg skips fsync on the builder only
        return {"marker": "golden"}

    stamp = build_layer(image_name, converge)
    assert stamp["cached"] is False and stamp["marker"] == "golden"
    assert seen["unsafe_io"] == "force-unsafe-io" and not os.path.lexists(image.layer(image_name) / UNSAFE_IO)
    assert not any(leftovers(builder_topology(image_name).name).values())
    assert build_layer(image_name, converge)["cached"] is True  # second call: from the cache

    lab = f"cfimg{uuid.uuid4().hex[:6]}"
    topology = LabTopology(
        name=lab, segments=(LabSegment(name="mgmt"),),
        hosts=(LabHost(name="node1", image=image_name,
                       interfaces=(LabInterface(name="mgmt0", segment="mgmt", ip="198.19.253.2/24"),)),),
        control=LabInterface(segment="mgmt", ip="198.19.253.1/24"))
    try:
        result = up(topology)
        run = lambda cmd: subprocess.run(["ssh", "-F", str(result.ssh_config), "node1", cmd],  # noqa: E731
                                         check=True, capture_output=True, text=True, timeout=60).stdout.strip()
        assert run("cat /opt/cf-image/marker") == "golden"
        assert run("hostname") == "node1"
        assert run("cat /etc/machine-id") not in ("", seen["machine_id"])
        assert run("test -e /etc/motd && echo yes || echo no") == "no"
    finally:
        down(lab)
    assert not any(leftovers(lab).values())
    assert BUILDER_HOST == "builder"
