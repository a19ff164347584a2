"""Grammars for every declared string that reaches a config line, template, file path, CSV cell or host_vars.

Each type is a pydantic-constrained ``str``: a value outside its grammar is refused with the allowed
form in the message. None of them admits a newline, a control character, a quote, a space where a
config line splits on spaces, or a Jinja2 delimiter (``{{``, ``{%``, ``{#``), so nothing declared can
add a line to a switch config, a key to a YAML file, or a template to Ansible's host_vars.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

__all__ = [
    "Name", "ModelKey", "PartNumber", "GpuModel", "NicName", "VrfName", "Version", "DriverBranch", "DriverVersion",
    "OsRelease", "MountPath", "Export", "MountOptions", "Label", "Owner", "Vendor", "FreeText", "SlurmName",
    "SlurmTime", "RdmaDevice", "GRAMMARS",
]

GRAMMARS: dict[str, tuple[str, str]] = {
    # kind: (regex, the allowed form as the error states it)
    "name": (r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?",
             "1-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit"),
    "model key": (r"[a-z0-9][a-z0-9._-]{0,62}",
                  "1-63 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit"),
    "part number": (r"[A-Za-z0-9][A-Za-z0-9._+-]{0,62}",
                    "1-63 characters of letters, digits, '.', '_', '+' and '-', starting with a letter or digit"),
    "GPU model": (r"[A-Za-z0-9][A-Za-z0-9._ -]{0,62}",
                  "1-63 characters of letters, digits, '.', '_', '-' and space, starting with a letter or digit"),
    "NIC name": (r"[A-Za-z][A-Za-z0-9_.-]{0,14}",
                 "a Linux interface name: 1-15 characters of letters, digits, '_', '.' and '-',"
                 " starting with a letter"),
    "VRF name": (r"[A-Za-z][A-Za-z0-9_-]{0,14}",
                 "1-15 characters of letters, digits, '_' and '-', starting with a letter"),
    "version": (r"[0-9]{1,4}(?:\.[0-9]{1,4}){1,3}", "2-4 dot-separated numbers, e.g. 12.4 or 2.21.5"),
    "driver branch": (r"[0-9]{3,4}", "the driver's major release, 3-4 digits, e.g. 535"),
    "driver version": (r"[0-9]{3,4}\.[0-9]{1,4}(?:\.[0-9]{1,4})?", "BRANCH.MINOR[.PATCH] numbers, e.g. 535.261.03"),
    "OS release": (r"[a-z]+-[0-9]+(?:\.[0-9]+)*", "DISTRO-VERSION, e.g. debian-12 or ubuntu-22.04"),
    "mount path": (r"(?:/[A-Za-z0-9_][A-Za-z0-9._-]{0,63}){1,16}",
                   "an absolute path of 1-16 components of letters, digits, '.', '_' and '-'"
                   " (no '..', no '//', no trailing '/'), e.g. /mnt/hot"),
    "export": (r"/?[A-Za-z0-9_][A-Za-z0-9._-]{0,63}(?:/[A-Za-z0-9_][A-Za-z0-9._-]{0,63}){0,15}",
               "a file system name (hot) or an absolute path (/export/hot) of letters, digits, '.', '_' and '-'"),
    "mount options": (r"[A-Za-z0-9_.=:+-]{1,64}(?:,[A-Za-z0-9_.=:+-]{1,64}){0,31}",
                      "comma-separated options of letters, digits, '_', '.', '=', ':', '+' and '-', e.g. rw,noatime"),
    "label": (r"[a-z0-9][a-z0-9._-]{0,31}", "1-32 characters of a-z, 0-9, '.', '_' and '-'"),
    # A vendor names the device-type library's manufacturer directory (export device-types): one path component
    "vendor": (r"[A-Za-z0-9][A-Za-z0-9 ._&+,()-]{0,62}",
               "1-63 characters of letters, digits, space, '.', '_', '&', '+', ',', '(', ')' and '-', starting with a"
               " letter or digit (it names a directory of the device-type export: no '/')"),
    "owner": (r"[A-Za-z0-9][A-Za-z0-9 ._@-]{0,62}",
              "1-63 characters of letters, digits, space, '.', '_', '@' and '-', starting with a letter or digit"),
    # Slurm: one word of slurm.conf (no space, '=', '#', ',', ':' or brackets, which its parser and hostlist
    # expressions split on), lower case because Slurm folds ClusterName and account names to lower case,
    # 40 characters at most (slurm.conf(5) ClusterName: MariaDB's table-name limit).
    "Slurm name": (r"[a-z][a-z0-9_-]{0,39}",
                   "1-40 characters of a-z, 0-9, '_' and '-', starting with a letter"),
    # slurm.conf(5) MaxTime: minutes, minutes:seconds, hours:minutes:seconds, days-hours,
    # days-hours:minutes, days-hours:minutes:seconds, or UNLIMITED/INFINITE.
    "Slurm time": (r"UNLIMITED|INFINITE|[0-9]{1,6}(?::[0-5]?[0-9]){0,2}|[0-9]{1,4}-[0-9]{1,2}(?::[0-5]?[0-9]){0,2}",
                   "MINUTES, MM:SS, HH:MM:SS, DAYS-HH, DAYS-HH:MM, DAYS-HH:MM:SS, UNLIMITED or INFINITE"),
    "RDMA device": (r"[a-z][a-z0-9_]{0,31}", "an RDMA device name: 1-32 characters of a-z, 0-9 and '_', e.g. mlx5_0"),
}
FREE_TEXT_MAX = 500
_TEMPLATE = re.compile(r"\{[{%#]|[}%#]\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _grammar(kind: str) -> AfterValidator:
    regex, allowed = GRAMMARS[kind]
    compiled = re.compile(regex)

    def check(value: str) -> str:
        if not compiled.fullmatch(value) or ".." in value.split("/"):
            raise ValueError(f"not a valid {kind}; allowed: {allowed}")
        return value

    return AfterValidator(check)


def _free_text(value: str) -> str:
    if len(value) > FREE_TEXT_MAX:
        raise ValueError(f"longer than {FREE_TEXT_MAX} characters")
    if _CONTROL.search(value):
        raise ValueError("control characters (newline, tab, escape, ...) are not allowed; one line of text")
    if _TEMPLATE.search(value):
        raise ValueError("template delimiters ({{ }}, {% %}, {# #}) are not allowed")
    return value


Name = Annotated[str, _grammar("name")]
ModelKey = Annotated[str, _grammar("model key")]
PartNumber = Annotated[str, _grammar("part number")]
GpuModel = Annotated[str, _grammar("GPU model")]
NicName = Annotated[str, _grammar("NIC name")]
VrfName = Annotated[str, _grammar("VRF name")]
Version = Annotated[str, _grammar("version")]
DriverBranch = Annotated[str, _grammar("driver branch")]
DriverVersion = Annotated[str, _grammar("driver version")]
OsRelease = Annotated[str, _grammar("OS release")]
MountPath = Annotated[str, _grammar("mount path")]
Export = Annotated[str, _grammar("export")]
MountOptions = Annotated[str, _grammar("mount options")]
Label = Annotated[str, _grammar("label")]
Owner = Annotated[str, _grammar("owner")]
Vendor = Annotated[str, _grammar("vendor")]
FreeText = Annotated[str, AfterValidator(_free_text)]
SlurmName = Annotated[str, _grammar("Slurm name")]
SlurmTime = Annotated[str, _grammar("Slurm time")]
RdmaDevice = Annotated[str, _grammar("RDMA device")]
