"""EOS's running-config and Cumulus's startup.yaml are formatted in Python (_eos/running_config.py,
_cumulus/startup_yaml.py): each writer formats every section of its record, in the record's order, and
rendering those NOSes loads no template engine. The bytes are the goldens' (tests/golden, tests/fabric)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields
from pathlib import Path

from clusterforge.render.switches._cumulus import startup_yaml
from clusterforge.render.switches._cumulus.schema import CumulusConfig
from clusterforge.render.switches._eos import running_config
from clusterforge.render.switches._eos.schema import EosConfig

ROOT = Path(__file__).resolve().parents[2]


def test_each_writer_formats_every_section_in_the_records_order() -> None:
    assert [name for name, _ in running_config._SECTIONS] == [f.name for f in fields(EosConfig)]
    assert [name for name, _ in startup_yaml._SECTIONS] == [f.name for f in fields(CumulusConfig) if f.name != "nvue"]


# gb200-nvl72-su: storage on EOS, management and oob on Cumulus (its InfiniBand data plane is left out)
PROBE = """
import sys
from clusterforge.model import load_cluster
from clusterforge.plan import plan_cluster
from clusterforge.render.switches.facts import SWITCH_KINDS, link_index, switch_facts
from clusterforge.render.switches.network_os import driver_for
import clusterforge.render
plan = plan_cluster(load_cluster(sys.argv[1])[0])
index = link_index(plan)
written = set()
for device in plan.devices:
    if device.kind in SWITCH_KINDS and device.plane != "data":
        facts = switch_facts(plan, index, device)
        driver = driver_for(facts.nos)
        written.update(driver.write(driver.build(facts, plan.qos)))
print(sorted(written), "jinja2" in sys.modules)
"""


def test_rendering_eos_and_cumulus_loads_no_template_engine() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(ROOT / "inventory" / "gb200-nvl72-su.yaml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.split("\n")[0] == "['running-config', 'startup.yaml'] False"
