"""From a planned BMC (``BmcFacts``) to a ``BmcEndpoint``: the password behind its reference, the CA inside the repo.

A ``{pulumi: KEY}`` reference is looked up in ``secrets``, the stack's decrypted ``clusterforge:*`` config the
caller holds (the Pulumi program's ``config.require_secret``, or the CLI's stack through the Automation API:
``stack_secrets``). A ``{vault: PATH}`` reference is an ansible-vault encrypted file under the repository,
opened with the vault password file in ``$ANSIBLE_VAULT_PASSWORD_FILE``. The password only ever lives in the
returned endpoint.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from clusterforge.baremetal.types import BmcEndpoint, BmcError
from clusterforge.plan.baremetal import BmcFacts

__all__ = ["endpoint_for", "contained", "vault_plaintext", "stack_secrets"]


def contained(repo: Path, relative: str) -> Path:
    """``repo/relative`` resolved (symlinks too), refused unless it stays inside the repository."""
    root = repo.resolve()
    path = (root / relative).resolve()
    if path != root and root not in path.parents:
        raise ValueError(f"{relative} leaves the repository ({root})")
    return path


def vault_plaintext(path: Path, password_file: str | None = None) -> str:
    """The decrypted text of an ansible-vault file (first line, stripped)."""
    from ansible.parsing.vault import VaultLib, VaultSecret  # ansible-core, a dependency

    secret_file = password_file or os.environ.get("ANSIBLE_VAULT_PASSWORD_FILE")
    if not secret_file:
        raise ValueError("$ANSIBLE_VAULT_PASSWORD_FILE is not set (the vault password file)")
    key = Path(secret_file).read_bytes().strip()
    text = VaultLib([("default", VaultSecret(key))]).decrypt(path.read_bytes()).decode()
    return text.strip().splitlines()[0] if text.strip() else ""


def endpoint_for(facts: BmcFacts, *, repo: Path, secrets: Mapping[str, str] | None = None,
                 vault_password_file: str | None = None, timeout_s: float = 5.0) -> BmcEndpoint:
    """The endpoint to connect to; ``BmcError`` (kind config) when the password or the CA cannot be had."""
    ref = facts.password
    try:
        if ref.pulumi is not None:
            password = (secrets or {}).get(ref.pulumi) or (secrets or {}).get(f"clusterforge:{ref.pulumi}")
            if not password:
                raise ValueError(f"the stack has no secret clusterforge:{ref.pulumi}"
                                 f" (pulumi config set --secret clusterforge:{ref.pulumi} ...)")
        else:
            password = vault_plaintext(contained(repo, ref.vault or ""), vault_password_file)
            if not password:
                raise ValueError(f"the vaulted file {ref.vault} is empty")
        ca = contained(repo, facts.ca) if facts.ca else None
    except (OSError, ValueError) as exc:
        raise BmcError(facts.server, facts.url, "config", str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - ansible's AnsibleError for a wrong vault password, one line
        raise BmcError(facts.server, facts.url, "config", f"{ref.describe()}: {exc}") from None
    return BmcEndpoint(server=facts.server, url=facts.url, username=facts.username, password=password,
                       ca_file=ca, verify_tls=facts.verify_tls, timeout_s=timeout_s)


def stack_secrets(handle: object) -> dict[str, str]:
    """A Pulumi Automation API stack's ``clusterforge:*`` config, decrypted (for the CLI; never printed)."""
    config = handle.get_all_config()  # type: ignore[attr-defined]
    return {k.split(":", 1)[1]: v.value for k, v in config.items() if k.startswith("clusterforge:")}
