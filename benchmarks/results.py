"""Machine-readable figures beside a benchmark's printed table, for benchmarks/write_page.py.

Where the environment names a results directory (CLUSTERFORGE_BENCH_RESULTS, set by `make bench`), a benchmark
script writes `<bench>.jsonl` there: one JSON record a figure ({"kind": ..., fields}), and last a `run` record with
the script's parameters, the 1-minute load average at its start and end and its wall seconds. A run starts the
file afresh, so the directory holds each script's latest run. Without the variable nothing is written and the
scripts only print, as before.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ENV = "CLUSTERFORGE_BENCH_RESULTS"


def results_dir() -> Path | None:
    """The directory the environment names, or None (then nothing is recorded)."""
    named = os.environ.get(ENV)
    return Path(named).resolve() if named else None


class Recorder:
    """Appends one JSON record a line to `<dir>/<bench>.jsonl`; does nothing without a directory."""

    def __init__(self, bench: str, directory: Path | None) -> None:
        self.bench = bench
        self.path = directory / f"{bench}.jsonl" if directory else None
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("")

    def record(self, kind: str, **fields: Any) -> None:
        if self.path is None:
            return
        with self.path.open("a") as handle:
            handle.write(json.dumps({"kind": kind, **fields}) + "\n")


@contextmanager
def recording(bench: str, **params: Any) -> Iterator[Recorder]:
    """A Recorder for one run of `bench`; the `run` record (params, load, wall seconds) is written when the run
    ends without an exception, so a page is never built from a run that failed half-way."""
    recorder = Recorder(bench, results_dir())
    load_start, started = os.getloadavg()[0], time.perf_counter()
    yield recorder
    recorder.record("run", params=params, argv=sys.argv[1:], load_start=round(load_start, 2),
                    load_end=round(os.getloadavg()[0], 2), wall_s=round(time.perf_counter() - started, 1))


def read_results(directory: Path) -> dict[str, list[dict]]:
    """Every `<bench>.jsonl` under directory: bench name -> its records in order."""
    return {path.stem: [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            for path in sorted(directory.glob("*.jsonl"))}
