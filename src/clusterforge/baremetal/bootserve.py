"""The provisioning network's HTTP and syslog end: preseeds out, installer progress in.

Runs on the boot interface (in the lab, its boot namespace: ``ip netns exec <ns> python -m
clusterforge.baremetal.bootserve ...``) beside
dnsmasq (DHCP + TFTP). It serves, to the address DHCP reserved for a host and no other, that
host's iPXE script (``GET /ipxe/boot.ipxe`` returns ``ipxe/<host>.ipxe``: iPXE asks for one URL, the
source address says who asks; served until that host's install calls back: a later boot of the
installed server finds no script and boots its disk), preseed (``preseed/<host>.cfg``) and disk image
(``image/<host>/manifest`` and its parts ``image/<host>/p0000.lzo``, ..., the image method), and to any
reserved address the netboot kernel and initrd (``netboot/linux``, ``netboot/initrd.gz``) and the deploy
ramdisk (``deploy/vmlinuz``, ``deploy/initrd.gz``); nothing else.
It takes the installer's
completion callback ``GET /done/<host>/<host key blob>`` (the
late_command's last step: the installed system's SSH host key, so the first SSH connection checks
it), and receives the installers' syslog (the netboot kernel's ``log_host``/``log_port``) on UDP.
Every event is one JSON line in ``events.jsonl``, which ``netinstall`` follows for progress:

    {"t": 1733100000.0, "host": "su01-r01-gpu01", "event": "fetch", "what": "preseed"}
    {"t": ..., "host": "...", "event": "syslog", "what": "main-menu: INFO: Menu item 'partman-base' selected"}
    {"t": ..., "host": "...", "event": "done", "what": "ssh-ed25519 AAAA..."}

    python -m clusterforge.baremetal.bootserve BIND_IP HTTP_PORT SYSLOG_PORT DIR HOSTS_JSON

HOSTS_JSON maps installer addresses to host names (the DHCP reservations), so a syslog line is
attributed by its source address, never by what it says.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from clusterforge.render.deploy import MANIFEST, is_part_name

__all__ = ["EVENTS", "read_events"]

EVENTS = "events.jsonl"
_NETBOOT = ("linux", "initrd.gz")
_DEPLOY = ("vmlinuz", "initrd.gz")  # the deploy ramdisk (image method: deploy_ramdisk)
_KEY_BLOB = re.compile(r"^[A-Za-z0-9+/]{40,700}={0,2}$")
_KEY_TYPE = "ssh-ed25519"
_MAX_SYSLOG = 512
_lock = threading.Lock()


def _record(events: Path, host: str, event: str, what: str) -> None:
    line = json.dumps({"t": time.time(), "host": host, "event": event, "what": what}) + "\n"
    with _lock, events.open("a") as out:
        out.write(line)


def read_events(directory: Path, offset: int = 0) -> tuple[list[dict[str, object]], int]:
    """Events written since byte ``offset`` and the new offset (whole lines only)."""
    path = directory / EVENTS
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n") + 1
    out = []
    for raw in data[:end].splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:
            continue
    return out, offset + end


class _Handler(BaseHTTPRequestHandler):
    server_version = "clusterforge-bootserve"
    root: Path
    hosts: dict[str, str]

    def log_message(self, fmt: str, *args) -> None:  # events.jsonl is the log
        return

    def _who(self) -> str:
        return self.hosts.get(self.client_address[0], "")

    def _send(self, path: Path, kind: str) -> None:
        size = path.stat().st_size
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        with path.open("rb") as handle:
            shutil.copyfileobj(handle, self.wfile, 1 << 20)

    def do_GET(self) -> None:
        parts = self.path.split("?", 1)[0].split("/")
        host = self._who()
        events = self.root / EVENTS
        if not host:
            self.send_error(403)
            return
        if parts == ["", "ipxe", "boot.ipxe"] and (self.root / "ipxe" / f"{host}.ipxe").is_file():
            self._send(self.root / "ipxe" / f"{host}.ipxe", "text/plain")
            _record(events, host, "fetch", "ipxe script")
        elif parts == ["", "preseed", f"{host}.cfg"] and (self.root / "preseed" / f"{host}.cfg").is_file():
            self._send(self.root / "preseed" / f"{host}.cfg", "text/plain")
            _record(events, host, "fetch", "preseed")
        elif len(parts) == 3 and parts[1] == "netboot" and parts[2] in _NETBOOT:
            self._send(self.root / "netboot" / parts[2], "application/octet-stream")
            _record(events, host, "fetch", parts[2])
        elif len(parts) == 3 and parts[1] == "deploy" and parts[2] in _DEPLOY \
                and (self.root / "deploy" / parts[2]).is_file():
            self._send(self.root / "deploy" / parts[2], "application/octet-stream")
            _record(events, host, "fetch", f"deploy {parts[2]}")
        elif (len(parts) == 4 and parts[1] == "image" and parts[2] == host
              and (parts[3] == MANIFEST or is_part_name(parts[3]))
              and (self.root / "image" / host / parts[3]).is_file()):  # a server's disk image: to that server only
            if parts[3] == MANIFEST:  # the parts' progress comes from the ramdisk's own steps
                _record(events, host, "fetch", "image manifest")
            self._send(self.root / "image" / host / parts[3], "application/octet-stream")
        elif len(parts) >= 4 and parts[1] == "done" and parts[2] == host and _KEY_BLOB.match("/".join(parts[3:])):
            # (a base64 key blob may hold '/': the rest of the path is the blob)
            # disarm: the installer reboots next, and a BMC may keep the network boot (sushy-tools keeps a
            # Once override as Continuous); iPXE then finds no script and the firmware boots the disk
            (self.root / "ipxe" / f"{host}.ipxe").unlink(missing_ok=True)
            _record(events, host, "done", f"{_KEY_TYPE} {'/'.join(parts[3:])}")
            self.send_response(204)
            self.end_headers()
        else:
            self.send_error(404)


def _syslog(bind_ip: str, port: int, root: Path, hosts: dict[str, str]) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((bind_ip, port))
    while True:
        data, (addr, _) = sock.recvfrom(4096)
        host = hosts.get(addr)
        if host is None:
            continue
        text = data.decode("utf-8", "replace")
        text = re.sub(r"^<\d+>", "", text)  # syslog priority
        text = "".join(c if c.isprintable() else " " for c in text).strip()[:_MAX_SYSLOG]
        _record(root / EVENTS, host, "syslog", text)


def serve(bind_ip: str, http_port: int, syslog_port: int, root: Path, hosts: dict[str, str]) -> None:
    threading.Thread(target=_syslog, args=(bind_ip, syslog_port, root, hosts), daemon=True).start()
    handler = type("Handler", (_Handler,), {"root": root, "hosts": hosts})
    server = ThreadingHTTPServer((bind_ip, http_port), handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), json.loads(sys.argv[5]))
