"""InfiniBand's record: ib.json per switch. Managed through the subnet manager: no Ansible, no containerlab."""

from __future__ import annotations

from clusterforge import nos
from clusterforge.render.jsontext import to_json
from clusterforge.render.switches._infiniband import ib_structured_config
from clusterforge.render.switches._infiniband.schema import IbConfig
from clusterforge.render.switches.driver import NosDriver
from clusterforge.vocab import Nos

__all__ = ["INFINIBAND"]


def _write(structured: IbConfig) -> dict[str, str]:
    return {"ib.json": to_json(structured.ib)}


INFINIBAND = NosDriver(nos=Nos.INFINIBAND, traits=nos.INFINIBAND, build=ib_structured_config, write=_write,
                       file_names=("ib.json",))
