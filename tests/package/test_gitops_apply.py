"""PR → apply: ci/clusterforge-apply.sh after merges in a real Git repository, the real CLI and Pulumi engine
(`files` target: switch configs into a directory, no hosts), and the apply's comment posted through
ci/post-comment.sh to the loopback stand-in of GitHub's comment API (tests/package/forge_standin.py).

Two pull requests are merged one after the other. The second merge's apply starts while another run (this test,
holding the stack's lock as an earlier apply would) still holds the stack: it waits for the lock, queued, and
applies once it is released; a run whose bounded wait runs out fails saying the lock is still held. The first
merge's apply comes late (a slow runner), while or after the second's runs: it leaves the stack at the second
merge's revision, which holds its own, rather than taking the cluster back. Each comment shows the stack's
result and the wait."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from forge_standin import FORGES, TOKEN, Thread, serving

from clusterforge.pulumi import stacklock
from clusterforge.pulumi.automation import engine_binary

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
APPLY = ROOT / "ci" / "clusterforge-apply.sh"
POST = ROOT / "ci" / "post-comment.sh"
INVENTORY = "inventory/lab.yaml"
REVIEW_MARKER = f"<!-- clusterforge-review: {INVENTORY} -->"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **GIT_ENV})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _merged(repo: Path, branch: str, old: str, new: str) -> str:
    """Merge a pull request (branch ``branch`` changing ``old`` to ``new``) into main; the merge commit."""
    _git(repo, "checkout", "-q", "-b", branch, "main")
    lab = repo / INVENTORY
    lab.write_text(lab.read_text().replace(old, new, 1))
    _git(repo, "commit", "-q", "-am", branch)
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--no-ff", "-m", f"Merge {branch}", branch)
    return _git(repo, "rev-parse", "HEAD")


def _checkout(repo: Path, rev: str, where: Path) -> Path:
    _git(repo, "clone", "-q", str(repo), str(where))
    _git(where, "checkout", "-q", rev)
    return where


def _apply(checkout: Path, rev: str, state: Path, backend: Path, wait_s: int) -> subprocess.Popen[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CLUSTERFORGE_", "PULUMI_CONFIG"))}
    env.update({"PATH": os.pathsep.join([str(BIN), env.get("PATH", "")]), "CLUSTERFORGE_STATE_DIR": str(state),
                "CLUSTERFORGE_BACKEND_URL": f"file://{backend}", "PULUMI_CONFIG_PASSPHRASE": "the team's",
                "CLUSTERFORGE_STACK": "lab", "CLUSTERFORGE_LOCK_WAIT_S": str(wait_s),
                "CLUSTERFORGE_APPLY_ARGS": "--target files --no-provision --no-verify",
                "CLUSTERFORGE_PYTHON": sys.executable, "CLUSTERFORGE": str(BIN / "clusterforge"),
                "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])})
    return subprocess.Popen(["bash", str(APPLY), INVENTORY, rev, str(checkout / "out")], cwd=checkout, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _said(checkout: Path, words: str) -> bool:
    err = checkout / "out" / "apply-lab.err"
    return err.exists() and words in err.read_text()


def test_merges_apply_queued_on_the_lock_and_the_comment_shows_it(tmp_path: Path) -> None:
    if not engine_binary().exists():
        pytest.skip(f"{engine_binary()} is absent (build it with scripts/setup-pulumi.sh)")
    if not (BIN / "clusterforge").exists() or shutil.which("curl") is None:
        pytest.fail("the clusterforge entry point and curl are needed (the project's venv; Debian: curl)")
    repo = tmp_path / "infra"
    (repo / "inventory").mkdir(parents=True)
    shutil.copy(ROOT / INVENTORY, repo / INVENTORY)
    shutil.copytree(ROOT / "inventory" / "catalog", repo / "inventory" / "catalog")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    first = _merged(repo, "owner", "owner: platform-team", "owner: infra-team")
    second = _merged(repo, "pue", "pue: 1.4", "pue: 1.3")
    backend = tmp_path / "backend"
    backend.mkdir()

    runs: dict[str, tuple[Path, subprocess.Popen[str]]] = {}

    def start(name: str, rev: str, wait_s: int) -> None:
        checkout = _checkout(repo, rev, tmp_path / name)
        runs[name] = checkout, _apply(checkout, rev, tmp_path / f"state-{name}", backend, wait_s)

    def until(condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 120
        while not condition():
            assert time.monotonic() < deadline, f"not seen in 120 s: {what}"
            time.sleep(0.3)

    say: list[str] = []
    # an earlier apply holds the stack: the second merge's apply queues behind it; one with a 1 s wait gives up
    with stacklock.held(stacklock.store_for(f"file://{backend}"), "lab", "up", 60, say.append):
        start("second", second, 300)
        start("impatient", second, 1)
        until(lambda: _said(runs["second"][0], "waiting for it") and runs["impatient"][1].poll() is not None,
              "the second apply waiting, the impatient one ended")
    # the first merge's apply, late (a slow runner), comes while the second's applies: it must not take the
    # cluster back to its older revision
    until(lambda: _said(runs["second"][0], "took the lock after waiting"), "the second apply taking the lock")
    start("first", first, 300)
    results = {name: (proc.communicate(timeout=300), proc.returncode) for name, (_, proc) in runs.items()}
    comments = {name: (checkout / "out" / "comment.md").read_text() for name, (checkout, _) in runs.items()}

    assert results["impatient"][1] == 1
    assert "| `lab` | **failed** (exit 1) |" in comments["impatient"] and "**still held**" in comments["impatient"]
    assert "still, after waiting 1 s" in comments["impatient"]  # the bounded wait says so
    for name in ("first", "second"):
        (out, err), code = results[name]
        assert code == 0, out + err + comments[name]
        assert comments[name].startswith(f"<!-- clusterforge-review-apply: {INVENTORY} -->\n")
    assert "| 1 | `lab` | applied | 74 created, 0 unchanged | took the lock after waiting" in comments["second"]
    assert "Queued behind another run:" in comments["second"] and "(queued)" in comments["second"]
    assert f"| 1 | `lab` | up to date | none: the stack is at {second}, a later revision" in comments["first"]
    print(f"\nthe late first apply {'queued behind the second' if 'queued' in comments['first'] else 'came after it'}")

    # the comment goes to the merged pull request, beside (not over) its review comment
    thread = Thread(FORGES["github"], comments=[{"id": 100, "body": f"{REVIEW_MARKER}\nreview\n"}])
    with serving(thread) as base:
        env = {**os.environ, **thread.forge.env, "GITHUB_API_URL": base, "GH_TOKEN": TOKEN}
        posted = subprocess.run(["bash", str(POST), "github", str(runs["second"][0] / "out" / "comment.md")],
                                env=env, capture_output=True, text=True, timeout=60)
    assert posted.returncode == 0, posted.stderr
    assert thread.comments[0]["body"] == f"{REVIEW_MARKER}\nreview\n"
    assert len(thread.comments) == 2 and "| 1 | `lab` | applied |" in thread.comments[1]["body"]
