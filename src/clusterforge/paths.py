"""Where clusterforge finds its data and keeps its state: the one place that knows the layout.

Data (read-only, shipped): ``templates/`` (switch and report Jinja2), ``roles/`` and ``playbooks/``
(Ansible), ``stacks/cluster/`` (the Pulumi program). They are found, in this order:

1. ``$CLUSTERFORGE_ROOT``: a directory laid out like the repository (the one override);
2. the checkout this package runs from (``<root>/src/clusterforge``, an editable install or
   ``PYTHONPATH=src``);
3. the copy an installed wheel carries inside the package (``clusterforge/_data/``, written by the
   build; see ``[tool.hatch.build.targets.wheel.force-include]`` in pyproject.toml).

State (written): the lab's home (``.lab``), the Pulumi state dir (``.state``) and the Pulumi engine
(``tools/bin``) live under the *workspace*: the override or the checkout when there is one, else
the current directory. ``$CLUSTERFORGE_LAB_HOME`` and ``$CLUSTERFORGE_STATE_DIR`` move those two
state directories on their own (they name state, not the layout).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

__all__ = [
    "ROOT_ENV", "LAB_HOME_ENV", "STATE_DIR_ENV", "PACKAGE_DIR", "checkout_root", "data_root", "workspace",
    "templates_dir", "roles_dir", "playbooks_dir", "stack_program_dir", "tools_dir", "lab_home", "state_dir",
    "relative_to_workspace", "lab_ssh_config",
]  # fmt: skip

ROOT_ENV = "CLUSTERFORGE_ROOT"
LAB_HOME_ENV = "CLUSTERFORGE_LAB_HOME"
STATE_DIR_ENV = "CLUSTERFORGE_STATE_DIR"
PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED_DATA = PACKAGE_DIR / "_data"  # only in an installed wheel


class DataNotFound(RuntimeError):
    """No templates/roles/playbooks: neither the override, a checkout, nor a wheel's bundled copy."""


@cache
def _checkout() -> Path | None:
    candidate = PACKAGE_DIR.parent.parent  # <root>/src/clusterforge
    if PACKAGE_DIR.parent.name == "src" and (candidate / "pyproject.toml").is_file():
        return candidate
    return None


def _override() -> Path | None:
    value = os.environ.get(ROOT_ENV)
    return Path(value).expanduser().resolve() if value else None


def checkout_root() -> Path | None:
    """The repository this package runs from (or the override), None for an installed wheel."""
    return _override() or _checkout()


def data_root() -> Path:
    """The directory holding templates/, roles/, playbooks/ and stacks/."""
    for candidate in (_override(), _checkout(), BUNDLED_DATA):
        if candidate is not None and (candidate / "templates").is_dir():
            return candidate
    raise DataNotFound(f"no templates/ under ${ROOT_ENV}, a checkout above {PACKAGE_DIR}, or {BUNDLED_DATA};"
                       f" set {ROOT_ENV} to a clusterforge checkout")


def workspace() -> Path:
    """Where state lives by default: the checkout (or override), else the current directory."""
    return checkout_root() or Path.cwd()


def templates_dir() -> Path:
    return data_root() / "templates"


def roles_dir() -> Path:
    return data_root() / "roles"


def playbooks_dir() -> Path:
    return data_root() / "playbooks"


def stack_program_dir() -> Path:
    return data_root() / "stacks" / "cluster"


def tools_dir() -> Path:
    """scripts/setup-pulumi.sh builds the engine into <workspace>/tools/bin."""
    return workspace() / "tools"


def lab_home() -> Path:
    """``$CLUSTERFORGE_LAB_HOME`` or ``<workspace>/.lab``: rootfs cache and one directory per lab."""
    env = os.environ.get(LAB_HOME_ENV)
    return Path(env).resolve() if env else workspace() / ".lab"


def lab_ssh_config(lab: str) -> Path:
    """The OpenSSH client config `clusterforge lab up` writes for lab ``lab`` (ssh, Ansible, testinfra use it)."""
    return lab_home() / lab / "ssh_config"


def state_dir() -> Path:
    """``$CLUSTERFORGE_STATE_DIR`` or ``<workspace>/.state``: Pulumi backend, passphrase, stack work dirs."""
    env = os.environ.get(STATE_DIR_ENV)
    return Path(env).resolve() if env else workspace() / ".state"


def relative_to_workspace(path: Path) -> str:
    """``path`` relative to the checkout when inside it (stack settings stay portable), else absolute."""
    resolved = path.resolve()
    root = checkout_root()
    if root is not None:
        try:
            return str(resolved.relative_to(root))
        except ValueError:
            pass
    return str(resolved)
