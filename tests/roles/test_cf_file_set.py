"""roles/k8s_control_plane/library/cf_file_set.py run as Ansible runs a module (its arguments in a JSON file):
the directories and files written once, a second run changes nothing, only what differs is rewritten, no
temporary file is left behind, and a bad mode or a relative path is refused by name."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

MODULE = Path(__file__).resolve().parents[2] / "roles" / "k8s_control_plane" / "library" / "cf_file_set.py"


def _run(tmp_path: Path, **args) -> dict:
    spec = tmp_path / "args.json"
    spec.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    out = subprocess.run([sys.executable, str(MODULE), str(spec)], capture_output=True, text=True, timeout=60)
    return json.loads(out.stdout)


def test_writes_once_then_changes_nothing_then_only_what_differs(tmp_path: Path):
    root = tmp_path / "etc"
    pki = root / "pki"
    files = {str(pki / "ca.key"): "secret\n", str(root / "admin.conf"): "kind: Config\n"}
    first = _run(tmp_path, directories=[str(root), {"path": str(pki), "mode": "0700"}],
                 files=files, mode="0600")
    assert first["changed"] is True, first
    assert first["changed_paths"] == [str(root), str(pki), *files]
    assert stat.S_IMODE(pki.stat().st_mode) == 0o700
    for path, text in files.items():
        assert Path(path).read_text() == text and stat.S_IMODE(Path(path).stat().st_mode) == 0o600
    again = _run(tmp_path, directories=[{"path": str(root), "mode": "0755"}, {"path": str(pki), "mode": "0700"}],
                 files=files, mode="0600")
    assert again["changed"] is False and again["changed_paths"] == [], again
    os.chmod(root / "admin.conf", 0o644)
    changed = {**files, str(pki / "ca.key"): "rotated\n"}
    third = _run(tmp_path, files=changed, mode="0600")
    assert third["changed_paths"] == [str(pki / "ca.key"), str(root / "admin.conf")], third
    assert (pki / "ca.key").read_text() == "rotated\n"
    assert stat.S_IMODE((root / "admin.conf").stat().st_mode) == 0o600
    assert sorted(p.name for p in pki.iterdir()) == ["ca.key"]  # no temporary file left
    assert "secret" not in json.dumps(third) and "rotated" not in json.dumps(third)  # the texts are never echoed


def test_check_mode_reports_and_writes_nothing(tmp_path: Path):
    target = tmp_path / "unit.service"
    result = _run(tmp_path, files={str(target): "[Unit]\n"}, _ansible_check_mode=True)
    assert result["changed"] is True and result["changed_paths"] == [str(target)]
    assert not target.exists()


def test_bad_mode_and_relative_path_are_refused(tmp_path: Path):
    bad_mode = _run(tmp_path, files={str(tmp_path / "a"): "x"}, mode="rw-r--r--")
    assert bad_mode.get("failed") is True and "mode 'rw-r--r--' is not an octal number" in bad_mode["msg"]
    relative = _run(tmp_path, files={"etc/../a": "x"})
    assert relative.get("failed") is True and "is not a normalised absolute path" in relative["msg"]
    assert not (tmp_path / "a").exists()


def test_owner_and_group_are_enforced(tmp_path: Path):
    target = tmp_path / "slurm.conf"
    target.write_text("ClusterName=lab\n")
    os.chown(target, 65534, 65534)
    os.chmod(target, 0o644)
    result = _run(tmp_path, files={str(target): "ClusterName=lab\n"}, owner="root", group="root")
    assert result["changed_paths"] == [str(target)], result
    assert (target.stat().st_uid, target.stat().st_gid) == (0, 0)
    assert _run(tmp_path, files={str(target): "ClusterName=lab\n"}, owner="root", group="root")["changed"] is False
    unknown = _run(tmp_path, files={str(target): "x"}, owner="no-such-user-cf")
    assert unknown.get("failed") is True and "no such user or group" in unknown["msg"]


def test_absent_files_are_removed_and_a_directory_is_refused(tmp_path: Path):
    stale = tmp_path / "gpu-operator-values.yaml"
    stale.write_text("old\n")
    result = _run(tmp_path, absent=[str(stale), str(tmp_path / "never-there.yaml")])
    assert result["changed_paths"] == [str(stale)] and not stale.exists(), result
    assert _run(tmp_path, absent=[str(stale)])["changed"] is False
    (tmp_path / "dir").mkdir()
    refused = _run(tmp_path, absent=[str(tmp_path / "dir")])
    assert refused.get("failed") is True and "is a directory" in refused["msg"] and (tmp_path / "dir").is_dir()
