"""A real Nautobot for the tests: PostgreSQL and Redis from Debian and Nautobot from PyPI, on
loopback ports of this machine, in a temporary directory, stopped and removed afterwards.

Nautobot's migrations take minutes, so the migrated database (with an admin user and an API
token) is kept as a pg_dump in a cache keyed by the Nautobot version; each session restores it
(seconds) and starts one server. scripts/setup-sot.sh installs everything and fills the cache.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".sot" / "venv"
PG_BIN = Path("/usr/lib/postgresql/15/bin")
CACHE_DIRS = (Path("/var/cache/clusterforge/sot"), REPO / ".sot" / "cache")
ADMIN = "admin"


@dataclass(frozen=True)
class Nautobot:
    url: str
    token: str


def missing() -> list[str]:
    why = []
    if not (VENV / "bin" / "nautobot-server").exists():
        why.append(f"{VENV}/bin/nautobot-server (scripts/setup-sot.sh installs it)")
    if not (PG_BIN / "initdb").exists():
        why.append("PostgreSQL 15 (Debian package postgresql)")
    if not shutil.which("redis-server"):
        why.append("redis-server (Debian package redis-server)")
    if os.geteuid() == 0 and not _user_exists("postgres"):
        why.append("the postgres user (Debian package postgresql)")
    return why


def _user_exists(name: str) -> bool:
    return subprocess.run(["id", "-u", name], capture_output=True).returncode == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _version() -> str:
    found = list((VENV / "lib").glob("python3*/site-packages/nautobot-*.dist-info"))
    return found[0].name.removeprefix("nautobot-").removesuffix(".dist-info") if found else "unknown"


def _cache_dir() -> Path:
    for path in CACHE_DIRS:
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / ".probe"
            probe.write_text("")
            probe.unlink()
            return path
        except OSError:
            continue
    raise RuntimeError("no writable cache directory for the Nautobot template database")


def _as_postgres(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    if os.geteuid() == 0:
        argv = ["runuser", "-u", "postgres", "--", *argv]
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kwargs)


def _wait(url: str, seconds: float, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"nautobot-server exited {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except urllib.error.HTTPError:
            return  # 403 without a token: the server answers
        except (urllib.error.URLError, OSError):
            time.sleep(1)
    raise RuntimeError(f"nautobot-server did not answer within {seconds:.0f} s:\n{log.read_text()[-3000:]}")


def _token(url: str, password: str) -> str:
    request = urllib.request.Request(
        f"{url}/api/users/tokens/", method="POST", data=json.dumps({"description": "clusterforge tests"}).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json",
                 "Authorization": "Basic " + base64.b64encode(f"{ADMIN}:{password}".encode()).decode()})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["key"]


@contextmanager
def running_nautobot():
    """Yield a Nautobot with an empty (migrated) database; everything is removed on exit."""
    root = Path(tempfile.mkdtemp(prefix="cf-nautobot-"))
    procs: list[subprocess.Popen] = []
    pg_data = root / "pg"
    try:
        os.chmod(root, 0o755)
        if os.geteuid() == 0:
            shutil.chown(root, "postgres")
        pg_port, redis_port, web_port = _free_port(), _free_port(), _free_port()
        _as_postgres([str(PG_BIN / "initdb"), "-D", str(pg_data), "-U", "postgres", "--auth=trust", "-E", "UTF8"])
        _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(pg_data), "-l", str(root / "pg.log"), "-w", "start", "-o",
                      f"-p {pg_port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
                      "-c synchronous_commit=off -c full_page_writes=off"])
        procs.append(subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                                       "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        psql = [str(PG_BIN / "psql"), "-h", "127.0.0.1", "-p", str(pg_port), "-U", "postgres", "-v", "ON_ERROR_STOP=1"]
        db_password = secrets.token_hex(16)
        subprocess.run([*psql, "-c", f"CREATE USER nautobot PASSWORD '{db_password}'"], check=True, capture_output=True)
        subprocess.run([*psql, "-c", "CREATE DATABASE nautobot OWNER nautobot"], check=True, capture_output=True)
        (root / "nb").mkdir()
        config = root / "nb" / "nautobot_config.py"
        config.write_text("import os\nfrom nautobot.core.settings import *  # noqa: F403\n"
                          "SECRET_KEY = os.environ['NAUTOBOT_SECRET_KEY']\nALLOWED_HOSTS = ['127.0.0.1']\n"
                          "INSTALLATION_METRICS_ENABLED = False\n")
        env = {**os.environ, "NAUTOBOT_ROOT": str(root / "nb"), "NAUTOBOT_CONFIG": str(config),
               "NAUTOBOT_SECRET_KEY": secrets.token_hex(32), "NAUTOBOT_DB_HOST": "127.0.0.1",
               "NAUTOBOT_DB_PORT": str(pg_port), "NAUTOBOT_DB_USER": "nautobot", "NAUTOBOT_DB_PASSWORD": db_password,
               "NAUTOBOT_DB_NAME": "nautobot", "NAUTOBOT_REDIS_HOST": "127.0.0.1",
               "NAUTOBOT_REDIS_PORT": str(redis_port)}
        server = str(VENV / "bin" / "nautobot-server")
        cache = _cache_dir() / f"nautobot-{_version()}"
        dump, secret_file = cache.with_suffix(".dump"), cache.with_suffix(".admin")
        if not dump.exists():  # once per Nautobot version: migrate, admin user, dump
            subprocess.run([server, "migrate"], env=env, check=True, capture_output=True, timeout=3600)
            password = secrets.token_hex(16)
            subprocess.run([server, "createsuperuser", "--noinput", "--username", ADMIN, "--email",
                            "admin@example.invalid"], env={**env, "DJANGO_SUPERUSER_PASSWORD": password},
                           check=True, capture_output=True, timeout=600)
            dumped = subprocess.run([str(PG_BIN / "pg_dump"), "-h", "127.0.0.1", "-p", str(pg_port), "-U", "nautobot",
                                     "-Fc", "nautobot"], check=True, capture_output=True)
            fd = os.open(secret_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(password)
            tmp = dump.with_suffix(".tmp")
            tmp.write_bytes(dumped.stdout)
            os.replace(tmp, dump)
        else:
            subprocess.run([str(PG_BIN / "pg_restore"), "-h", "127.0.0.1", "-p", str(pg_port), "-U", "nautobot",
                            "-d", "nautobot", "--no-owner", str(dump)], check=True, capture_output=True)
        password = secret_file.read_text().strip()
        log = root / "server.log"
        with log.open("w") as handle:
            procs.append(subprocess.Popen([server, "runserver", f"127.0.0.1:{web_port}", "--noreload"], env=env,
                                          stdout=handle, stderr=subprocess.STDOUT, start_new_session=True))
        url = f"http://127.0.0.1:{web_port}"
        _wait(f"{url}/api/status/", 600, procs[-1], log)
        yield Nautobot(url, _token(url, password))
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)  # runserver was started in its own session
                except (ProcessLookupError, PermissionError):
                    proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        if (pg_data / "postmaster.pid").exists():
            _as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(pg_data), "-m", "fast", "-w", "stop"])
        shutil.rmtree(root, ignore_errors=True)
