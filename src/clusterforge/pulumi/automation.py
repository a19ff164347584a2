"""Drive the Pulumi engine for stacks/cluster through the Automation API, fully offline.

Defaults (each overridable, so tests and CI run in temp dirs):
  state dir     $CLUSTERFORGE_STATE_DIR or <workspace>/.state (gitignored; clusterforge.paths)
  backend       $CLUSTERFORGE_BACKEND_URL, else $PULUMI_BACKEND_URL, else file://<state dir>/pulumi;
                file:// or postgres:// (clusterforge.pulumi.backend_url: the engine never sees the password)
  secrets       passphrase provider: a passphrase file given explicitly ($CLUSTERFORGE_PASSPHRASE_FILE,
                `--passphrase-file`), else $PULUMI_CONFIG_PASSPHRASE[_FILE], else (file backend only)
                <state dir>/passphrase, generated once with mode 0600 (never committed). A shared backend
                needs the team's passphrase: a generated one would be this machine's alone.
  work dir      <state dir>/stacks/<stack>: its own Pulumi.yaml (main: <repo>/stacks/cluster) and
                Pulumi.<stack>.yaml, so stacks never write into the repository. A committed
                stacks/cluster/Pulumi.<stack>.yaml is the template for that stack's plain settings.
  engine        clusterforge.pulumi.engine.find(): <workspace>/tools/bin, <state dir>/engine/bin or a pinned
                pulumi on PATH; PULUMI_HOME under the state dir. The program and dynamic providers run on
                this interpreter (PULUMI_PYTHON_CMD), never on a venv of the checkout.
  engine log    off (see engine_log): $CLUSTERFORGE_PULUMI_ENGINE_LOG=1 keeps it

`ChangeSummary` turns the engine's step events into counts per operation and resource type.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clusterforge import paths
from clusterforge.pulumi import engine
from clusterforge.pulumi.backend_url import BackendUrl
from clusterforge.pulumi.engine import EngineMissing

__all__ = [
    "PROJECT", "Backend", "ChangeSummary", "EngineMissing", "SecretsMissing", "StackRun", "destroy",
    "engine_binary", "open_stack", "preview", "stack_work_dir", "up",
]  # fmt: skip

PROJECT = "clusterforge-cluster"
NAMESPACE = "clusterforge"
STATE_DIR_ENV = paths.STATE_DIR_ENV
BACKEND_URL_ENV = "CLUSTERFORGE_BACKEND_URL"
PASSPHRASE_FILE_ENV = "CLUSTERFORGE_PASSPHRASE_FILE"
# Keys the CLI manages on every run: from the command line, else the committed template, else unset.
MANAGED_KEYS = ("inventory", "target", "provision", "verify", "workDir", "part", "revision")
REPLACE_OPS = ("replace", "create-replacement", "delete-replaced")
ENGINE_LOG_ENV = "CLUSTERFORGE_PULUMI_ENGINE_LOG"


def engine_binary() -> Path:
    """The engine open_stack would run, else where a checkout's would be (for messages and skips)."""
    try:
        return engine.find().binary
    except EngineMissing:
        return paths.tools_dir() / "bin" / "pulumi"


class SecretsMissing(RuntimeError):
    """No passphrase the team shares for a shared backend, or an unreadable passphrase file."""


@dataclass(frozen=True)
class Backend:
    state_dir: Path
    url: str  # as given: may hold a password; print display_url, hand the engine BackendUrl.engine_url
    passphrase_file: Path | None = None  # the team's passphrase, given explicitly

    @classmethod
    def resolve(cls, state_dir: str | Path | None = None, url: str | None = None,
                passphrase_file: str | Path | None = None) -> Backend:
        state = Path(state_dir or paths.state_dir()).resolve()
        url = url or os.environ.get(BACKEND_URL_ENV) or os.environ.get("PULUMI_BACKEND_URL")
        if not url:
            (state / "pulumi").mkdir(parents=True, exist_ok=True)
            url = f"file://{state / 'pulumi'}"
        BackendUrl.parse(url)  # BackendUrlError names the kinds driven
        passphrase_file = passphrase_file or os.environ.get(PASSPHRASE_FILE_ENV) or None
        return cls(state, url, Path(passphrase_file).expanduser().resolve() if passphrase_file else None)

    @property
    def parsed(self) -> BackendUrl:
        return BackendUrl.parse(self.url)

    @property
    def display_url(self) -> str:
        return self.parsed.masked()

    def passphrase_env(self) -> dict[str, str]:
        if self.passphrase_file is not None:
            if os.environ.get("PULUMI_CONFIG_PASSPHRASE") is not None:
                raise SecretsMissing(f"a passphrase file ({self.passphrase_file}) and $PULUMI_CONFIG_PASSPHRASE are"
                                     " both given: the engine would use the variable; give one of them")
            if not os.access(self.passphrase_file, os.R_OK) or not self.passphrase_file.is_file():
                raise SecretsMissing(f"{self.passphrase_file}: passphrase file: not a readable file")
            return {"PULUMI_CONFIG_PASSPHRASE_FILE": str(self.passphrase_file)}
        if os.environ.get("PULUMI_CONFIG_PASSPHRASE") or os.environ.get("PULUMI_CONFIG_PASSPHRASE_FILE"):
            return {}
        if self.parsed.shared:
            raise SecretsMissing(
                f"the backend {self.display_url} is shared, so its stacks' secrets need the passphrase the team"
                f" shares: set PULUMI_CONFIG_PASSPHRASE (from a secret store or the CI's secrets), or give the"
                f" file that holds it with --passphrase-file / ${PASSPHRASE_FILE_ENV}")
        path = self.state_dir / "passphrase"
        if not path.exists():
            self.state_dir.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass  # another process made it first
            else:
                with os.fdopen(fd, "w") as handle:
                    handle.write(secrets.token_urlsafe(32) + "\n")
        return {"PULUMI_CONFIG_PASSPHRASE_FILE": str(path)}

    def env(self, engine_bin: Path | None = None) -> dict[str, str]:
        venv_bin = Path(sys.executable).parent  # the program runs on this interpreter's packages
        first = [str(engine_bin)] if engine_bin is not None else []
        path = os.pathsep.join([*first, str(venv_bin), os.environ.get("PATH", "")])
        url = self.parsed
        password = {"PGPASSWORD": url.password} if url.password else {}
        return {
            "PULUMI_BACKEND_URL": url.engine_url, "PULUMI_SKIP_UPDATE_CHECK": "true", **password,
            # the program's default workDir (clusterforge.pulumi.settings) is the stack's dir under this state dir
            STATE_DIR_ENV: str(self.state_dir),
            # the language host and the dynamic-provider launcher run the program on the CLI's interpreter
            "PULUMI_PYTHON_CMD": sys.executable,
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true", "PATH": path, **self.passphrase_env(),
            # Providers fork ansible/ssh while gRPC threads run; grpc's fork handlers only log noise then.
            "GRPC_ENABLE_FORK_SUPPORT": "false",
        }  # fmt: skip


def engine_log(pulumi_home: Path, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the engine writes its own log of each command (True only when ENGINE_LOG_ENV is 1).

    Pulumi 3.260 logs every command at debug level to <PULUMI_HOME>/logs, gzip'd or encrypted with the
    stack's key: per-resource properties included, ~55 MB and about a third of the engine's CPU in a 64-SU
    preview (pprof: slog, the property sink, deflate). No flag or variable turns it off; the engine runs
    without it when that path is not a directory, so here it is a link to /dev/null. A directory already
    there is kept as logs.previous. The run's output, the events and `--debug` logging are unaffected.
    """
    logs = pulumi_home / "logs"
    if environ.get(ENGINE_LOG_ENV) == "1":
        if logs.is_symlink():
            logs.unlink()
        return True
    if not logs.is_symlink():
        pulumi_home.mkdir(parents=True, exist_ok=True)
        if logs.is_dir():
            previous = pulumi_home / "logs.previous"
            shutil.rmtree(previous, ignore_errors=True)
            logs.rename(previous)
        with contextlib.suppress(FileExistsError):  # another run made it first
            logs.symlink_to(os.devnull)
    return False


def stack_work_dir(backend: Backend, stack: str) -> Path:
    if not stack or "/" in stack or stack.startswith("."):  # the CLI's grammar (cli/_args) refuses these first
        raise ValueError(f"stack name {stack!r} is not a directory name")
    return backend.state_dir / "stacks" / stack


def template_config(stack: str) -> dict[str, str]:
    """Plain values of the committed stacks/cluster/Pulumi.<stack>.yaml (secure values are never copied)."""
    path = paths.stack_program_dir() / f"Pulumi.{stack}.yaml"
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    return {key: str(value) for key, value in (data.get("config") or {}).items() if not isinstance(value, dict)}


def _write_project(work_dir: Path) -> None:
    project = {"name": PROJECT, "runtime": "python", "main": str(paths.stack_program_dir()),
               "description": "generated by clusterforge; the program is stacks/cluster in the repository"}
    text = "# Generated by clusterforge.pulumi.automation; do not edit.\n" + yaml.safe_dump(project, sort_keys=False)
    path = work_dir / "Pulumi.yaml"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def open_stack(stack: str, settings: Mapping[str, str | None] | None, backend: Backend | None = None) -> Any:
    """Create or select `stack` in its work dir and apply the managed `clusterforge:*` settings.

    `settings` maps short keys (inventory, target, provision, verify, ...) to values; for the managed
    keys a missing or None value means "the committed template's value, else unset". Other keys
    stay as the stack has them (secrets set with `pulumi config set --secret` among them).
    `settings=None` leaves the stack's config alone (destroy).
    """
    found = engine.find()
    from pulumi import automation as auto

    backend = backend or Backend.resolve()
    work_dir = stack_work_dir(backend, stack)
    work_dir.mkdir(parents=True, exist_ok=True)
    _write_project(work_dir)
    pulumi_home = backend.state_dir / "pulumi-home"
    engine_log(pulumi_home)
    options = auto.LocalWorkspaceOptions(
        work_dir=str(work_dir), pulumi_home=str(pulumi_home),
        env_vars=backend.env(found.bin_dir), secrets_provider="passphrase",
        pulumi_command=auto.PulumiCommand(root=str(found.root)),
    )  # fmt: skip
    try:
        handle = auto.create_or_select_stack(stack, work_dir=str(work_dir), opts=options)
    except auto.CommandError as exc:
        # another run (a second merge's apply, an operator) created the stack between this one's select and create
        if "already exists" not in str(exc):
            raise
        handle = auto.select_stack(stack, work_dir=str(work_dir), opts=options)
    if settings is not None:
        _apply_settings(handle, stack, None if backend.parsed.shared else work_dir, settings)
    return handle


def _apply_settings(handle: Any, stack: str, work_dir: Path | None, settings: Mapping[str, str | None]) -> None:
    """``work_dir`` None (a shared backend): workDir is left to the template or the program's default, the
    same path under each operator's own state dir, so the stack's config (which its providers hold) does not
    differ between operators."""
    from pulumi import automation as auto

    template = template_config(stack)
    wanted: dict[str, str | None] = {key: None for key in MANAGED_KEYS}
    if work_dir is not None:
        wanted["workDir"] = str(work_dir)
    wanted.update(settings)
    current = handle.get_all_config()
    to_set: dict[str, Any] = {}
    for key, value in wanted.items():
        full = f"{NAMESPACE}:{key}"
        value = value if value is not None else template.get(full)
        if value is None:
            if full in current:
                handle.remove_config(full)
        elif full not in current or current[full].value != value:
            to_set[full] = auto.ConfigValue(value=value)
    if to_set:
        handle.set_all_config(to_set)


# --- change summaries ------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    op: str
    urn: str
    type: str

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]


@dataclass
class ChangeSummary:
    """What an engine run did (or, for a preview, would do), one entry per resource."""

    steps: list[Step] = field(default_factory=list)
    finished: set[str] = field(default_factory=set)  # URNs whose step completed or failed

    def on_event(self, event: Any) -> None:
        for done in (getattr(event, "res_outputs_event", None), getattr(event, "res_op_failed_event", None)):
            if done is not None and done.metadata is not None:
                self.finished.add(done.metadata.urn)
        pre = getattr(event, "resource_pre_event", None)
        if pre is None or pre.metadata is None:
            return
        meta = pre.metadata
        op = meta.op.value if hasattr(meta.op, "value") else str(meta.op)
        self.steps.append(Step(op, meta.urn, meta.type))

    def by_op(self) -> dict[str, list[Step]]:
        grouped: dict[str, dict[str, Step]] = defaultdict(dict)
        for step in self.steps:
            op = "replace" if step.op in REPLACE_OPS else step.op
            grouped[op].setdefault(step.urn, step)  # a replacement reports several steps for one URN
        replaced = set(grouped.get("replace", {}))
        for op in ("create", "delete", "update"):  # never count a replaced resource twice
            for urn in replaced & set(grouped.get(op, {})):
                del grouped[op][urn]
        return {op: list(steps.values()) for op, steps in grouped.items()}

    def in_flight(self) -> list[Step]:
        """Resources whose step started and did not finish: what an interrupted run was doing.
        Components (the stack, clusterforge:* groupings) finish only with their children; left out."""
        seen: dict[str, Step] = {}
        for step in self.steps:
            component = step.type == "pulumi:pulumi:Stack" or step.type.startswith(f"{NAMESPACE}:")
            if step.op != "same" and step.urn not in self.finished and not component:
                seen.setdefault(step.urn, step)
        return list(seen.values())

    def urns(self, op: str) -> list[str]:
        return sorted(step.urn for step in self.by_op().get(op, []))

    def count(self, op: str) -> int:
        return len(self.by_op().get(op, []))

    @property
    def changes(self) -> int:
        return sum(self.count(op) for op in ("create", "update", "replace", "delete"))

    def to_json(self) -> dict[str, Any]:
        return {"create": self.urns("create"), "update": self.urns("update"), "replace": self.urns("replace"),
                "delete": self.urns("delete"), "same": self.count("same")}

    def per_type(self) -> dict[str, Counter[str]]:
        table: dict[str, Counter[str]] = defaultdict(Counter)
        for op, steps in self.by_op().items():
            for step in steps:
                table[step.type][op] += 1
        return dict(sorted(table.items()))


@dataclass(frozen=True)
class StackRun:
    summary: ChangeSummary
    outputs: dict[str, Any]
    stdout: str


def _collect(run: Callable[..., Any], diff: bool, on_output: Callable[[str], Any] | None,
             summary: ChangeSummary | None = None, **kwargs: Any) -> StackRun:
    summary = summary if summary is not None else ChangeSummary()
    result = run(on_event=summary.on_event, diff=diff or None, on_output=on_output, color="never", **kwargs)
    # The Automation API reads outputs with --show-secrets: a secret (the kubeconfig) is masked here.
    outputs = {k: "[secret]" if v.secret else v.value for k, v in (getattr(result, "outputs", None) or {}).items()}
    return StackRun(summary, outputs, result.stdout)


def preview(handle: Any, *, diff: bool = False, on_output: Callable[[str], Any] | None = None,
            summary: ChangeSummary | None = None) -> StackRun:
    return _collect(handle.preview, diff, on_output, summary)


@contextlib.contextmanager
def _saving(handle: Any, checkpoints: str) -> Iterator[None]:
    """The engine's checkpoint setting for one run: "end" saves the state once, when it closes the run
    (clusterforge.pulumi.checkpoints says when that is safe and what it saves)."""
    if checkpoints not in ("step", "end"):
        raise ValueError(f"checkpoints {checkpoints!r}: expected step or end")
    env = handle.workspace.env_vars
    if checkpoints == "end":
        env["PULUMI_SKIP_CHECKPOINTS"] = "true"
    try:
        yield
    finally:
        env.pop("PULUMI_SKIP_CHECKPOINTS", None)


def up(handle: Any, *, diff: bool = False, on_output: Callable[[str], Any] | None = None,
       checkpoints: str = "step", summary: ChangeSummary | None = None) -> StackRun:
    with _saving(handle, checkpoints):
        # show_secrets defaults to True in the Automation API: outputs would print secrets in plain text.
        return _collect(handle.up, diff, on_output, summary, show_secrets=False)


def managed_config(handle: Any) -> dict[str, str]:
    """The stack's `clusterforge:*` settings as it holds them now (short keys; secrets left out)."""
    prefix = f"{NAMESPACE}:"
    return {key[len(prefix):]: str(item.value) for key, item in handle.get_all_config().items()
            if key.startswith(prefix) and not item.secret}


def destroy(handle: Any, *, on_output: Callable[[str], Any] | None = None, checkpoints: str = "step",
            summary: ChangeSummary | None = None) -> StackRun:
    summary = summary if summary is not None else ChangeSummary()
    with _saving(handle, checkpoints):
        result = handle.destroy(on_event=summary.on_event, on_output=on_output, color="never", show_secrets=False)
    return StackRun(summary, {}, result.stdout)
