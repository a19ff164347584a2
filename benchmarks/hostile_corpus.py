"""The hostile corpus, counted: how many inputs, how many end in a traceback, how many are silently accepted.

Every case runs `clusterforge` in its own process (python -m clusterforge.cli) from a fresh directory, with
PYTHONPATH at --src (default: this checkout's src/), so the same corpus can be run against an older checkout:

    python benchmarks/hostile_corpus.py                      # this checkout
    python benchmarks/hostile_corpus.py --src /tmp/old/src   # e.g. a worktree of an older commit

A case is a declaration edit (the tables of tests/unit/test_hostile_inputs.py, test_hostile_fields.py,
test_hostile_recent_fields.py: control nodes, teams, gateways, liquid loops, rack systems and their catalog;
test_silent_accepts.py: settings never applied, bare metal, liquid, RDMA devices, storage, acceptance floors,
Slurm, team namespaces; test_yaml_integer_limit.py: integers past Python's int-string limit, both YAML readers)
or an argv with a set-up (the writer, argument, --stack, vendor and URL cases; test_hostile_round_commands.py:
health, remediate, ib check, unlock, verify and every --backend-url command). Then every declaration table runs
again through plan, render, report and diff (`--jobs` at once). Outcome per case: `traceback` (an exception
escaped: "Traceback" on stderr, or an exit code outside 0-3), `silent` (exit 0, the wrong exit code, or a write
outside --out / a user's file deleted), `unlocated` (a refused declaration with a stderr line that is not
FILE:LINE:COL: ...), `wrote` (refused, but `--out` or another file appeared), else `refused`. Prints the counts
and each case that is not refused.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from hostile_fixtures import LAB_TEXT, PROBLEM  # noqa: E402
from test_hostile_fields import FIELDS  # noqa: E402
from test_hostile_inputs import EDITS  # noqa: E402
from test_hostile_recent_fields import BASES, DECLARATION, RACKS_CATALOG, declaration_case, racks_case  # noqa: E402
from test_hostile_round_commands import argv_cases  # noqa: E402
from test_hostile_round_commands import setup_dir as argv_dir  # noqa: E402
from test_kubeconfig_command import HOSTILE_STACKS  # noqa: E402
from test_silent_accepts import BASES as SILENT_BASES  # noqa: E402
from test_silent_accepts import CASES as NEVER_APPLIED  # noqa: E402
from test_silent_accepts import silent_case  # noqa: E402
from test_yaml_integer_limit import HUGE, READERS  # noqa: E402
from test_yaml_integer_limit import INVENTORY as HUGE_INTEGERS  # noqa: E402

CATALOG_LINE = ("catalog_files: [catalog/servers.yaml, catalog/switches.yaml, catalog/pdus.yaml,"
                " catalog/cables.yaml]")


def _edit_cases() -> list[tuple[str, str]]:
    cases = [(f"edit:{c[0]}", LAB_TEXT.replace(c[1], c[2], 1)) for c in EDITS]
    cases += [(f"field:{c[0]}", LAB_TEXT.replace(c[1], c[2], 1)) for c in FIELDS]
    cases += [(f"key:{k}", LAB_TEXT.replace("envelope:\n", f"{k}:\n  x: 1\nenvelope:\n", 1))
              for k in ("null", "~", "3", "true")]
    cases.append(("catalog:5000-entries", LAB_TEXT.replace(CATALOG_LINE, "catalog_files: ["
                                                           + ", ".join(["catalog/servers.yaml"] * 5000) + "]")))
    cases.append(("catalog:directory", LAB_TEXT.replace("catalog_files: [catalog/servers.yaml",
                                                        "catalog_files: [catalog")))
    return cases


def _nic_cases() -> list[tuple[str, str, str]]:
    """(id, names, ...) a data NIC group of hgx-h200-2gpu named so."""
    return [(f"nic:{n}", n, "") for n in ("[lo, rail1]", "[ens1, bond0]", "[stor0, ens2]", "[all, ens2]")]


def run(src: Path, argv: list[str], cwd: Path, timeout: float = 120,
        extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src), "CLUSTERFORGE_STATE_DIR": str(cwd / ".state"),
           "CLUSTERFORGE_LAB_HOME": str(cwd / ".labhome")}
    for name in ("CLUSTERFORGE_SOT_TOKEN", "NAUTOBOT_TOKEN"):
        env.pop(name, None)
    env.update(extra_env or {})
    try:
        return subprocess.run([sys.executable, "-m", "clusterforge.cli", *argv], cwd=cwd, env=env, text=True,
                              capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", "timeout")


def classify(proc: subprocess.CompletedProcess[str], silent: bool = False, located: bool = False) -> str:
    """`located`: a refused declaration, whose every stderr line but warnings must be FILE:LINE:COL: ..."""
    if "Traceback" in proc.stderr or proc.returncode not in (0, 1, 2, 3):
        return "traceback"
    if proc.returncode == 0 or silent:
        return "silent"
    if located and not _all_located(proc.stderr):
        return "unlocated"
    return "refused"


def _all_located(stderr: str) -> bool:
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("warning: ")]
    return bool(lines) and all(PROBLEM.match(line) for line in lines)


def _tree(directory: Path) -> dict[str, float]:
    return {str(p.relative_to(directory)): p.stat().st_mtime for p in directory.rglob("*") if p.is_file()}


def _workdir(base: Path, name: str) -> Path:
    directory = base / re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    directory.mkdir(parents=True)
    shutil.copytree(ROOT / "inventory" / "catalog", directory / "catalog")
    return directory


def corpus(src: Path, base: Path, jobs: int = 1) -> list[tuple[str, str]]:
    results: list[tuple[str, str]] = []
    for name, text in _edit_cases():
        directory = _workdir(base, name)
        (directory / "case.yaml").write_text(text)
        results.append((name, classify(run(src, ["validate", "case.yaml"], directory), located=True)))
    for name, example, old, new, _, _ in DECLARATION:
        directory = base / f"recent-{name}"
        directory.mkdir(parents=True)
        path = declaration_case(directory, example, old, new)
        results.append((f"recent:{name}", classify(run(src, ["validate", path.name], directory), located=True)))
    for name, old, new, _, _ in RACKS_CATALOG:
        directory = base / f"racks-{name}"
        directory.mkdir(parents=True)
        path, _ = racks_case(directory, old, new)
        results.append((f"racks:{name}", classify(run(src, ["validate", path.name], directory), located=True)))
    for name, base_name, inventory_edit, servers_edit, *_ in NEVER_APPLIED:
        directory = base / f"never-applied-{name}"
        directory.mkdir(parents=True)
        path = silent_case(directory, base_name, inventory_edit, servers_edit)
        results.append((f"never-applied:{name}",
                        classify(run(src, ["validate", path.name], directory), located=True)))
    for reader, prefix in READERS.items():
        for name, old, new in HUGE_INTEGERS:
            directory = _workdir(base, f"huge-{reader}-{name}")
            (directory / "case.yaml").write_text(prefix + LAB_TEXT.replace(old, new, 1))
            results.append((f"huge-integer:{reader}:{name}", classify(run(src, ["validate", "case.yaml"], directory))))
        directory = _workdir(base, f"huge-{reader}-catalog")
        servers = directory / "catalog" / "servers.yaml"
        servers.write_text(prefix + servers.read_text().replace("count: 6", f"count: {HUGE}", 1))
        (directory / "case.yaml").write_text(LAB_TEXT)
        results.append((f"huge-integer:{reader}:catalog", classify(run(src, ["validate", "case.yaml"], directory))))
    for stack in HOSTILE_STACKS:
        for command in (["kubeconfig", "lab.yaml"], ["preview", "lab.yaml"], ["drift", "lab.yaml"]):
            directory = _workdir(base, f"stack-{command[0]}-{stack}")
            (directory / "lab.yaml").write_text(LAB_TEXT)
            proc = run(src, [*command, "--stack", stack], directory)
            results.append((f"stack:{command[0]} {stack!r}", classify(proc, silent=proc.returncode != 2)))
    for vendor in ("'..'", "a/b", "'.hidden'"):
        for command in (["validate", "case.yaml"], ["export", "device-types", "case.yaml", "--out", "out"]):
            directory = _workdir(base, f"vendor-{command[0]}-{vendor}")
            servers = directory / "catalog" / "servers.yaml"
            servers.write_text(re.sub(r"vendor: .*", f"vendor: {vendor}", servers.read_text(), count=1))
            (directory / "case.yaml").write_text(LAB_TEXT)
            results.append((f"vendor:{command[0]} {vendor}", classify(run(src, command, directory))))
    for name, names, _ in _nic_cases():
        directory = _workdir(base, name)
        servers = directory / "catalog" / "servers.yaml"
        body = servers.read_text()
        anchor = "data: {count: 2, speed_gbps: 400}"
        at = body.index(anchor, body.index("hgx-h200-2gpu:"))
        servers.write_text(body[:at] + anchor.replace("}", f", names: {names}}}") + body[at + len(anchor):])
        (directory / "case.yaml").write_text(LAB_TEXT)
        results.append((name, classify(run(src, ["validate", "case.yaml"], directory))))
    for command in ("plan", "render", "report", "diff"):  # /64 through every command (netaddr's error)
        directory = _workdir(base, f"prefix-{command}")
        (directory / "case.yaml").write_text(LAB_TEXT.replace("198.18.0.0/22", "198.18.0.0/64", 1))
        (directory / "lab.yaml").write_text(LAB_TEXT)
        argv = {"plan": ["plan", "case.yaml"], "render": ["render", "case.yaml", "--out", "out"],
                "report": ["report", "case.yaml", "--out", "out"], "diff": ["diff", "lab.yaml", "case.yaml"]}[command]
        results.append((f"prefix:{command}", classify(run(src, argv, directory))))
    results += _writer_cases(src, base)
    # only URLs that fail before any request or point at loopback: no traffic leaves this machine
    for url in ("http://[", "http://[::1", "ftp://127.0.0.1", "http://127.0.0.1:99999"):
        directory = _workdir(base, f"url-{url}")
        (directory / "lab.yaml").write_text(LAB_TEXT)
        proc = run(src, ["sot", "push", "lab.yaml", "--url", url], directory, timeout=60,
                   extra_env={"CLUSTERFORGE_SOT_TOKEN": "corpus-token"})
        results.append((f"url:{url}", classify(proc)))
    for name, argv in (("roll --check bogus", ["roll", "lab.yaml", "--check", "bogus", "--target", "lab"]),
                       ("replace --check bogus", ["replace", "lab.yaml", "su01-r01-gpu01", "--check", "bogus"]),
                       ("provision --tags bogus", ["provision", "lab.yaml", "--tags", "bogus"])):
        directory = _workdir(base, name)
        (directory / "lab.yaml").write_text(LAB_TEXT)
        proc = run(src, argv, directory, timeout=300)
        started = any(word in proc.stderr for word in ("provision ", "roll: batch", "re-imag", "Previewing"))
        results.append((f"args:{name}", classify(proc, silent=started or proc.returncode != 2)))
    results += _parallel(_argv_tasks(src, base) + _through_every_command(src, base), jobs)
    return results


Task = Callable[[], tuple[str, str]]


def _parallel(tasks: list[Task], jobs: int) -> list[tuple[str, str]]:
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda task: task(), tasks))


def _argv_tasks(src: Path, base: Path) -> list[Task]:
    """tests/unit/test_hostile_round_commands.py: health, remediate, ib check, unlock, verify and --backend-url;
    the expected exit code, one stderr line (a usage error may add typer's two lines of usage) and nothing written."""
    tasks: list[Task] = []
    for name, argv, code, message in argv_cases():
        def task(name: str = name, argv: list[str] = argv, code: int = code, message: str = message) -> tuple[str, str]:
            directory = argv_dir(_workdir(base, f"argv-{name}"))
            before = _tree(directory)
            proc = run(src, argv, directory, timeout=120)
            kind = classify(proc, silent=proc.returncode != code or message not in proc.stderr)
            if kind == "refused" and _tree(directory) != before:
                kind = "wrote"
            return f"argv:{name}", kind
        tasks.append(task)
    return tasks


def _through_every_command(src: Path, base: Path) -> list[Task]:
    """Every declaration table (EDITS, FIELDS, DECLARATION, NEVER_APPLIED) through plan, render, report and diff
    (validate has run each above): refused at a located line, exit 1, `--out` never created and nothing else
    written beside the declaration."""
    made: list[tuple[str, Callable[[Path], Path]]] = []
    for c in EDITS:
        made.append((f"edit:{c[0]}", lambda d, c=c: _write(d, LAB_TEXT.replace(c[1], c[2], 1))))
    for c in FIELDS:
        made.append((f"field:{c[0]}", lambda d, c=c: _write(d, LAB_TEXT.replace(c[1], c[2], 1))))
    for name, example, old, new, _, _ in DECLARATION:
        made.append((f"recent:{name}", lambda d, e=example, o=old, n=new:
                     _good(d, BASES[e], declaration_case(d, e, o, n))))
    for name, base_name, inventory_edit, servers_edit, *_ in NEVER_APPLIED:
        made.append((f"never-applied:{name}", lambda d, b=base_name, i=inventory_edit, e=servers_edit:
                     _good(d, SILENT_BASES[b], silent_case(d, b, i, e))))
    tasks: list[Task] = []
    for command in ("plan", "render", "report", "diff"):
        for name, make in made:
            def task(name: str = name, make: Callable[[Path], Path] = make, command: str = command) -> tuple[str, str]:
                directory = base / re.sub(r"[^A-Za-z0-9_.-]", "_", f"every-{command}-{name}")
                directory.mkdir(parents=True)
                path = make(directory)
                argv = {"plan": ["plan", path.name], "render": ["render", path.name, "--out", "out"],
                        "report": ["report", path.name, "--out", "out"],
                        "diff": ["diff", "good.yaml", path.name]}[command]
                before = _tree(directory)
                kind = classify(run(src, argv, directory), located=True)
                if kind == "refused" and ((directory / "out").exists() or _tree(directory) != before):
                    kind = "wrote"
                return f"{command}:{name}", kind
            tasks.append(task)
    return tasks


def _write(directory: Path, text: str) -> Path:
    """case.yaml (the hostile one) and good.yaml (its unedited example) beside a copy of the catalog."""
    shutil.copytree(ROOT / "inventory" / "catalog", directory / "catalog")
    (directory / "case.yaml").write_text(text)
    return _good(directory, LAB_TEXT, directory / "case.yaml")


def _good(directory: Path, text: str, path: Path) -> Path:
    (directory / "good.yaml").write_text(text)
    return path


def _writer_cases(src: Path, base: Path) -> list[tuple[str, str]]:
    results = []
    directory = _workdir(base, "writer-escape")
    servers = directory / "catalog" / "servers.yaml"
    servers.write_text(re.sub(r"vendor: .*", "vendor: ../../../ESCAPED", servers.read_text()))
    (directory / "lab.yaml").write_text(LAB_TEXT)
    (directory / "x" / "y").mkdir(parents=True)
    proc = run(src, ["export", "device-types", "../../lab.yaml", "--out", "out"], directory / "x" / "y")
    escaped = any(p.name == "ESCAPED" for p in base.rglob("ESCAPED"))
    results.append(("writer:vendor ../../../ESCAPED", classify(proc, silent=escaped)))
    directory = _workdir(base, "writer-empty")
    (directory / "lab.yaml").write_text(LAB_TEXT)
    (directory / "ansible").mkdir()
    (directory / "ansible" / "mine.txt").write_text("mine\n")
    proc = run(src, ["render", "lab.yaml", "--out", ""], directory)
    results.append(("writer:--out ''", classify(proc, silent=not (directory / "ansible" / "mine.txt").exists())))
    directory = _workdir(base, "writer-half")
    (directory / "lab.yaml").write_text(LAB_TEXT)
    made = run(src, ["render", "lab.yaml", "--out", "out"], directory, timeout=900)  # the set-up, not a case
    if made.returncode != 0:
        raise SystemExit(f"writer-half set-up: render exited {made.returncode}: {made.stderr[-2000:]}")
    shutil.rmtree(directory / "out" / "switches")
    (directory / "out" / "switches").write_text("a file\n")
    (directory / "out" / "assets.csv").write_text("old\n")
    proc = run(src, ["render", "lab.yaml", "--out", "out"], directory)
    results.append(("writer:DIR/switches a file", classify(
        proc, silent=(directory / "out" / "assets.csv").read_text() != "old\n")))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the src/ directory to run")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="cases run at once (the later, larger tables)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cf-corpus-") as tmp:
        results = corpus(args.src.resolve(), Path(tmp), max(args.jobs, 1))
    counts = {kind: sum(1 for _, k in results if k == kind)
              for kind in ("refused", "traceback", "unlocated", "silent", "wrote")}
    print(f"{args.src}: {len(results)} hostile inputs: {counts['refused']} refused, {counts['traceback']} tracebacks,"
          f" {counts['unlocated']} unlocated errors, {counts['silent']} silent accepts,"
          f" {counts['wrote']} refused but wrote files")
    for name, kind in results:
        if kind != "refused":
            print(f"  {kind:9s} {name}")


if __name__ == "__main__":
    main()
