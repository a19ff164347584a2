"""How a bare-metal server is managed: its BMC protocol, credentials (by reference), CA, BIOS settings, boot mode.

Declared per server model (``baremetal.models.<model>``) and optionally per scalable unit
(``scalable_units[].management``, which replaces the model's for that SU's servers). The BMC's address is
not declared here: it is the server's out-of-band (oob) address from the plan.

A password is never a literal: ``credentials.password`` is a reference, ``{pulumi: KEY}`` (the stack secret
``clusterforge:KEY``, set with ``pulumi config set --secret``) or ``{vault: PATH}`` (an ansible-vault encrypted
file under the repository holding the password). Every name and value that reaches Redfish passes a grammar:
BIOS attribute names are Redfish identifiers, values are strings of a safe alphabet, integers or booleans.
"""

import re
from typing import Annotated, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from clusterforge.model.base import Declared
from clusterforge.model.grammar import ModelKey
from clusterforge.model.numbers import Integer

__all__ = ["BiosName", "BiosValue", "SecretRef", "Credentials", "Management", "Baremetal", "BMC_USER_FORM",
           "REPO_PATH_FORM"]

BIOS_NAME_FORM = "a Redfish attribute identifier: 1-64 letters, digits and '_', starting with a letter"
BIOS_TEXT_FORM = "1-64 characters of letters, digits, space, '.', '_', '-', ':', '/' and '+', or an integer or boolean"
BMC_USER_FORM = "1-32 characters of letters, digits, '.', '_' and '-', starting with a letter or digit"
REPO_PATH_FORM = ("a path relative to the repository: 1-16 components of letters, digits, '.', '_' and '-'"
                  " separated by '/', no '..', no leading '/'")
_BIOS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_BIOS_TEXT = re.compile(r"[A-Za-z0-9._:/+-](?:[A-Za-z0-9 ._:/+-]{0,62}[A-Za-z0-9._:/+-])?")
_BMC_USER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")
_SECRET_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_REPO_PATH = re.compile(r"[A-Za-z0-9_.-]{1,64}(?:/[A-Za-z0-9_.-]{1,64}){0,15}")


def _match(regex: re.Pattern[str], what: str, form: str):
    def check(value: str) -> str:
        if not regex.fullmatch(value):
            raise ValueError(f"not a valid {what}; allowed: {form}")
        return value

    return AfterValidator(check)


def _repo_path(value: str) -> str:
    parts = value.split("/")
    if not _REPO_PATH.fullmatch(value) or any(p in (".", "..") for p in parts):
        raise ValueError(f"not a valid repository path; allowed: {REPO_PATH_FORM}")
    return value


def _bios_value(value: object) -> object:
    # bool before int: YAML true is a bool, and a bool is an int in Python
    if isinstance(value, bool) or (isinstance(value, int) and -(2**31) <= value < 2**31):
        return value
    if isinstance(value, str) and _BIOS_TEXT.fullmatch(value):
        return value
    raise ValueError(f"not a valid BIOS attribute value; allowed: {BIOS_TEXT_FORM} (32-bit)")


BiosName = Annotated[str, _match(_BIOS_NAME, "BIOS attribute name", BIOS_NAME_FORM)]
BiosValue = Annotated[str | int | bool, BeforeValidator(_bios_value)]
SecretKey = Annotated[str, _match(_SECRET_KEY, "Pulumi config key", "1-64 letters, digits and '_', starting"
                                  " with a letter (the key of clusterforge:KEY)")]
RepoPath = Annotated[str, AfterValidator(_repo_path)]
BmcUser = Annotated[str, _match(_BMC_USER, "BMC user name", BMC_USER_FORM)]


class SecretRef(Declared):
    """Where a secret is kept: exactly one of ``pulumi`` (a stack secret's key) or ``vault`` (an encrypted file)."""

    pulumi: SecretKey | None = Field(default=None, description="stack secret clusterforge:KEY"
                                     " (pulumi config set --secret clusterforge:KEY ...)")
    vault: RepoPath | None = Field(default=None, description="an ansible-vault encrypted file (repository path)"
                                   " whose plaintext is the secret")

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.pulumi is None) == (self.vault is None):
            raise ValueError("name exactly one of pulumi: KEY (a stack secret) or vault: PATH (an ansible-vault file)")
        return self

    def describe(self) -> str:
        return f"pulumi secret clusterforge:{self.pulumi}" if self.pulumi else f"vaulted file {self.vault}"


def _no_literal(value: object) -> object:
    if isinstance(value, str):
        raise ValueError("a literal password is not allowed in the declaration; reference it:"
                         " {pulumi: KEY} (a Pulumi stack secret) or {vault: PATH} (an ansible-vault file)")
    return value


class Credentials(Declared):
    username: BmcUser
    password: Annotated[SecretRef, BeforeValidator(_no_literal)]


class Management(Declared):
    """One server model's (or SU's) BMC and firmware settings."""

    kind: Literal["redfish"] = "redfish"
    credentials: Credentials
    ca: RepoPath | None = Field(default=None, description="PEM CA file (repository path) the BMC's TLS certificate"
                                " is verified against; unset: the system's trust store")
    verify_tls: bool = True
    port: Integer = Field(default=443, ge=1, le=65535)
    boot_mode: Literal["uefi"] = "uefi"
    boot_target: Literal["pxe", "uefi_http"] = Field(default="pxe", description="one-time network boot source")
    bios: dict[BiosName, BiosValue] = Field(default={}, max_length=256, description="BIOS attributes to apply"
                                            " (Redfish Bios/Settings, applied at the next reset)")
    install: Literal["image", "debian-installer"] = Field(
        default="image", description="how a blank server gets its OS: `image` (a deploy ramdisk writes the"
        " server's disk image, as Ironic and MAAS do) or `debian-installer` (Debian's netboot installer and a"
        " preseed; needs a mirror that serves the installer's udebs)")


class Baremetal(Declared):
    models: dict[ModelKey, Management] = Field(default={}, max_length=256, description="by catalog server model")
