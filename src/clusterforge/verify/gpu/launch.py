"""Starting distributed workers through torchrun (one process per GPU, rendezvous for several nodes).

Workers print one line ``CLUSTERFORGE_RESULT <json>`` from global rank 0; the launcher
reads it from whichever node's output holds it (with c10d rendezvous, rank 0 need not
live on the first host). Multi-node: the same torchrun command runs on every host (the
local one directly, the others over ``ssh`` with the same working directory and Python),
all meeting at ``hosts[0]:rdzv_port``.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

RESULT_MARKER = "CLUSTERFORGE_RESULT "


class LaunchError(RuntimeError):
    """torchrun failed or no rank printed a result."""


def emit_result(result: dict) -> None:
    """Called by rank 0 of a worker: the one line the launcher looks for."""
    print(RESULT_MARKER + json.dumps(result, separators=(",", ":")), flush=True)


def parse_result(text: str) -> dict | None:
    """The last result line in a worker's output, or None."""
    found = None
    for line in text.splitlines():
        idx = line.find(RESULT_MARKER)
        if idx >= 0:
            found = json.loads(line[idx + len(RESULT_MARKER) :])
    return found


def torchrun_argv(
    module: str,
    module_args: Sequence[str],
    nproc_per_node: int,
    hosts: Sequence[str] | None = None,
    rdzv_port: int = 29400,
    rdzv_id: str = "clusterforge-accept",
    python: str | None = None,
) -> list[str]:
    """The torchrun command line: ``--standalone`` on one node, c10d rendezvous on several."""
    if nproc_per_node < 1:
        raise ValueError("nproc_per_node must be >= 1")
    argv = [python or sys.executable, "-m", "torch.distributed.run"]
    if hosts and len(hosts) > 1:
        argv += [
            "--nnodes",
            str(len(hosts)),
            "--rdzv-backend",
            "c10d",
            "--rdzv-endpoint",
            f"{hosts[0]}:{rdzv_port}",
            "--rdzv-id",
            rdzv_id,
        ]
    else:
        argv += ["--standalone", "--nnodes", "1"]
    argv += ["--nproc-per-node", str(nproc_per_node), "-m", module, *module_args]
    return argv


def _is_local(host: str) -> bool:
    names = {"localhost", "127.0.0.1", "::1", socket.gethostname(), socket.getfqdn()}
    return host in names or host.split(".")[0] == socket.gethostname().split(".")[0]


def package_root() -> str:
    """The directory holding the ``clusterforge`` package, so workers import this same code."""
    import clusterforge

    return str(Path(next(iter(clusterforge.__path__))).resolve().parent)


def worker_env() -> dict[str, str]:
    env = dict(os.environ)
    root = package_root()
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def remote_command(argv: Sequence[str], env: dict[str, str]) -> str:
    """Shell text run over ssh on another host: same directory, PYTHONPATH and NCCL_* settings."""
    keep = {k: v for k, v in env.items() if k == "PYTHONPATH" or k.startswith(("NCCL_", "TORCH_", "NVSHMEM_"))}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(keep.items()))
    return f"cd {shlex.quote(os.getcwd())} && env {exports} {shlex.join(argv)}"


def run_torchrun(
    module: str,
    module_args: Sequence[str],
    nproc_per_node: int,
    hosts: Sequence[str] | None = None,
    timeout_s: float = 900,
    log_dir: str | os.PathLike | None = None,
    rdzv_port: int = 29400,
    ssh: Sequence[str] = ("ssh", "-o", "BatchMode=yes"),
) -> dict:
    """Run a worker module on every GPU of this host (and of ``hosts``); return rank 0's result."""
    argv = torchrun_argv(module, module_args, nproc_per_node, hosts=hosts, rdzv_port=rdzv_port)
    env = worker_env()
    log_dir = Path(log_dir or tempfile.mkdtemp(prefix="cf-torchrun-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    procs = []
    targets = list(hosts) if hosts and len(hosts) > 1 else ["localhost"]
    for i, host in enumerate(targets):
        log = open(log_dir / f"{module.rsplit('.', 1)[-1]}-{i}-{host}.log", "w+")  # noqa: SIM115 - closed below
        cmd = argv if _is_local(host) else [*ssh, host, remote_command(argv, env)]
        procs.append((host, log, subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)))
    result = None
    failures = []
    outputs = []
    for host, log, p in procs:
        try:
            rc = p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
            failures.append(f"{host}: timed out after {timeout_s}s")
        log.seek(0)
        text = log.read()
        log.close()
        outputs.append(text)
        if rc != 0:
            failures.append(f"{host}: exit {rc}")
        r = parse_result(text)
        if r is not None:
            result = r
    if failures or result is None:
        tail = "\n".join(o[-3000:] for o in outputs)
        raise LaunchError(f"{module} failed ({'; '.join(failures) or 'no result line'}):\n{tail}")
    return result
