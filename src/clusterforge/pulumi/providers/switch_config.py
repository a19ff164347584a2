"""SwitchConfig: one switch's rendered NOS files, delivered to a directory or pushed over SSH.

Targets:
  {kind: file, path: DIR}          files land in DIR/<device>/<relpath>, each replaced atomically;
                                   a ZTP/HTTP server or the lab reads them from there.
  {kind: ssh, host, user, port, known_hosts, remote_dir, apply_command}
                                   the files are copied with scp into REMOTE_DIR/.<device>.cf-new and
                                   swapped into REMOTE_DIR/<device> in one remote shell, then the
                                   NOS loads them atomically (switch_apply.py: SONiC config replace +
                                   frr-reload, NVUE nv config replace/apply, EOS configure replace),
                                   or `apply_command` runs there instead when it is set.
                                   Host keys are checked against `known_hosts`; never trust on first use.

The SSH private key is the `credential` input: a Pulumi secret, so it stays encrypted in state.
Delete removes what this resource wrote (the files it listed; the remote device directory it owns).
Drift: with an unchanged declaration, `diff` reads a file target's delivered files back; one that is
missing or edited is named on the run's output and the update writes it again.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult, CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult

from clusterforge.pulumi.providers import _lifeline
from clusterforge.pulumi.providers.switch_apply import apply_script
from clusterforge.render.writer import write_file

__all__ = ["SwitchConfig", "SwitchConfigArgs", "SwitchConfigProvider", "SwitchTarget", "TARGET_KINDS"]

TARGET_KINDS = ("file", "ssh")
SSH_TIMEOUT_S = 120
# Changing where the files go is a new resource: the old location is cleaned by delete first.
REPLACE_KEYS = ("device", "target")
# The hash stands for the files: outputs do not repeat the contents (state is rewritten per step).
UPDATE_KEYS = ("content_hash", "credential")


@dataclass(frozen=True)
class SwitchTarget:
    """Where a switch's configuration goes. Plain data; the credential travels separately as a secret."""

    kind: str  # file | ssh
    path: str | None = None  # file: directory that gets <device>/<relpath>
    host: str | None = None  # ssh: address of the switch (its oob/management address)
    user: str | None = None
    port: int = 22
    known_hosts: str | None = None
    remote_dir: str = "/etc/clusterforge/switch"
    apply_command: str | None = None

    def to_input(self) -> dict[str, Any]:
        if self.kind == "file":
            return {"kind": "file", "path": self.path}
        out: dict[str, Any] = {"kind": "ssh", "host": self.host, "user": self.user, "port": self.port,
                               "known_hosts": self.known_hosts, "remote_dir": self.remote_dir}
        if self.apply_command:
            out["apply_command"] = self.apply_command
        return out


@dataclass(frozen=True)
class SwitchConfigArgs:
    device: str
    files: Mapping[str, str]
    content_hash: str
    target: SwitchTarget
    credential: pulumi.Input[str] | None = None  # SSH private key (PEM); pass a secret
    nos: str | None = None  # the vocab.Nos whose apply step loads the files (RenderedTree.nos); None: no apply


def _bad_relpath(relpath: str) -> bool:
    path = PurePosixPath(relpath)
    return path.is_absolute() or ".." in path.parts or not path.parts


# --- file target -----------------------------------------------------------------------------


def _device_dir(target: Mapping[str, Any], device: str) -> Path:
    return Path(target["path"]) / device


def _write_files(target: Mapping[str, Any], device: str, files: Mapping[str, str]) -> list[str]:
    root = _device_dir(target, device)
    for relpath in sorted(files):
        write_file(root, relpath, files[relpath])
    return sorted(files)


def _remove_files(target: Mapping[str, Any], device: str, relpaths: list[str]) -> None:
    root = _device_dir(target, device)
    for relpath in relpaths:
        (root / relpath).unlink(missing_ok=True)
    # Prune the directories we emptied, deepest first, never above the device directory.
    parents = sorted({(root / r).parent for r in relpaths} | {root}, key=lambda p: len(p.parts), reverse=True)
    for directory in parents:
        while directory != root.parent and directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
            directory = directory.parent


def file_drift(props: Mapping[str, Any]) -> list[str]:
    """What differs between the rendered files and those delivered to a file target (one line each).
    An ssh target is not read back (that would need the switch's credential on every preview)."""
    target = props.get("target") or {}
    if target.get("kind") != "file" or not target.get("path"):
        return []
    root = _device_dir(target, props["device"])
    problems = []
    for relpath, content in sorted((props.get("files") or {}).items()):
        path = root / relpath
        try:
            have = path.read_text()
        except FileNotFoundError:
            problems.append(f"{path} is missing")
            continue
        except OSError as exc:
            problems.append(f"{path} cannot be read ({exc.strerror})")
            continue
        if have != content:
            problems.append(f"{path} differs from the rendered config ({_first_difference(have, content)})")
    return problems


def _first_difference(have: str, want: str) -> str:
    for number, (a, b) in enumerate(zip(have.splitlines(), want.splitlines(), strict=False), 1):
        if a != b:
            return f"line {number}: {a.strip()[:60]!r}, rendered {b.strip()[:60]!r}"
    return f"{len(have.splitlines())} lines, rendered {len(want.splitlines())}"


# --- ssh target ------------------------------------------------------------------------------


class _Ssh:
    """ssh/scp argv with a key file that exists only for the lifetime of the context."""

    def __init__(self, target: Mapping[str, Any], credential: str | None) -> None:
        self.target = target
        self.credential = credential
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.key: Path | None = None

    def __enter__(self) -> _Ssh:
        self._tmp = tempfile.TemporaryDirectory(prefix="cf-ssh-")
        if self.credential:
            self.key = Path(self._tmp.name) / "id"
            fd = os.open(self.key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(self.credential if self.credential.endswith("\n") else self.credential + "\n")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    @property
    def workdir(self) -> Path:
        assert self._tmp is not None
        return Path(self._tmp.name)

    def _options(self) -> list[str]:
        opts = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                "-o", f"UserKnownHostsFile={self.target['known_hosts']}", "-o", "ConnectTimeout=15"]
        if self.key is not None:
            opts += ["-o", "IdentitiesOnly=yes", "-i", str(self.key)]
        return opts

    @property
    def destination(self) -> str:
        return f"{self.target['user']}@{self.target['host']}" if self.target.get("user") else self.target["host"]

    def run(self, remote_script: str) -> None:
        argv = ["ssh", *self._options(), "-p", str(self.target.get("port") or 22), self.destination, remote_script]
        _check_call(argv, f"ssh {self.destination}")

    def copy_dir(self, local: Path, remote: str) -> None:
        argv = ["scp", *self._options(), "-P", str(self.target.get("port") or 22), "-r", "-q",
                str(local), f"{self.destination}:{remote}"]
        _check_call(argv, f"scp to {self.destination}")


def _check_call(argv: list[str], what: str) -> None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=SSH_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{what}: no answer within {SSH_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")


def _push_ssh(target: Mapping[str, Any], device: str, files: Mapping[str, str], credential: str | None,
              nos: str | None) -> None:
    remote_dir = target.get("remote_dir") or SwitchTarget.remote_dir
    quoted_dir = shlex.quote(remote_dir)
    new, old, cur = (shlex.quote(f".{device}.cf-new"), shlex.quote(f".{device}.cf-old"), shlex.quote(device))
    with _Ssh(target, credential) as ssh:
        stage = ssh.workdir / "stage"
        for relpath, content in files.items():
            path = stage / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
        ssh.run(f"set -e; mkdir -p {quoted_dir}; cd {quoted_dir}; rm -rf {new}")
        ssh.copy_dir(stage, f"{remote_dir}/.{device}.cf-new")
        # Swap the whole directory so the NOS never reads a half-copied set of files.
        script = (f"set -e; cd {quoted_dir}; rm -rf {old}; if [ -e {cur} ]; then mv {cur} {old}; fi; "
                  f"mv {new} {cur}; rm -rf {old}")
        ssh.run(script)
        # then the NOS loads them (its own atomic replace), or the operator's command if one is set
        apply = target.get("apply_command") or apply_script(nos, f"{remote_dir}/{device}", files)
        if apply:
            ssh.run(apply)


def _remove_ssh(target: Mapping[str, Any], device: str, credential: str | None) -> None:
    remote_dir = target.get("remote_dir") or SwitchTarget.remote_dir
    with _Ssh(target, credential) as ssh:
        ssh.run(f"rm -rf {shlex.quote(remote_dir + '/' + device)}")


# --- provider --------------------------------------------------------------------------------


def _resource_id(props: Mapping[str, Any]) -> str:
    target = props["target"]
    where = target["path"] if target["kind"] == "file" else f"{target['host']}:{target.get('remote_dir')}"
    return f"{props['device']}@{target['kind']}:{where}"


def _outputs(props: dict[str, Any], written: list[str]) -> dict[str, Any]:
    """Inputs minus the file contents (kept once, as inputs), plus what was written."""
    return {**{k: v for k, v in props.items() if k != "files"}, "written": written}


class SwitchConfigProvider(ResourceProvider):
    # The provider captures no secrets, so its pickled form need not be encrypted in state.
    serialize_as_secret_always = False

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        failures = []
        target = news.get("target") or {}
        kind = target.get("kind")
        if kind not in TARGET_KINDS:
            failures.append(CheckFailure("target", f"target kind {kind!r} is not one of {', '.join(TARGET_KINDS)}"))
        elif kind == "file" and not str(target.get("path") or "").startswith("/"):
            failures.append(CheckFailure("target", "a file target needs an absolute path"))
        elif kind == "ssh":
            for key in ("host", "known_hosts"):
                if not target.get(key):
                    failures.append(CheckFailure("target", f"an ssh target needs {key}"))
        for relpath in news.get("files") or {}:
            if _bad_relpath(relpath):
                failures.append(CheckFailure("files", f"{relpath!r} is not a relative path inside the device dir"))
        return CheckResult(news, failures)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        changed = [key for key in (*REPLACE_KEYS, *UPDATE_KEYS) if olds.get(key) != news.get(key)]
        replaces = [key for key in REPLACE_KEYS if key in changed]
        if not changed:  # same declaration: are the delivered files still the rendered ones?
            drifted = file_drift(news)
            for line in drifted:
                _lifeline.say(f"drift: switch {news['device']}: {line}; `up` writes it again")
            changed = ["files"] if drifted else []
        return DiffResult(changes=bool(changed), replaces=replaces, delete_before_replace=True)

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(_resource_id(props), self._apply(props, written_before=[]))

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        if olds.get("content_hash") == news.get("content_hash") and not file_drift(news):  # only the credential
            return UpdateResult(_outputs(news, list(olds.get("written") or [])))
        return UpdateResult(self._apply(news, written_before=list(olds.get("written") or [])))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        target = props["target"]
        if target["kind"] == "file":
            _remove_files(target, props["device"], list(props.get("written") or []))
        else:
            _remove_ssh(target, props["device"], props.get("credential"))

    @staticmethod
    def _apply(props: dict[str, Any], written_before: list[str]) -> dict[str, Any]:
        target, device, files = props["target"], props["device"], props.get("files") or {}
        if target["kind"] == "file":
            written = _write_files(target, device, files)
            stale = sorted(set(written_before) - set(written))
            if stale:
                _remove_files(target, device, stale)
        else:
            _push_ssh(target, device, files, props.get("credential"), props.get("nos"))
            written = sorted(files)
        return _outputs(props, written)


class SwitchConfig(Resource, module="clusterforge", name="SwitchConfig"):
    """pulumi-python:dynamic/clusterforge:SwitchConfig — outputs `written` (relative paths) and `content_hash`."""

    written: pulumi.Output[list[str]]
    content_hash: pulumi.Output[str]

    def __init__(self, name: str, args: SwitchConfigArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        props: dict[str, Any] = {
            "device": args.device, "files": dict(args.files), "content_hash": args.content_hash,
            "target": args.target.to_input(), "credential": args.credential, "nos": args.nos,
            "written": None,
        }
        if args.credential is not None:
            props["credential"] = pulumi.Output.secret(args.credential)
        super().__init__(SwitchConfigProvider(), name, props, opts)
