"""The one output writer (clusterforge.outdir) through the commands that write: nothing outside --out, never an
empty or root --out, a user's own files never deleted, and a failure part way leaves DIR as it was (issue 26)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, ROOT, run_cli, workdir

from clusterforge import outdir
from clusterforge.outdir import MANIFEST, OutputRefused, PathEscape, write_file, write_tree


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _lab(tmp_path: Path) -> Path:
    path = workdir(tmp_path / "inv") / "lab.yaml"
    path.write_text(LAB_TEXT)
    return path


def test_device_type_vendor_cannot_leave_out(tmp_path: Path, capsys):
    """A catalog vendor of ../../../ESCAPED wrote ESCAPED/<slug>.yaml three levels above --out; the vendor grammar
    refuses it at its field, as validate does (the writer's own containment: test_names_outside_the_root_are_refused).
    """
    inventory = _lab(tmp_path)
    servers = inventory.parent / "catalog" / "servers.yaml"
    servers.write_text(re.sub(r"vendor: .*", "vendor: ../../../ESCAPED", servers.read_text()))
    out = tmp_path / "a" / "b" / "c" / "out"
    outcome = run_cli(capsys, "export", "device-types", str(inventory), "--out", str(out))
    assert outcome.code == 1, outcome.err
    assert "Traceback" not in outcome.err
    assert "catalog.servers." in outcome.err and "not a valid vendor" in outcome.err and "ESCAPED" in outcome.err
    assert not list(tmp_path.rglob("ESCAPED*")), "a file was written outside --out"
    assert not out.exists() or _snapshot(out) == {}


def test_empty_out_is_refused_and_the_current_directory_kept(tmp_path: Path, capsys, monkeypatch):
    """`render --out ""` (an unset $OUT in CI) rendered into the current directory and replaced ./ansible/."""
    inventory = _lab(tmp_path)
    cwd = tmp_path / "cwd"
    (cwd / "ansible").mkdir(parents=True)
    (cwd / "ansible" / "site-notes.txt").write_text("mine\n")
    monkeypatch.chdir(cwd)
    before = _snapshot(cwd)
    for argv in (["render", str(inventory), "--out", ""], ["report", str(inventory), "--out", " "],
                 ["export", "batfish", str(inventory), "-o", ""], ["render", str(inventory), "--out", "/"]):
        outcome = run_cli(capsys, *argv)
        assert outcome.code == 2, (argv, outcome.err)
        assert "Traceback" not in outcome.err
        assert "empty output directory" in outcome.err or "file-system root" in outcome.err
    assert _snapshot(cwd) == before


def test_out_dot_never_deletes_a_users_file(tmp_path: Path, capsys, monkeypatch):
    """--out . is allowed, but an existing ./ansible/ holding a file clusterforge did not write is not replaced."""
    inventory = _lab(tmp_path)
    cwd = tmp_path / "cwd"
    (cwd / "ansible").mkdir(parents=True)
    (cwd / "ansible" / "site-notes.txt").write_text("mine\n")
    monkeypatch.chdir(cwd)
    before = _snapshot(cwd)
    outcome = run_cli(capsys, "render", str(inventory), "--out", ".")
    assert outcome.code == 3, outcome.err
    assert "site-notes.txt" in outcome.err and "not written by clusterforge" in outcome.err
    assert _snapshot(cwd) == before
    (cwd / "ansible" / "site-notes.txt").unlink()
    assert run_cli(capsys, "render", str(inventory), "--out", ".").code == 0
    assert (cwd / "ansible" / "inventory.yml").is_file() and (cwd / MANIFEST).is_file()


def test_a_file_where_a_directory_goes_replaces_nothing(tmp_path: Path, capsys):
    """DIR/switches a regular file: exit 3 with ansible/ and assets.csv already replaced, before."""
    inventory = _lab(tmp_path)
    out = tmp_path / "out"
    assert run_cli(capsys, "render", str(inventory), "--out", str(out)).code == 0
    (out / "ansible" / "host_vars" / "su01-r01-gpu01.yml").write_text("old: 1\n")
    import shutil

    shutil.rmtree(out / "switches")
    (out / "switches").write_text("a file\n")
    before = _snapshot(out)
    inode = (out / "ansible").stat().st_ino
    outcome = run_cli(capsys, "render", str(inventory), "--out", str(out))
    assert outcome.code == 3, outcome.err
    assert "Traceback" not in outcome.err
    assert f"{out / 'switches'}: is a file, the output is a directory; nothing was replaced" in outcome.err
    assert _snapshot(out) == before
    assert (out / "ansible").stat().st_ino == inode
    assert not [p for p in out.iterdir() if p.name.startswith(".clusterforge-stage-")]


def test_a_failed_swap_is_rolled_back(tmp_path: Path, monkeypatch):
    """The third top-level rename fails (a disk error part way): the two swapped before are put back."""
    out = tmp_path / "out"
    write_tree(out, {"a/x": "old a", "b.txt": "old b", "c/y": "old c"})
    before = _snapshot(out)
    real = os.rename
    calls = []

    def failing(src, dst):
        calls.append((Path(src).name, Path(dst).name))
        if Path(dst) == out / "c" and Path(src).name == "c":
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(outdir.os, "rename", failing)
    with pytest.raises(OSError, match="No space"):
        write_tree(out, {"a/x": "new a", "b.txt": "new b", "c/y": "new c"})
    monkeypatch.setattr(outdir.os, "rename", real)
    assert _snapshot(out) == before
    assert ("c", "c") in calls
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "a", "b.txt", "c"]


@pytest.mark.parametrize("name", ["../x", "a/../../x", "/etc/x", "a//b", "./a", "a/./b", "", "a\nb",
                                  f"{MANIFEST}", ".clusterforge-stage-1/x"])
def test_names_outside_the_root_are_refused(tmp_path: Path, name):
    out = tmp_path / "out"
    with pytest.raises(OutputRefused):
        write_tree(out, {"ok.txt": "1", name: "2"})
    with pytest.raises(OutputRefused):
        write_file(out, name, "2")
    assert not (tmp_path / "x").exists() and not Path("/etc/x").exists()
    assert not out.exists() or not any(out.iterdir())


def test_a_planted_symlink_cannot_carry_a_write_out(tmp_path: Path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / "switches").symlink_to(elsewhere)
    with pytest.raises(OutputRefused, match="symbolic link"):
        write_tree(out, {"switches/leaf1/frr.conf": "x"})
    with pytest.raises(PathEscape):
        write_file(out, "switches/leaf1/frr.conf", "x")
    assert not any(elsewhere.iterdir())
    (out / "up").symlink_to(tmp_path)
    with pytest.raises(OutputRefused):
        write_file(out, "up/escaped.txt", "x")
    assert not (tmp_path / "escaped.txt").exists()


def test_the_root_is_refused(tmp_path: Path):
    with pytest.raises(OutputRefused, match="root"):
        write_tree(Path("/"), {"x": "1"})
    with pytest.raises(OutputRefused, match="root"):
        write_tree(tmp_path / ".." / ".." / ".." / ".." / ".." / ".." / ".." / "..", {"x": "1"})


def test_own_files_of_an_earlier_write_are_replaced(tmp_path: Path):
    """A file the writer wrote before and does not write now (an SU removed) goes with its directory."""
    out = tmp_path / "out"
    write_tree(out, {"ansible/host_vars/a.yml": "a", "ansible/host_vars/b.yml": "b", "assets.csv": "x"})
    write_tree(out, {"ansible/host_vars/a.yml": "a2"})
    assert _snapshot(out) == {MANIFEST: b"ansible/host_vars/a.yml\nassets.csv\n",
                              "ansible/host_vars/a.yml": b"a2", "assets.csv": b"x"}


def test_collection_build_refuses_an_empty_out(tmp_path: Path, capsys):
    outcome = run_cli(capsys, "collection", "build", "--out", "")
    assert outcome.code == 2 and "empty output directory" in outcome.err
    assert ROOT.exists()


def test_collection_build_refuses_a_file_as_its_output_before_it_builds(tmp_path: Path, capsys):
    """The output is checked first: with an output that is a file, even a repository with nothing to build (no
    galaxy.yml, no roles) is refused for the output, not for what the build would have found."""
    from clusterforge.outdir import OutputRefused
    from clusterforge.provision.collection import build

    target = tmp_path / "dist"
    target.write_text("a file, not a directory\n")
    with pytest.raises(OutputRefused, match="exists and is not a directory"):
        build(target, repo_root=tmp_path / "empty")
    outcome = run_cli(capsys, "collection", "build", "--out", str(target))
    assert outcome.code == 3 and "exists and is not a directory" in outcome.err, outcome.err
    assert target.read_text() == "a file, not a directory\n"
