"""One record per NOS: everything the renderers, exports and apply paths need to know about it.

Each NOS's record lives in its own folder (`_<nos>/driver.py`) and is registered once in
network_os.py. What the planners must know of the NOS (port spelling, VRRP, platform data) is its
`traits`, a clusterforge.nos record, which plan/ reads without seeing render/.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Generic, TypeVar

from clusterforge.nos import NosTraits
from clusterforge.plan.records import SwitchQos
from clusterforge.render.switches.facts import SwitchFacts

__all__ = ["NosDriver", "Apply", "Builder", "Writer"]

Config = TypeVar("Config")  # the NOS's typed structured config (its `_<nos>/schema.py` record)
Builder = Callable[[SwitchFacts, SwitchQos], Config]  # facts + QoS intent -> structured config
Writer = Callable[[Config], dict[str, str]]  # structured config -> {file name: text}
# (device dir on the switch, the file names delivered there) -> the shell that loads them (set -e)
Apply = Callable[[str, frozenset[str]], str]


@dataclass(frozen=True)
class NosDriver(Generic[Config]):
    """`build` makes the NOS's typed structured config, `write` formats exactly that record."""

    nos: str  # a vocab.Nos value
    traits: NosTraits  # the planners' facts about this NOS (clusterforge.nos.NOS_TRAITS[nos])
    build: Builder[Config]
    write: Writer[Config]
    file_names: tuple[str, ...]  # every file `write` may produce; the first is the one the NOS boots from
    ansible_vars: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # {}: not Ansible-managed
    containerlab_kind: str | None = None  # None: no containerlab node kind for this NOS
    apply: Apply | None = None  # what runs on the switch after the swap (pulumi switch_apply); None: nothing
    # where this NOS's rendering of the lossless RoCE intent departs from the vendor's own default, or the
    # NOS cannot carry part of it (docs/pfc-headroom.md); the report lists them for every lossless plane
    lossless_notes: tuple[str, ...] = ()

    @property
    def startup_file(self) -> str:
        return self.file_names[0]
