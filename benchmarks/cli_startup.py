"""Start-up of the `clusterforge` command as whole processes: `--version`, `--help` and `validate` of a small
file, wall and CPU seconds (the process's own user + system time, from wait4) from start to exit.

Each command runs once untimed (bytecode written, page cache warm), then ROUNDS times; the minimum and the
median are printed with the load average, since the machine is shared. `--src DIR` runs another source tree
(e.g. an older commit's `src/`, exported with `git archive`) through PYTHONPATH, for old-against-new in the
same window. Goals: `validate` of a small file < 0.2 s, `--version` < 0.1 s. `validate FILE` skips the typer
app (nothing to parse); the `--format table` row is the same work through the app, for comparison.

The last row is `validate inventory/lab.yaml` as a checkout without bytecode runs it where the environment sets
PYTHONDONTWRITEBYTECODE=1 (this machine does): a copy of the source tree without __pycache__, so each run
compiles every clusterforge module it imports (the installed packages keep their bytecode). Setting up
(scripts/setup.sh) writes the checkout's bytecode once, which takes that cost away.
Usage: python benchmarks/cli_startup.py [--rounds N] [--src DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import Recorder, recording  # noqa: E402

# `validate FILE` runs without the typer app (cli/validation); `--format table` asks the same of the app
COMMANDS = (("--version",), ("--help",), ("validate", "inventory/lab.yaml"),
            ("validate", "inventory/lab.yaml", "--format", "table"), ("validate", "inventory/roce-128gpu.yaml"))


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s, exit status) of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--src", type=Path, help="source tree to run instead of the installed package")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as installed: bytecode cached
    if args.src:
        env["PYTHONPATH"] = str(args.src.resolve())
    launcher = [sys.executable, "-c", "import sys; from clusterforge.cli import main; sys.exit(main())"]
    print(f"load average {os.getloadavg()[0]:.2f} at start; {args.rounds} rounds; source"
          f" {args.src or 'installed package'}")
    print(f"{'command':<46} {'wall min':>9} {'wall med':>9} {'cpu min':>8} {'cpu med':>8}")
    with recording("cli_startup", rounds=args.rounds, src=str(args.src) if args.src else None) as rec:
        for command in COMMANDS:
            row(rec, command, "", [*launcher, *command], env, args.rounds)
        with tempfile.TemporaryDirectory(prefix="cf-nobytecode-") as tmp:
            source = args.src.resolve() if args.src else ROOT / "src"
            copy = Path(tmp) / "src"
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
            bare = {**env, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
            row(rec, ("validate", "inventory/lab.yaml"), "no bytecode", [*launcher, "validate", "inventory/lab.yaml"],
                bare, args.rounds)
    print(f"load average {os.getloadavg()[0]:.2f} at end")


def row(rec: Recorder, command: tuple[str, ...], note: str, argv: list[str], env: dict[str, str],
        rounds: int) -> None:
    """One command: run once untimed (bytecode written, unless the environment forbids it), then timed."""
    name = " ".join(command) + (f", {note}" if note else "")
    _, _, status = timed(argv, env)
    runs = [timed(argv, env) for _ in range(rounds)]
    walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
    statuses = {r[2] for r in runs} | {status}
    exits = "" if statuses == {0} else f"  exit {sorted(statuses)}"
    print(f"{name:<46} {min(walls):>9.3f} {statistics.median(walls):>9.3f} {min(cpus):>8.3f}"
          f" {statistics.median(cpus):>8.3f}{exits}", flush=True)
    rec.record("command", command=" ".join(command), note=note, wall_min=min(walls),
               wall_median=statistics.median(walls), cpu_min=min(cpus), cpu_median=statistics.median(cpus),
               exit_statuses=sorted(statuses))


if __name__ == "__main__":
    main()
