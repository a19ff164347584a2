"""Run the real Slurm 22.05 binaries (Debian's slurm-wlm) on rendered Slurm files, on loopback only.

``scratch_config`` copies the rendered slurm/ files into a scratch directory and rewrites only the lines
that say where this one machine's daemons live (controller host, state/spool/pid/log paths, ports,
NodeAddr, munge socket, SlurmUser; the simulated GPUs' placeholder directory, made here as the slurm_node role
makes it) and turns accounting off (no slurmdbd/MariaDB here: slurmctld refuses
to start with enforced associations or a gres/gpu accounting TRES and no database; the accounting lines are
the lab's to prove, against a real slurmdbd). Every other line is the rendered one,
byte for byte: the node, partition, GRES, selection, cgroup and topology lines are what slurmctld,
slurmd and scontrol parse. No address but 127.0.0.1 is ever contacted.

``Controller`` starts munged and ``slurmctld -D`` there, waits for it to run as the primary controller
(or to exit, reporting its log), answers ``scontrol`` queries, and stops both.
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from clusterforge.render.slurm.node_files import SIMULATED_GPU_DIR

__all__ = ["BINARIES", "missing_binaries", "scratch_config", "Controller", "slurmd_gres_check", "LOCAL_KEYS",
           "Slurmd"]

BINARIES = ("slurmctld", "slurmd", "scontrol", "munged")
# the keys scratch_config rewrites or drops; nothing else of the rendered slurm.conf changes
LOCAL_KEYS = ("SlurmctldHost", "SlurmUser", "SlurmctldPort", "SlurmdPort", "StateSaveLocation", "SlurmdSpoolDir",
              "SlurmctldPidFile", "SlurmdPidFile", "SlurmctldLogFile", "SlurmdLogFile", "AccountingStorageType",
              "AccountingStorageHost", "AccountingStoragePort", "AccountingStorageEnforce",
              "AccountingStorageTRES")


def missing_binaries() -> list[str]:
    return [name for name in BINARIES if shutil.which(name) is None and not Path("/usr/sbin", name).exists()]


def _binary(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scratch_config(files: dict[str, str], directory: Path) -> Path:
    """Write the rendered files (keys relative to slurm/) under ``directory``/etc, localised; return slurm.conf."""
    etc = directory / "etc"
    for sub in ("etc", "state", "spool", "munge"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(directory / "munge", 0o700)
    for name in ("gres.conf", "topology.conf", "cgroup.conf"):
        if name in files:
            (etc / name).write_text(files[name].replace(SIMULATED_GPU_DIR, str(directory / "simulated-gpus")))
    # what the slurm_node role does on a simulated node: one empty placeholder file per GPU
    (directory / "simulated-gpus").mkdir(exist_ok=True)
    for i in range(16):
        (directory / "simulated-gpus" / f"nvidia{i}").touch()
    local = {
        "SlurmUser": getpass.getuser(), "SlurmctldPort": str(_free_port()), "SlurmdPort": str(_free_port()),
        "StateSaveLocation": str(directory / "state"), "SlurmdSpoolDir": str(directory / "spool"),
        "SlurmctldPidFile": str(directory / "slurmctld.pid"), "SlurmdPidFile": str(directory / "slurmd.pid"),
        "SlurmctldLogFile": str(directory / "slurmctld.log"), "SlurmdLogFile": str(directory / "slurmd.log"),
        "AccountingStorageType": "accounting_storage/none",
    }
    out: list[str] = []
    controller_written = False
    for line in files["slurm.conf"].splitlines():
        key = line.split("=", 1)[0] if "=" in line and not line.startswith("#") else ""
        if key == "SlurmctldHost":
            if not controller_written:  # one controller: this machine
                out.append(f"SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)")
                controller_written = True
        elif key in ("AccountingStorageHost", "AccountingStoragePort", "AccountingStorageEnforce",
                     "AccountingStorageTRES"):
            continue
        elif key in local:
            out.append(f"{key}={local[key]}")
        elif key == "NodeName":
            out.append(re.sub(r"NodeAddr=\S+", "NodeAddr=127.0.0.1", line))
        else:
            out.append(line)
    out.append(f"AuthInfo=socket={directory / 'munge' / 'munge.socket'}")
    conf = etc / "slurm.conf"
    conf.write_text("\n".join(out) + "\n")
    return conf


class Controller:
    """munged + slurmctld -D on a scratch config; ``scontrol(*args)`` talks to it; ``stop()`` ends both."""

    def __init__(self, conf: Path, timeout_s: float = 90):
        self.conf, self.dir = conf, conf.parent.parent
        munge = self.dir / "munge"
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        self.socket = munge / "munge.socket"
        self.env = {**os.environ, "SLURM_CONF": str(conf)}
        self.munged = subprocess.Popen(
            [_binary("munged"), "-F", "--force", f"--key-file={key}", f"--socket={self.socket}",
             f"--pid-file={munge / 'munged.pid'}", f"--log-file={munge / 'munged.log'}",
             f"--seed-file={munge / 'munged.seed'}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.slurmctld: subprocess.Popen | None = None
        try:
            self._wait(lambda: self.socket.exists(), 20, "munged did not create its socket")
            self.slurmctld = subprocess.Popen([_binary("slurmctld"), "-D", "-i", "-f", str(conf)], env=self.env,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            self._wait(self._ready, timeout_s, "slurmctld did not become the primary controller")
        except BaseException:
            self.stop()
            raise

    @property
    def log(self) -> str:
        path = self.dir / "slurmctld.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _ready(self) -> bool:
        assert self.slurmctld is not None
        if self.slurmctld.poll() is not None:
            stderr = self.slurmctld.stderr.read() if self.slurmctld.stderr else ""
            raise RuntimeError(f"slurmctld exited {self.slurmctld.returncode}:\n{stderr}\n{self.log[-4000:]}")
        return "Running as primary controller" in self.log and self.scontrol("ping", check=False).returncode == 0

    def _wait(self, ready, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.5)
        raise TimeoutError(f"{what} within {timeout_s:g} s:\n{self.log[-4000:]}")

    def scontrol(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([_binary("scontrol"), *args], env=self.env, capture_output=True, text=True,
                                timeout=60)
        if check and result.returncode:
            raise RuntimeError(f"scontrol {' '.join(args)} exited {result.returncode}: {result.stderr}")
        return result

    def errors(self) -> list[str]:
        return [line for line in self.log.splitlines() if " error: " in line or " fatal: " in line]

    def stop(self) -> None:
        for proc in (self.slurmctld, self.munged):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
            if proc is not None and proc.stderr:
                proc.stderr.close()


def slurmd_gres_check(conf: Path, node: str) -> subprocess.CompletedProcess:
    """``slurmd -G``: slurmd reads slurm.conf, gres.conf and cgroup.conf for ``node`` and exits (1 on a
    parse error or a GRES device file it cannot stat)."""
    return subprocess.run([_binary("slurmd"), "-G", "-f", str(conf), "-N", node], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "SLURM_CONF": str(conf)})


class Slurmd:
    """``slurmd -D -N node`` against a running Controller's config (this machine's real hardware)."""

    def __init__(self, ctl: Controller, node: str):
        self.ctl, self.node = ctl, node
        self.proc = subprocess.Popen([_binary("slurmd"), "-D", "-N", node, "-f", str(ctl.conf)], env=ctl.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def registered(self, timeout_s: float = 60) -> dict[str, str]:
        """The node's scontrol record once it left UNKNOWN (or at the timeout)."""
        deadline = time.monotonic() + timeout_s
        record: dict[str, str] = {}
        while time.monotonic() < deadline and self.proc.poll() is None:
            out = self.ctl.scontrol("-o", "show", "node", self.node).stdout
            record = dict(part.split("=", 1) for part in out.split() if "=" in part)
            record["Reason"] = out.split("Reason=", 1)[1].strip() if "Reason=" in out else ""
            if not record.get("State", "UNKNOWN").startswith("UNKNOWN") or "INVALID_REG" in record.get("State", ""):
                break
            time.sleep(0.5)
        return record

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
