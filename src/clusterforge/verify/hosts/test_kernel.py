"""nouveau: blacklisted in /etc/modprobe.d (so the NVIDIA driver can bind the GPUs) and not loaded.

Loaded modules are read from /proc/modules (lsmod is missing on minimal images). In a container
/proc/modules is its host's kernel: "not loaded" then speaks for the machine the container runs on.
"""

from __future__ import annotations

import pytest

from clusterforge.verify.hosts._gates import HOST_KERNEL, unchecked
from clusterforge.verify.hosts._parsers import has_modprobe_directive


def test_nouveau_blacklisted(facts):
    assert has_modprobe_directive(facts.modprobe_text(), "blacklist nouveau"), (
        "no `blacklist nouveau` line in /etc/modprobe.d/*.conf"
    )


def test_nouveau_modeset_disabled(facts):
    assert has_modprobe_directive(facts.modprobe_text(), "options nouveau modeset=0"), (
        "no `options nouveau modeset=0` line in /etc/modprobe.d/*.conf"
    )


def test_nouveau_not_loaded(facts):
    modules = facts.read("/proc/modules")
    if modules is None:
        pytest.skip("/proc/modules is missing: this kernel loads no modules, so nouveau cannot be loaded as one")
    assert "nouveau" not in facts.proc_modules(), "nouveau is loaded (/proc/modules): reboot after blacklisting"


def test_initramfs_carries_nouveau_blacklist(facts):
    """The blacklist must be in the initramfs too, or nouveau loads from it at boot."""
    if facts.container():
        unchecked("the nouveau blacklist in the initramfs",
                  f"a {facts.container()} container boots no kernel and has no initramfs of its own", HOST_KERNEL)
    kernel = facts.run("uname -r").stdout.strip()
    if facts.which("lsinitramfs"):
        listing = facts.run("lsinitramfs /boot/initrd.img-%s", kernel)
    elif facts.which("lsinitrd"):
        listing = facts.run("lsinitrd /boot/initramfs-%s.img", kernel)
    else:
        pytest.fail("neither lsinitramfs (initramfs-tools) nor lsinitrd (dracut) is installed to read the initramfs")
    assert listing.rc == 0, f"cannot list the initramfs of kernel {kernel}: {listing.stderr.strip()[:200]}"
    assert any(line.rstrip().endswith(".conf") and "modprobe.d" in line and "nouveau" in line
               for line in listing.stdout.splitlines()), (
        f"the initramfs of kernel {kernel} has no modprobe.d nouveau blacklist: regenerate it"
    )
