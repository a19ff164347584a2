#!/usr/bin/python
# clusterforge: Apache-2.0
"""cf_file_set: a set of files, each with its whole content given, written in one module run.

One task instead of one copy/template task per file: every file of the set is compared on the host and
only those whose content or mode differ are written (each to a temporary file in its own directory,
then renamed over the old one, so a run killed halfway leaves each file old or new, never partial).
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: cf_file_set
short_description: Ensure a set of directories and whole-content files, in one run.
description:
  - Creates the directories (with their modes), then writes each file whose content, mode or owner differs,
    then removes the files named absent.
  - Each file is written to a temporary file in its directory and renamed into place.
  - Returns the paths it changed, so that the caller restarts only the services that read them.
options:
  directories:
    description: Directories to ensure, each a dict with path and mode (octal string), or a path (mode 0755).
    type: list
    elements: raw
    default: []
  files:
    description: Absolute path to the file's whole text. Never logged.
    type: dict
    default: {}
  mode:
    description: Mode of every file (octal string).
    type: str
    default: "0644"
  absent:
    description: Paths of files to remove where they exist (a directory is refused).
    type: list
    elements: str
    default: []
  owner:
    description: Owner of every file (a user name); unset keeps the writer's (root under become).
    type: str
  group:
    description: Group of every file (a group name); unset keeps the writer's.
    type: str
author: clusterforge
"""

RETURN = r"""
changed_paths:
  description: The directories and files created or changed, in the order given.
  type: list
  elements: str
  returned: always
"""

import grp
import os
import pwd
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule


def _mode(text: str, module: AnsibleModule) -> int:
    try:
        value = int(text, 8)
    except (TypeError, ValueError):
        module.fail_json(msg=f"cf_file_set: mode {text!r} is not an octal number")
    if not 0 <= value <= 0o7777:
        module.fail_json(msg=f"cf_file_set: mode {text!r} is out of range")
    return value


def _absolute(path: str, module: AnsibleModule) -> str:
    if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path or os.path.normpath(path) != path:
        module.fail_json(msg=f"cf_file_set: {path!r} is not a normalised absolute path")
    return path


def _ensure_directory(path: str, mode: int, check: bool) -> bool:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not check:
            os.makedirs(path, mode)
            os.chmod(path, mode)
        return True
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(path)
    if stat.S_IMODE(st.st_mode) != mode:
        if not check:
            os.chmod(path, mode)
        return True
    return False


def _differs(path: str, data: bytes, mode: int, uid: int, gid: int) -> bool:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    if not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != mode or st.st_size != len(data):
        return True
    if uid not in (-1, st.st_uid) or gid not in (-1, st.st_gid):
        return True
    with open(path, "rb") as f:
        return f.read() != data


def _write(path: str, data: bytes, mode: int, uid: int, gid: int) -> None:
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".cf_file_set.", dir=directory)
    try:
        if uid != -1 or gid != -1:
            os.fchown(fd, uid, gid)
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "directories": {"type": "list", "elements": "raw", "default": []},
            "files": {"type": "dict", "default": {}, "no_log": True},
            "mode": {"type": "str", "default": "0644"},
            "absent": {"type": "list", "elements": "str", "default": []},
            "owner": {"type": "str"},
            "group": {"type": "str"},
        },
        supports_check_mode=True,
    )
    check = module.check_mode
    file_mode = _mode(module.params["mode"], module)
    try:
        uid = pwd.getpwnam(module.params["owner"]).pw_uid if module.params["owner"] else -1
        gid = grp.getgrnam(module.params["group"]).gr_gid if module.params["group"] else -1
    except KeyError as exc:
        module.fail_json(msg=f"cf_file_set: no such user or group: {exc}")
    changed: list[str] = []
    try:
        for entry in module.params["directories"]:
            entry = entry if isinstance(entry, dict) else {"path": entry, "mode": "0755"}
            path = _absolute(entry.get("path"), module)
            if _ensure_directory(path, _mode(str(entry.get("mode", "0755")), module), check):
                changed.append(path)
        for path, text in module.params["files"].items():
            _absolute(path, module)
            data = (text if isinstance(text, str) else str(text)).encode()
            if _differs(path, data, file_mode, uid, gid):
                if not check:
                    _write(path, data, file_mode, uid, gid)
                changed.append(path)
        for path in module.params["absent"]:
            _absolute(path, module)
            if os.path.lexists(path):
                if os.path.isdir(path) and not os.path.islink(path):
                    raise IsADirectoryError(21, "is a directory, not removed", path)
                if not check:
                    os.unlink(path)
                changed.append(path)
    except OSError as exc:
        module.fail_json(msg=f"cf_file_set: {exc.filename or ''}: {exc.strerror or exc}", changed_paths=changed,
                         changed=bool(changed))
    module.exit_json(changed=bool(changed), changed_paths=changed)


if __name__ == "__main__":
    main()
