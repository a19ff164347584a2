"""A caching HTTP proxy for the lab hosts' apt: they have no route out, this machine does.

Runs as a detached process bound to the control address (port 3142, apt-cacher's), serves only
the Debian mirrors this machine's apt uses, and keeps every .deb it fetched under
.lab/aptcache so four hosts installing the CUDA toolkit download it once. Index files
(InRelease, Packages) are always fetched fresh.

    python -m clusterforge.lab.aptproxy BIND_IP PORT CACHE_DIR ALLOWED_HOST...
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from clusterforge.baremetal.bootnet import INSTALLER_PROXY_PORT

__all__ = ["PORT", "start", "stop", "apt_conf", "serving_on"]

PORT = INSTALLER_PROXY_PORT  # the port the bare-metal installer asks on the provisioning subnet
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def apt_conf(bind_ip: str, port: int = PORT) -> str:
    return f'Acquire::http::Proxy "http://{bind_ip}:{port}/";\nAcquire::https::Proxy "DIRECT";\n'


def _lock(key: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


class _Handler(BaseHTTPRequestHandler):
    server_version = "clusterforge-aptproxy"
    cache: Path
    allowed: frozenset[str]

    def log_message(self, fmt: str, *args) -> None:  # quiet: one line per request would flood CI logs
        return

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _serve(self, head: bool) -> None:
        url = self.path
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname not in self.allowed:
            self.send_error(403, f"not a Debian mirror this lab may reach: {parts.hostname}")
            return
        if parts.path.endswith(".deb"):
            cached = self.cache / hashlib.sha256(url.encode()).hexdigest()
            with _lock(url):
                if not cached.exists() and not self._fetch_to(url, cached):
                    return
            self._send_file(cached, head)
            return
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method="HEAD" if head else "GET"),
                                        timeout=60) as upstream:
                self.send_response(upstream.status)
                for key in ("Content-Type", "Content-Length", "Last-Modified", "ETag"):
                    if upstream.headers.get(key):
                        self.send_header(key, upstream.headers[key])
                self.end_headers()
                if not head:
                    shutil.copyfileobj(upstream, self.wfile, 1 << 20)
        except urllib.error.HTTPError as exc:
            self.send_error(exc.code, exc.reason)
        except (OSError, urllib.error.URLError) as exc:
            self.send_error(502, f"upstream: {exc}")

    def _fetch_to(self, url: str, cached: Path) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=120) as upstream:
                fd, tmp = tempfile.mkstemp(dir=self.cache, prefix=".part-")
                with os.fdopen(fd, "wb") as out:
                    shutil.copyfileobj(upstream, out, 1 << 20)
                os.replace(tmp, cached)
            return True
        except urllib.error.HTTPError as exc:
            self.send_error(exc.code, exc.reason)
        except (OSError, urllib.error.URLError) as exc:
            self.send_error(502, f"upstream: {exc}")
        return False

    def _send_file(self, path: Path, head: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.debian.binary-package")
        self.send_header("Content-Length", str(path.stat().st_size))
        self.end_headers()
        if not head:
            with path.open("rb") as handle:
                shutil.copyfileobj(handle, self.wfile, 1 << 20)


def serve(bind_ip: str, port: int, cache: Path, allowed: list[str]) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    handler = type("Handler", (_Handler,), {"cache": cache, "allowed": frozenset(allowed)})
    server = ThreadingHTTPServer((bind_ip, port), handler)
    server.daemon_threads = True
    def _on_term(*_: object) -> None:
        server.server_close()
        sys.exit(0)

    signal.signal(signal.SIGTERM, _on_term)
    server.serve_forever()


def start(bind_ip: str, cache: Path, allowed: list[str], log: Path, port: int = PORT) -> int:
    """Start the proxy detached (its own session); returns its PID once it accepts connections."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "clusterforge.lab.aptproxy", bind_ip, str(port), str(cache), *allowed],
            stdout=out, stderr=out, stdin=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    import socket

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"apt proxy exited with {proc.returncode}; see {log}")
        try:
            socket.create_connection((bind_ip, port), timeout=0.5).close()
            return proc.pid
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"apt proxy did not listen on {bind_ip}:{port}; see {log}")


def stop(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    if b"clusterforge.lab.aptproxy" not in cmdline:
        return False  # the PID was reused by something else
    os.kill(pid, signal.SIGTERM)
    return True


def serving_on(bind_ips: set[str]) -> list[int]:
    """PIDs of proxies bound to any of ``bind_ips`` (found by command line: a lab's state may be gone)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            argv = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"clusterforge.lab.aptproxy" in argv:
            i = argv.index(b"clusterforge.lab.aptproxy")
            if i + 1 < len(argv) and argv[i + 1].decode(errors="replace") in bind_ips:
                found.append(int(d))
    return found


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4:])
