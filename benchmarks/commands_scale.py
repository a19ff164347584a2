"""Every command that writes the Plan out, as whole processes on an N-SU inventory (default 512 SUs of
32 DGX H100, benchmarks/gen_inventory.py): `plan --format json`, `render`, `report`, `export containerlab |
batfish | device-types`. Per command: wall and CPU seconds from start to exit (CPU from wait4: the process
and the workers it forked), the peak of the process tree's memory (RSS summed over the tree, an upper bound:
a forked worker's pages shared with its parent count twice; and PSS, which splits shared pages), sampled
every 50 ms, and a SHA-256 of what it wrote (stdout, or every file under the output directory with its
path), so old and new code can be shown to write the same bytes. Goal: each < 30 s and < 2 GB at 512 SUs.

`--src DIR` runs another source tree (e.g. an older commit's `src/` from `git worktree add`; its templates and
data are its checkout's when DIR's parent has templates/, else this checkout's, through CLUSTERFORGE_ROOT);
`--against DIR` runs each command with that tree and then with --src (or the installed package), one after the
other, so old and new share a window. The 1-minute load average is printed on every row since the machine is
shared.
Usage: python benchmarks/commands_scale.py [--sus N] [--src DIR] [--against DIR] [--only plan,render,...]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from results import Recorder, recording  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGE = os.sysconf("SC_PAGE_SIZE")
COMMANDS = {
    "plan": ["plan", "{inv}", "--format", "json"],
    "render": ["render", "{inv}", "--out", "{out}"],
    "report": ["report", "{inv}", "--out", "{out}"],
    "containerlab": ["export", "containerlab", "{inv}", "--out", "{out}"],
    "batfish": ["export", "batfish", "{inv}", "--out", "{out}"],
    "device-types": ["export", "device-types", "{inv}", "--out", "{out}"],
}


def _tree(root: int) -> list[int]:
    """root and every descendant (from each process's task children lists)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    todo.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return found


def _memory(pids: list[int]) -> tuple[int, int]:
    """(RSS summed, PSS summed) in bytes."""
    rss = pss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as handle:
                rss += int(handle.read().split()[1]) * PAGE
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
                        break
        except OSError:
            continue
    return rss, pss


def _sha_of_tree(out: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(out)).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def run(argv: list[str], env: dict[str, str], to_stdout: bool) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE if to_stdout else subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    peak = {"rss": 0, "pss": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            rss, pss = _memory(_tree(proc.pid))
            peak["rss"], peak["pss"] = max(peak["rss"], rss), max(peak["pss"], pss)
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    digest, size = hashlib.sha256(), 0
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(proc.stderr.read()), daemon=True)
    reader.start()
    if to_stdout:
        for chunk in iter(lambda: proc.stdout.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    reader.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": peak["rss"], "pss": peak["pss"],
            "maxrss": usage.ru_maxrss * 1024, "status": proc.returncode, "stdout_sha": digest.hexdigest()[:16],
            "stdout_bytes": size, "stderr": b"".join(errors).decode(errors="replace")[-400:]}


def _environment(src: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src:
        env["PYTHONPATH"] = str(src.resolve())
        # a checkout's src/ reads its own templates (an older commit's may need ones since removed); a tree
        # outside a checkout finds templates/ here
        own = src.resolve().parent
        env["CLUSTERFORGE_ROOT"] = str(own if (own / "templates").is_dir() else ROOT)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sus", type=int, default=512)
    parser.add_argument("--src", type=Path, help="source tree to run instead of the installed package")
    parser.add_argument("--against", type=Path, help="source tree to run before --src, command by command")
    parser.add_argument("--only", default=",".join(COMMANDS), help="commands, comma-separated")
    args = parser.parse_args()
    from gen_inventory import generate

    trees = ([("before", args.against)] if args.against else []) + [("now" if args.against else "", args.src)]
    launcher = [sys.executable, "-c", "import sys; from clusterforge.cli import main; sys.exit(main())"]
    print(f"load average {os.getloadavg()[0]:.2f} at start; {args.sus} SUs; "
          + "; ".join(f"{label or 'source'} {src or 'installed package'}" for label, src in trees))
    print(f"{'command':<21} {'wall s':>7} {'cpu s':>7} {'tree RSS MB':>11} {'tree PSS MB':>11} {'max proc MB':>11}"
          f" {'output MB':>9} {'load':>5}  sha256", flush=True)
    with tempfile.TemporaryDirectory(prefix="cf-bench-") as tmp, recording(
            "commands_scale", sus=args.sus, only=args.only.split(","), src=str(args.src) if args.src else None,
            against=str(args.against) if args.against else None) as rec:
        inventory, out = generate(args.sus, Path(tmp) / f"gen{args.sus}.yaml"), Path(tmp) / "out"
        for name in args.only.split(","):
            for label, src in trees:
                argv = [*launcher, *(a.format(inv=inventory, out=out) for a in COMMANDS[name])]
                one_command(rec, name, label, src, argv, out)
    print(f"load average {os.getloadavg()[0]:.2f} at end")


def _shown(name: str) -> str:
    """The command as the page names it: its words without the inventory and the output directory."""
    return " ".join(a for a in COMMANDS[name] if not a.startswith("{") and a != "--out")


def one_command(rec: Recorder, name: str, label: str, src: Path | None, argv: list[str], out: Path) -> None:
    """Run one command, print its row and record it."""
    row = f"{name} {label}".strip()
    result = run(argv, _environment(src), to_stdout=name == "plan")
    load = os.getloadavg()[0]
    if result["status"]:
        print(f"{row:<21} exit {result['status']}: {result['stderr'].strip()[-300:]}", flush=True)
        rec.record("command", name=name, label=label, command=_shown(name),
                   error=f"exit {result['status']}: {result['stderr'].strip()[-300:]}")
        shutil.rmtree(out, ignore_errors=True)
        return
    if name == "plan":
        sha, size = result["stdout_sha"], result["stdout_bytes"]
    else:
        sha, size = _sha_of_tree(out), sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    shutil.rmtree(out, ignore_errors=True)
    os.sync()  # the next run starts with this one's writes and deletions on disk, not still being flushed
    print(f"{row:<21} {result['wall']:>7.1f} {result['cpu']:>7.1f} {result['rss'] / 1e6:>11,.0f}"
          f" {result['pss'] / 1e6:>11,.0f} {result['maxrss'] / 1e6:>11,.0f} {size / 1e6:>9,.1f}"
          f" {load:>5.1f}  {sha}", flush=True)
    rec.record("command", name=name, label=label, command=_shown(name),
               wall_s=result["wall"], cpu_s=result["cpu"], tree_rss_mb=result["rss"] / 1e6,
               tree_pss_mb=result["pss"] / 1e6, max_process_mb=result["maxrss"] / 1e6, output_mb=size / 1e6,
               load=load, sha256=sha)


if __name__ == "__main__":
    main()
