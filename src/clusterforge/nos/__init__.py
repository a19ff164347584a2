"""The NOS traits table: one NosTraits per vocab.Nos value, each in its own module here.

The planners receive this table as data (plan.plan_cluster's `nos_traits`, Context.traits) and read a
plane's NOS facts from it; the renderers' NOS drivers (render/switches/network_os.DRIVERS) carry the
same record. This part imports only vocab, so plan/ can read it without seeing render/.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from clusterforge.nos.cumulus import CUMULUS
from clusterforge.nos.eos import EOS
from clusterforge.nos.infiniband import INFINIBAND
from clusterforge.nos.sonic import SONIC
from clusterforge.nos.traits import NosTraits, PortNamer

__all__ = ["NOS_TRAITS", "NosTraits", "PortNamer", "traits_for"]

NOS_TRAITS: Mapping[str, NosTraits] = MappingProxyType({t.nos: t for t in (SONIC, CUMULUS, EOS, INFINIBAND)})


def traits_for(nos: str, table: Mapping[str, NosTraits] = NOS_TRAITS) -> NosTraits:
    try:
        return table[nos]
    except KeyError:
        raise ValueError(f"unknown NOS {nos!r} (known: {', '.join(table)})") from None
