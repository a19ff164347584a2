"""Waiting for a network install: progress from the installer, the bounded wait, and SSH afterwards.

The boot server (``bootserve``) writes what each installer fetched, its syslog and its completion
callback to ``events.jsonl``; ``wait_installed`` follows that file for one server and turns the
installer's steps (debian-installer's main-menu items, or the deploy ramdisk's ``cf-deploy:`` lines) into
progress lines. It ends when the callback
arrives (the installed system's SSH host key), or raises ``InstallError`` — one line naming the server —
when the deadline passes, when the server's power goes off before the callback (``powered`` says so:
the BMC's power state), or when it is interrupted. ``ssh_entry`` then writes the host's known_hosts line
and ssh_config block (in the lab's ``ssh_config.d``, which the lab's ssh_config includes), and
``wait_ssh`` waits for its sshd on the management address, checking that host key.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from clusterforge.hostio import HostError, Progress, quiet, state_dir, write_atomic
from clusterforge.render.netboot_values import hostname, ipv4, ssh_public_key

from . import bootserve
from .bootnet import boot_dir

__all__ = ["InstallError", "STEPS", "wait_installed", "ssh_entry", "wait_ssh", "ssh_conf_dir", "events_offset"]

# debian-installer main-menu items (their udeb names) as the progress line says them
STEPS = {
    "download-installer": "loading installer components",
    "netcfg": "configuring the network",
    "network-preseed": "reading the preseed",
    "partman-base": "partitioning the disk",
    "bootstrap-base": "installing the base system",
    "apt-setup-udeb": "configuring apt (through the lab's apt proxy)",
    "pkgsel": "installing packages",
    "grub-installer": "installing the boot loader",
    "finish-install": "finishing the installation",
}
_MENU = re.compile(r"main-menu\[\d+\]: INFO: Menu item '([a-z0-9-]+)' selected")
# the deploy ramdisk's own lines (image method: deploy_ramdisk)
_DEPLOY_STEP = re.compile(r"cf-deploy: step: (.+)$")
_DEPLOY_FAILED = re.compile(r"cf-deploy: FAILED: (.+)$")
_FETCHED = {"preseed": "preseed fetched", "ipxe script": "netbooting (iPXE)", "linux": "loading the installer kernel",
            "initrd.gz": "loading the installer initrd", "deploy vmlinuz": "loading the deploy kernel",
            "deploy initrd.gz": "loading the deploy ramdisk", "image manifest": "fetching the image manifest",
            "image head": "writing the GPT and the ESP", "image root": "streaming the root file system",
            "image tail": "writing the backup GPT"}  # fmt: skip (head/root/tail: recordings of format 1 and 2)
_URL = re.compile(r"(?:anna|net-retriever|wget)\[\d+\]: (http://\S+?):?$")
# what the installer logs when it cannot go on (with priority=critical it would stop at a dialog and wait)
_FATAL = (
    (re.compile(r"anna\[\d+\]: WARNING \*\*: package retrieval failed"),
     "could not download its components (udebs) through the apt proxy"),
    (re.compile(r"main-menu\[\d+\]: WARNING \*\*: Configuring '([a-z0-9-]+)' failed"), "failed configuring {0}"),
)


def _fetched(what: str) -> str:
    """The step a boot server fetch starts; an image part by its stem (``image root.lzo``: recordings of the
    gzip parts, ``image root.gz``, read the same)."""
    return _FETCHED.get(what.rsplit(".", 1)[0] if what.startswith("image ") else what, what)


class InstallError(HostError):
    """An install that did not finish: one line naming the server."""


def ssh_conf_dir(lab: str) -> Path:
    return state_dir(lab) / "ssh_config.d"


def events_offset(lab: str) -> int:
    """Where ``events.jsonl`` ends now: a wait started after a new boot reads only what follows."""
    try:
        return (boot_dir(lab) / bootserve.EVENTS).stat().st_size
    except FileNotFoundError:
        return 0


def wait_installed(lab: str, host: str, *, timeout_s: float, powered: Callable[[], bool | None],
                   offset: int = 0, progress: Progress = quiet, poll_s: float = 2.0,
                   power_every_s: float = 10.0) -> str:
    """Block until ``host``'s installer calls back; returns its SSH host public key."""
    directory = boot_dir(lab)
    start = time.monotonic()
    last_step = "waiting for the server to netboot"
    last_url = last_error = ""
    next_power = start + power_every_s
    progress(host, f"install: {last_step} (timeout {timeout_s:.0f} s)")
    while True:
        events, offset = bootserve.read_events(directory, offset)
        for ev in events:
            if ev.get("host") != host:
                continue
            kind, what = ev.get("event"), str(ev.get("what", ""))
            if kind == "done":
                secs = time.monotonic() - start
                progress(host, f"install: finished in {secs:.0f} s; the installed system reported its host key")
                return ssh_public_key(f"{host}.host_key", what)
            if kind == "fetch":
                last_step = _fetched(what)
                progress(host, f"install: {last_step} ({time.monotonic() - start:.0f} s)")
            elif kind == "syslog":
                failed = _DEPLOY_FAILED.search(what)
                if failed:
                    raise InstallError(f"{host}: the deploy ramdisk stopped: {failed.group(1)} (last step:"
                                       f" {last_step}); the next `up` installs it again")
                step = _DEPLOY_STEP.search(what)
                if step:
                    last_step = step.group(1)
                    progress(host, f"install: {last_step} ({time.monotonic() - start:.0f} s)")
                m = _MENU.search(what)
                if m and m.group(1) in STEPS:
                    last_step = STEPS[m.group(1)]
                    progress(host, f"install: {last_step} ({time.monotonic() - start:.0f} s)")
                url = _URL.search(what)
                if url:
                    last_url = url.group(1)
                for pattern, why in _FATAL:
                    fatal = pattern.search(what)
                    if fatal:
                        detail = f" (last: {last_url}{', ' + last_error if last_error else ''})" if last_url else ""
                        raise InstallError(f"{host}: the installer {why.format(*fatal.groups())} while"
                                           f" {last_step}{detail}; the next `up` installs it again")
                if "ERROR " in what and re.search(r"ERROR \d{3}", what):
                    last_error = what[what.index("ERROR "):].strip()
        now = time.monotonic()
        if now - start > timeout_s:
            raise InstallError(f"{host}: the install did not finish within {timeout_s:.0f} s"
                               f" (last step: {last_step}); the next `up` installs it again")
        if now >= next_power:
            next_power = now + power_every_s
            if powered() is False:
                raise InstallError(f"{host}: powered off during the install (last step: {last_step});"
                                   " the next `up` installs it again")
        time.sleep(poll_s)


def ssh_entry(lab: str, host: str, ip: str, host_key: str, identity: Path) -> Path:
    """known_hosts and an ssh_config block for an installed server (the lab's ssh_config includes it)."""
    name, address = hostname("host", host), ipv4(f"{host}.management", ip)
    kind, blob = ssh_public_key(f"{host}.host_key", host_key).split()[:2]
    conf_dir = ssh_conf_dir(lab)
    known = conf_dir / f"{name}.known_hosts"
    write_atomic(known, f"{name},{address} {kind} {blob}\n", 0o644)
    block = "\n".join([
        f"# clusterforge lab {lab}: bare-metal server {name} (generated, do not edit)",
        f"Host {name} {address}",
        f"  HostName {address}",
        f"  HostKeyAlias {name}",
        "  User root",
        f"  IdentityFile {identity}",
        "  IdentitiesOnly yes",
        f"  UserKnownHostsFile {known}",
        "  GlobalKnownHostsFile /dev/null",
        "  StrictHostKeyChecking yes",
        "  PasswordAuthentication no",
        "  BatchMode yes",
        "  ConnectTimeout 10",
        "  LogLevel ERROR",
        "",
    ])  # fmt: skip
    conf = conf_dir / f"{name}.conf"
    write_atomic(conf, block, 0o644)
    return conf


def remove_ssh_entry(lab: str, host: str) -> None:
    for suffix in (".conf", ".known_hosts"):
        (ssh_conf_dir(lab) / f"{host}{suffix}").unlink(missing_ok=True)


def wait_ssh(lab: str, host: str, *, timeout_s: float = 300, progress: Progress = quiet) -> float:
    """Seconds until ``ssh HOST true`` succeeds with the recorded host key (the first boot of the
    installed system); raises ``InstallError`` naming the host after ``timeout_s``."""
    conf = ssh_conf_dir(lab) / f"{host}.conf"
    start = time.monotonic()
    while True:
        try:
            done = subprocess.run(["ssh", "-F", str(conf), host, "true"], capture_output=True, text=True,
                                  timeout=30, stdin=subprocess.DEVNULL)
            if done.returncode == 0:
                secs = time.monotonic() - start
                progress(host, f"install: sshd of the installed system answers ({secs:.0f} s after the install)")
                return secs
            why = (done.stderr.strip().splitlines() or ["no answer"])[-1]
        except subprocess.TimeoutExpired:
            why = "ssh timed out"
        if time.monotonic() - start > timeout_s:
            raise InstallError(f"{host}: installed, but its sshd did not answer within {timeout_s:.0f} s ({why})")
        time.sleep(3)


if __name__ == "__main__":  # python -m clusterforge.baremetal.netinstall LAB HOST TIMEOUT: follow one install
    print(wait_installed(sys.argv[1], sys.argv[2], timeout_s=float(sys.argv[3]), powered=lambda: None,
                         progress=lambda h, m: print(f"{h}: {m}", flush=True)))
