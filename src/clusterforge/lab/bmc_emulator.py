"""The lab server's BMC: sushy-tools' Redfish emulator over the lab libvirtd, on the server's oob address.

``start_bmc`` gives the BMC a network namespace of its own (``cf-<lab>.bmc-<server>``) whose ``bmc0`` (a veth)
carries the planned oob address and whose other end is a port of the caller's oob bridge, then runs
``sushy-emulator`` in it: HTTPS with a certificate from the lab CA (lab/bmc_pki.py), HTTP basic auth from an
htpasswd file (bcrypt; the password itself is written nowhere), the libvirt driver limited to this server's
domain. Its power, boot-device and BIOS calls act on the real VM: power on starts QEMU, a Pxe boot device
makes OVMF network-boot. (The emulator keeps BIOS attributes in the domain's metadata: OVMF has no such
settings; it applies them at once, so a pending state is never seen; it treats a one-time boot override
as continuous; it has no LogServices.)

Runtime files live in ``.lab/<lab>/metal/<server>/bmc/``: ``bmc.json`` (pid, netns, link, url), the config,
the certificate and key, ``htpasswd`` (0600), ``emulator.log``. ``stop_bmc`` undoes everything; it needs no
state (it finds the process by its config path and the namespace and link by name).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import bcrypt

from . import bmc_pki, libvirtd, names, netns
from .metal_vm import OVMF_CODE, OVMF_VARS, MetalVm, vm_dir
from .util import LabError, run, write_atomic

__all__ = ["BmcHandle", "bmc_netns", "bmc_link", "start_bmc", "stop_bmc", "freeze_bmc", "thaw_bmc", "emulator_pids",
           "READY_TIMEOUT_S"]

READY_TIMEOUT_S = 30.0
NS_IFACE = "bmc0"


@dataclass(frozen=True)
class BmcHandle:
    lab: str
    server: str
    url: str
    address: str
    netns: str
    pid: int
    ca_file: Path
    username: str


def bmc_netns(lab: str, server: str) -> str:
    return names.netns_name(lab, f"bmc-{server}")


def bmc_link(lab: str, server: str) -> str:
    """Root-namespace end of the BMC's veth (``cf<tag>m<hash>``, 15 bytes)."""
    return f"{names.link_prefix(lab)}m{hashlib.sha256(f'bmc{chr(0)}{server}'.encode()).hexdigest()[:7]}"


def _run_dir(lab: str, server: str) -> Path:
    return vm_dir(lab, server) / "bmc"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def emulator_pids(config: Path | None = None) -> list[int]:
    """sushy-emulator processes of a lab BMC (this config's, else any lab's)."""
    marker = str(config) if config else "/metal/"
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            cmd = _cmdline(int(entry.name))
            if "sushy-emulator" in cmd and "--config" in cmd and marker in cmd and "bmc/emulator.conf" in cmd:
                out.append(int(entry.name))
    return out


def _config(vm: MetalVm, address: str, port: int, cert: Path, key: Path, htpasswd: Path) -> str:
    settings = {
        "SUSHY_EMULATOR_LISTEN_IP": address,
        "SUSHY_EMULATOR_LISTEN_PORT": port,
        "SUSHY_EMULATOR_SSL_CERT": str(cert),
        "SUSHY_EMULATOR_SSL_KEY": str(key),
        "SUSHY_EMULATOR_AUTH_FILE": str(htpasswd),
        "SUSHY_EMULATOR_LIBVIRT_URI": libvirtd.uri(vm.lab),
        "SUSHY_EMULATOR_ALLOWED_INSTANCES": [vm.uuid, vm.domain],
        "SUSHY_EMULATOR_FEATURE_SET": "full",
        "SUSHY_EMULATOR_BOOT_LOADER_MAP": {"UEFI": {"x86_64": str(OVMF_CODE)}, "Legacy": {"x86_64": None}},
        "SUSHY_EMULATOR_SECURE_BOOT_DISABLED_NVRAM": str(OVMF_VARS),
    }
    lines = [f"{k} = {v!r}" for k, v in settings.items()]
    return "# clusterforge lab BMC (lab/bmc_emulator.py); no secret in here\n" + "\n".join(lines) + "\n"


def _plumb(lab: str, server: str, address_cidr: str, bridge: str, gateway: str | None) -> str:
    ns = bmc_netns(lab, server)
    if not Path(f"/sys/class/net/{bridge}/bridge").is_dir():
        raise LabError(f"{server}: oob bridge {bridge!r} does not exist")
    netns.ensure(ns)
    link = bmc_link(lab, server)
    have = run(["ip", "-n", ns, "link", "show", NS_IFACE], check=False).returncode == 0
    if not have:
        run(["ip", "link", "del", "dev", link], check=False)
        run(["ip", "link", "add", "name", link, "type", "veth", "peer", "name", NS_IFACE, "netns", ns])
        run(["ip", "link", "set", "dev", link, "alias", names.alias(lab, f"bmc/{server}")])
    run(["ip", "link", "set", "dev", link, "master", bridge, "up"])
    run(["ip", "-n", ns, "link", "set", "dev", NS_IFACE, "up"])
    if address_cidr not in run(["ip", "-n", ns, "-o", "addr", "show", "dev", NS_IFACE]).stdout:
        run(["ip", "-n", ns, "addr", "add", address_cidr, "dev", NS_IFACE])
    if gateway:
        run(["ip", "-n", ns, "route", "replace", "default", "via", gateway])
    return ns


def _wait_ready(url: str, ca: Path, pid: int, log: Path) -> None:
    import requests

    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            break
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{url}/redfish/v1/", verify=str(ca), timeout=2).status_code == 200:
                return
        time.sleep(0.25)
    tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
    raise LabError(f"{url}: the lab BMC emulator did not come up within {READY_TIMEOUT_S:g} s: {' | '.join(tail)}")


def start_bmc(vm: MetalVm, *, address_cidr: str, bridge: str, username: str, password: str, port: int = 443,
              gateway: str | None = None) -> BmcHandle:
    """Start (or find running) the BMC of ``vm`` at ``address_cidr`` on ``bridge``; returns when it answers."""
    address = address_cidr.split("/")[0]
    where = _run_dir(vm.lab, vm.server)
    where.mkdir(parents=True, exist_ok=True)
    conf = where / "emulator.conf"
    url = f"https://{address}" if port == 443 else f"https://{address}:{port}"
    ns = _plumb(vm.lab, vm.server, address_cidr, bridge, gateway)
    ca = bmc_pki.ensure_ca()
    htpasswd = where / "htpasswd"
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=6)).decode()
    old = emulator_pids(conf)
    if old and htpasswd.exists() and _same_login(htpasswd, username, password):
        return BmcHandle(vm.lab, vm.server, url, address, ns, old[0], ca, username)
    _kill(old)
    write_atomic(htpasswd, f"{username}:{hashed}\n", mode=0o600)  # the emulator reads it on every request
    cert, key = bmc_pki.issue_server_cert(address, where)
    write_atomic(conf, _config(vm, address, port, cert, key, htpasswd))
    emulator = Path(sys.executable).parent / "sushy-emulator"
    if not emulator.exists():
        raise LabError(f"{vm.server}: {emulator} not found (scripts/setup.sh installs the `lab` extra)")
    log = where / "emulator.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(["ip", "netns", "exec", ns, str(emulator), "--config", str(conf)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True, cwd=where)
    _wait_ready(url, ca, proc.pid, log)
    pids = emulator_pids(conf)
    write_atomic(where / "bmc.json", json.dumps({"pid": pids[0] if pids else proc.pid, "netns": ns, "url": url,
                                                 "link": bmc_link(vm.lab, vm.server)}) + "\n")
    return BmcHandle(vm.lab, vm.server, url, address, ns, pids[0] if pids else proc.pid, ca, username)


def _same_login(htpasswd: Path, username: str, password: str) -> bool:
    with contextlib.suppress(OSError, ValueError):
        user, _, hashed = htpasswd.read_text().strip().partition(":")
        return user == username and bcrypt.checkpw(password.encode(), hashed.encode())
    return False


def _kill(pids: list[int], grace_s: float = 3.0) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGCONT)  # a frozen one (freeze_bmc) must be able to die
            os.kill(p, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.05)
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)


def stop_bmc(lab: str, server: str, *, keep_network: bool = False) -> bool:
    """Stop the emulator; unless keep_network, remove its namespace and veth too. True when something was there."""
    conf = _run_dir(lab, server) / "emulator.conf"
    pids = emulator_pids(conf)
    _kill(pids)
    found = bool(pids)
    if not keep_network:
        ns, link = bmc_netns(lab, server), bmc_link(lab, server)
        found |= run(["ip", "link", "del", "dev", link], check=False).returncode == 0
        if netns.exists(ns):
            netns.delete(ns)
            found = True
        (_run_dir(lab, server) / "bmc.json").unlink(missing_ok=True)
    return found


def freeze_bmc(lab: str, server: str) -> list[int]:
    """Stop the emulator's process (SIGSTOP): its socket accepts connections and nothing answers (a hung BMC)."""
    pids = emulator_pids(_run_dir(lab, server) / "emulator.conf")
    for p in pids:
        os.kill(p, signal.SIGSTOP)
    return pids


def thaw_bmc(lab: str, server: str) -> None:
    for p in emulator_pids(_run_dir(lab, server) / "emulator.conf"):
        os.kill(p, signal.SIGCONT)
