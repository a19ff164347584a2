"""Switch configuration rendering: Plan in, one directory of NOS config files per switch out.

Pipeline (AVD-style, each step its own module):
  facts.py              index the Plan once: ports, peers, addresses per switch
  structured_config.py  per-switch typed structured config (_<nos>/schema.py: one frozen record per
                        section), one pure function per key (_<nos>/)
  device_config.py      format the structured config: JSON dumps, plain formatting (EOS, Cumulus:
                        _<nos>/running_config.py, startup_yaml.py) and Jinja2 templates
                        (templates/switch/<nos>/, one template per section)
  network_os.py         the NOS table: one driver per NOS (_<nos>/driver.py: builder, writer,
                        file names, Ansible network vars, containerlab kind)
  validate.py           real FRR parser and the SONiC config_db JSON Schema

Paths: switches/<name>/{config_db.json,frr.conf | startup.yaml | running-config | ib.json} and
switches/_fabric/opensm-partitions.conf and opensm.conf for InfiniBand planes.
"""

from __future__ import annotations

from collections.abc import Collection

from clusterforge.fanout import fan_out
from clusterforge.plan import Device, Plan
from clusterforge.render.switches._infiniband import opensm_partitions, opensm_settings
from clusterforge.render.switches.device_config import fabric_files
from clusterforge.render.switches.facts import SWITCH_KINDS, link_index, switch_facts, switch_nos_of
from clusterforge.render.switches.network_os import driver_for
from clusterforge.render.switches.rendered_switch import SwitchFiles

__all__ = ["render_switches", "switch_tree", "SwitchFiles", "FABRIC_DIR", "SWITCHES_DIR"]

SWITCHES_DIR = "switches"
FABRIC_DIR = "_fabric"  # fabric-wide files; switch names never start with "_"


def switch_tree(plan: Plan, workers: int | None = None, nos: Collection[str] | None = None
                ) -> tuple[dict[str, SwitchFiles], dict[str, str]]:
    """({switch name: its files and NOS}, {fabric-wide file name: text}), in Plan order; with `nos`, only the
    switches whose plane runs one of those NOSes (an export that reads some NOSes' files renders no others).

    Each switch is rendered from its own facts, so large plans are split over cores (fanout.py)."""
    index = link_index(plan)
    switches = [device for device in plan.devices if device.kind in SWITCH_KINDS
                and (nos is None or switch_nos_of(plan, device) in nos)]

    def render(device: Device) -> SwitchFiles:
        facts = switch_facts(plan, index, device)
        driver = driver_for(facts.nos)
        return SwitchFiles(facts.nos, driver.write(driver.build(facts, plan.qos)))

    files = fan_out(render, switches, workers)
    return {device.name: texts for device, texts in zip(switches, files, strict=True)}, fabric_files(
        opensm_partitions(plan), opensm_settings(plan))


def render_switches(plan: Plan, nos: Collection[str] | None = None) -> dict[str, str]:
    """The writer's layout: switches/<name>/<file> and switches/_fabric/<file>; with `nos`, only the switches
    whose plane runs one of those NOSes (switch_tree)."""
    per_switch, fabric = switch_tree(plan, nos=nos)
    files = {f"{SWITCHES_DIR}/{name}/{filename}": text for name, texts in per_switch.items()
             for filename, text in texts.items()}
    files.update({f"{SWITCHES_DIR}/{FABRIC_DIR}/{filename}": text for filename, text in fabric.items()})
    return files
