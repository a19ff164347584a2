"""The GitOps pipelines: both validate against the published workflow schemas (check-jsonschema's vendored
github-workflows and gitlab-ci), the pre-commit hook manifest validates, and the review steps the two
pipelines run (ci/clusterforge-review.sh) run on a real two-commit Git repository: a harmless change
passes with a comment and a preview, a renumbering change fails.

Posting the comment is tests/package/test_post_comment.py (both branches against a loopback stand-in of
each forge's comment API; no forge is reachable here)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
REVIEW = ROOT / "ci" / "clusterforge-review.sh"


def _tool(name: str) -> str:
    found = BIN / name
    if not found.exists():
        pytest.fail(f"{name} is not installed (it is in the project's test extras)")
    return str(found)


@pytest.mark.parametrize(("schema", "path"), [("vendor.github-workflows", "ci/github/clusterforge-review.yml"),
                                              ("vendor.gitlab-ci", "ci/gitlab/clusterforge-review.gitlab-ci.yml"),
                                              ("vendor.github-workflows", "ci/github/clusterforge-apply.yml"),
                                              ("vendor.gitlab-ci", "ci/gitlab/clusterforge-apply.gitlab-ci.yml")])
def test_pipelines_validate_against_the_published_schemas(schema: str, path: str, tmp_path: Path) -> None:
    checked = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", schema, str(ROOT / path)],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = tmp_path / Path(path).name  # guard: the schema check does reject a wrong key
    broken.write_text((ROOT / path).read_text().replace("script:", "scripts:").replace("runs-on:", "runs_on:"))
    rejected = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", schema, str(broken)],
                              capture_output=True, text=True, timeout=120)
    assert rejected.returncode != 0


def test_pre_commit_hook_manifest_is_valid() -> None:
    checked = subprocess.run([_tool("pre-commit"), "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A declaration repository with one commit on main: inventory/lab.yaml and its catalog."""
    repo = tmp_path / "infra"
    (repo / "inventory").mkdir(parents=True)
    shutil.copy(ROOT / "inventory" / "lab.yaml", repo / "inventory" / "lab.yaml")
    shutil.copytree(ROOT / "inventory" / "catalog", repo / "inventory" / "catalog")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    return repo


def _review(repo: Path, out: Path, preview: bool, inventory: str = "inventory/lab.yaml") -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")]),
           "CLUSTERFORGE_STATE_DIR": str(out.parent / "state"), "CLUSTERFORGE_REVIEW_PREVIEW": "1" if preview else "0"}
    return subprocess.run(["bash", str(REVIEW), inventory, "main", str(out)], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)


def test_a_harmless_change_passes_with_diff_and_preview(repo: Path, tmp_path: Path) -> None:
    lab = repo / "inventory" / "lab.yaml"
    lab.write_text(lab.read_text().replace("owner: platform-team", "owner: infra-team"))
    _git(repo, "checkout", "-q", "-b", "change")
    _git(repo, "commit", "-q", "-am", "owner")
    out = tmp_path / "review"
    done = _review(repo, out, preview=True)
    assert done.returncode == 0, done.stdout + done.stderr + "".join(
        p.read_text() for p in out.glob("*.err"))
    comment = (out / "comment.md").read_text()
    assert comment.startswith("<!-- clusterforge-review: inventory/lab.yaml -->\n")
    assert "| validate | passed |" in comment and "| diff (renumbering fails) | passed |" in comment
    assert "| preview | passed |" in comment and "to create" in comment
    preview = json.loads((out / "preview.json").read_text())
    assert preview["create"] and preview["delete"] == []
    assert json.loads((out / "diff.json").read_text())["ok"] is True


def test_a_renumbering_change_fails_and_says_so(repo: Path, tmp_path: Path) -> None:
    lab = repo / "inventory" / "lab.yaml"
    lab.write_text(lab.read_text().replace("supernet: 198.18.0.0/22", "supernet: 198.18.16.0/22", 1))
    _git(repo, "checkout", "-q", "-b", "renumber")
    _git(repo, "commit", "-q", "-am", "move the data supernet")
    out = tmp_path / "review"
    done = _review(repo, out, preview=False)
    assert done.returncode == 1
    comment = (out / "comment.md").read_text()
    assert "| validate | passed |" in comment and "| diff (renumbering fails) | **failed** |" in comment
    assert "renumbered" in (out / "diff.err").read_text()
    assert json.loads((out / "diff.json").read_text())["ok"] is False


def test_an_invalid_declaration_fails_validation(repo: Path, tmp_path: Path) -> None:
    lab = repo / "inventory" / "lab.yaml"
    lab.write_text(lab.read_text().replace("nodes: 4", "nodes: many"))
    _git(repo, "checkout", "-q", "-b", "broken")
    _git(repo, "commit", "-q", "-am", "broken")
    out = tmp_path / "review"
    assert _review(repo, out, preview=False).returncode == 1
    comment = (out / "comment.md").read_text()
    assert "| validate | **failed** |" in comment and "lab.yaml:" in comment


def test_a_hostile_inventory_name_is_escaped_in_the_comment(repo: Path, tmp_path: Path) -> None:
    """A declaration whose path holds `-->` and a backtick: the marker stays one HTML comment, the heading one
    code span with the name in it (clusterforge.markup; tests/unit/test_markup.py parses what it writes)."""
    name = "inventory/x-->`y.yaml"
    (repo / "inventory" / "lab.yaml").rename(repo / name)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "hostile name")
    out = tmp_path / "review"
    done = _review(repo, out, preview=False, inventory=name)
    assert done.returncode == 0, done.stdout + done.stderr + "".join(p.read_text() for p in out.glob("*.err"))
    first, heading = (out / "comment.md").read_text().splitlines()[:2]
    assert first == "<!-- clusterforge-review: inventory/x--%3E%60y.yaml -->"
    assert heading == "## clusterforge review of ``inventory/x-->`y.yaml`` against `main`"
