"""scripts/setup-pulumi.sh says what it is doing during a long build (heartbeat with the phase).

The real script runs in a copy of the repository layout with a stand-in `go` (GO=...) whose build
first fills the module cache (downloading) and then only takes time (compiling), then writes an
engine that reports the pinned version. Nothing here touches the real tools/bin.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKE_GO = """#!/bin/sh
case "$1" in
  env) case "$2" in GOCACHE) echo "$FAKE/gocache";; GOMODCACHE) echo "$FAKE/gomod";; esac ;;
  list) echo "$FAKE/sdk" ;;
  build)
    echo "$*" >> "$FAKE/builds"
    while [ "$1" != "-o" ]; do shift; done; out="$2"
    mkdir -p "$FAKE/gomod" "$FAKE/gocache"
    for i in 1 2; do head -c 2097152 /dev/zero > "$FAKE/gomod/m$i"; sleep 1.2; done
    sleep 2.5
    printf '#!/bin/sh\\necho %s\\n' "$PINNED" > "$out"; chmod +x "$out" ;;
esac
"""


def _checkout(repo: Path) -> None:
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup-pulumi.sh", repo / "scripts")
    shutil.copytree(ROOT / "tools" / "pulumi-build", repo / "tools" / "pulumi-build")
    shutil.copytree(ROOT / "tools" / "launchers", repo / "tools" / "launchers")


def _fake_go(tmp_path: Path) -> dict[str, str]:
    pinned = next(line.split()[1] for line in (ROOT / "tools/pulumi-build/go.mod").read_text().splitlines()
                  if line.strip().startswith("github.com/pulumi/pulumi/pkg/v3 "))
    fake = tmp_path / "fake"
    (fake / "sdk" / "python" / "cmd").mkdir(parents=True)
    (fake / "sdk" / "python" / "cmd" / "pulumi-language-python-exec").write_text("#!/bin/sh\n")
    go = tmp_path / "go"
    go.write_text(FAKE_GO)
    go.chmod(0o755)
    return {"PATH": "/usr/bin:/bin", "GO": str(go), "FAKE": str(fake), "PINNED": pinned, "SETUP_HEARTBEAT_S": "1",
            "CLUSTERFORGE_PULUMI_CACHE": str(tmp_path / "engine-cache")}


def test_two_checkouts_build_the_engine_once(tmp_path: Path) -> None:
    """The engine is built once into the machine's cache and copied into every checkout's tools/bin,
    also when two set-ups run at once (the second waits on the cache's lock)."""
    env = _fake_go(tmp_path)
    repos = [tmp_path / "a", tmp_path / "b"]
    for repo in repos:
        _checkout(repo)
    procs = [subprocess.Popen(["bash", str(repo / "scripts" / "setup-pulumi.sh")], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env) for repo in repos]
    outs = [proc.communicate(timeout=120)[0] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outs
    engine_builds = [line for line in (tmp_path / "fake" / "builds").read_text().splitlines()
                     if "cmd/pulumi" in line and "language" not in line]
    assert len(engine_builds) == 1, engine_builds
    assert sum("from the machine's cache" in out for out in outs) == 1, outs
    for repo in repos:
        engine = repo / "tools" / "bin" / "pulumi"
        assert not engine.is_symlink() and os.access(engine, os.X_OK)
        assert subprocess.run([str(engine)], capture_output=True, text=True).stdout.strip() == env["PINNED"]


def test_cold_build_prints_a_heartbeat_with_its_phase(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _checkout(repo)
    env = _fake_go(tmp_path)
    pinned = env["PINNED"]
    proc = subprocess.run(["bash", str(repo / "scripts" / "setup-pulumi.sh")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    beats = [line for line in proc.stdout.splitlines() if line.startswith("setup-pulumi: ... building pulumi:")]
    assert len(beats) >= 3, proc.stdout
    assert any("downloading Go modules" in line for line in beats), proc.stdout
    assert re.search(r": compiling, \d+s so far \(module cache \d+ MB, build cache \d+ MB\)$", beats[-1]), proc.stdout
    assert f"built pulumi {pinned}" in proc.stdout
    assert os.access(repo / "tools" / "bin" / "pulumi", os.X_OK)
    # the heartbeat stops with the step: nothing prints after the build line but the later steps
    after = proc.stdout.split(f"built pulumi {pinned}", 1)[1]
    assert "... building pulumi:" not in after
