"""Facts from the netbox-community devicetype-library: how it spells the models clusterforge's catalog has.

An export beside the library must reuse its manufacturer, model, slug and file for a model it already
has, or an import creates a second device type for the same hardware. Each entry is read from the
library file named (path at the commit given); the port names column says which NOS's names the
library's interfaces use, so only that NOS's type can be the library's own (another NOS names its ports
differently, so its type is a separate one: ``<model>-<NOS>``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LIBRARY", "MANUFACTURERS", "LibraryEntry", "library_entry", "manufacturer"]


@dataclass(frozen=True)
class LibraryEntry:
    manufacturer: str
    model: str
    slug: str
    file: str  # device-types/<manufacturer>/<file>
    port_names: str  # the NOS whose port names the library's interfaces use ("" for a server)


# catalog key -> the library's entry (device-types/<manufacturer>/<file> @ commit)
LIBRARY: dict[str, LibraryEntry] = {
    # device-types/Nvidia/SN5600.yaml @ 00d0806dcfa1f4b7b6fe258a648ec20a071c4253: swp1..swp64, 800gbase-x-osfp
    "sn5600": LibraryEntry("Nvidia", "SN5600", "nvidia-sn5600", "SN5600.yaml", "cumulus"),
    # device-types/Nvidia/QM9700.yaml @ 108982125f573ca32afd05c913a3f7b3ad5d9e44: P<n>.<0|1> split ports
    "qm9700": LibraryEntry("Nvidia", "QM9700", "nvidia-qm9700", "QM9700.yaml", "library"),
    # device-types/Nvidia/SN2201.yaml @ 31d9ce8021da626e57dbba2aa0c8e16a342f65b8: slug kept from Mellanox days
    "sn2201": LibraryEntry("Nvidia", "SN2201", "mellanox-sn2201", "SN2201.yaml", "cumulus"),
    # device-types/Mellanox/SN4700.yml @ 6abb4bcada753ea70a2d261d0e976d615849e3ef: swp1..swp32
    "sn4700": LibraryEntry("Mellanox", "SN4700", "sn4700", "SN4700.yml", "cumulus"),
}

# Catalog vendor -> the library's manufacturer directory (device-types/Nvidia/, device-types/Generic/).
MANUFACTURERS: dict[str, str] = {"NVIDIA": "Nvidia", "nvidia": "Nvidia", "generic": "Generic", "Generic": "Generic"}


def manufacturer(vendor: str) -> str:
    return MANUFACTURERS.get(vendor, vendor)


def library_entry(key: str, nos: str = "") -> LibraryEntry | None:
    """The library's own entry for catalog model ``key`` run with ``nos`` (None: the library has no such type)."""
    entry = LIBRARY.get(key)
    if entry is None or (nos and entry.port_names != nos):
        return None
    return entry
