"""MetalServer's diff: what a second `up` does with a bare-metal server, from its install record.

An install stopped halfway (timeout, power lost, Ctrl-C: the record says ``installing``) or never run is
installed again; changed install inputs re-image; an installed server that answers SSH is left alone.
(The SSH answer itself is the lab's: here a server whose ssh entry is missing counts as not answering.)"""

from __future__ import annotations

import json

import pytest

from clusterforge.baremetal import install as metal_install
from clusterforge.pulumi.providers.metal_server import MetalServerProvider

PROPS = {"lab": "lab-metal", "server": "su01-r01-gpu01", "request": "{}", "request_hash": "a" * 16,
         "bmc_password": "x"}


@pytest.fixture(autouse=True)
def lab_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CLUSTERFORGE_LAB_HOME", str(tmp_path))
    return tmp_path


def write_record(**data):
    path = metal_install.record_path("lab-metal", "su01-r01-gpu01")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def diff(olds=PROPS, news=PROPS):
    return MetalServerProvider().diff("id", dict(olds), dict(news))


def test_a_blank_server_is_installed(capsys):
    result = diff()
    assert result.changes and not result.replaces
    assert "su01-r01-gpu01: it is blank" in capsys.readouterr().err


def test_an_install_that_did_not_finish_is_installed_again(capsys):
    write_record(status="installing", started_at=1.0)
    result = diff()
    assert result.changes and not result.replaces
    assert "su01-r01-gpu01: its install did not finish; `up` installs it again" in capsys.readouterr().err


def test_installed_but_silent_is_installed_again(capsys):
    write_record(status="installed", host_key="ssh-ed25519 AAAA")
    assert diff().changes
    assert "does not answer SSH" in capsys.readouterr().err


def test_changed_install_inputs_reimage():
    write_record(status="installed")
    assert diff(news={**PROPS, "request_hash": "b" * 16}).changes


def test_another_server_name_replaces():
    assert diff(news={**PROPS, "server": "su01-r01-gpu02"}).replaces == ["server"]


def test_installed_and_answering_is_left_alone(monkeypatch):
    write_record(status="installed")
    monkeypatch.setattr(metal_install, "is_installed", lambda lab, server: True)
    assert not diff().changes


def test_the_install_request_survives_the_state_round_trip():
    """What MetalServer stores (JSON) is the install request the plan gives, field for field."""
    from clusterforge.baremetal.install import _target
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.lab.metal_site import LabSite
    from clusterforge.loading import load_and_plan
    from clusterforge.pulumi.metal import metal_servers
    from clusterforge.pulumi.providers.metal_server import install_request
    from clusterforge.render import render_tree

    _, plan, _ = load_and_plan("inventory/lab-metal.yaml")
    rest, (args,) = metal_servers(plan, lab_topology(plan, render_tree(plan)), "not-a-real-password")
    assert args.server not in {h.name for h in rest.hosts}
    assert "not-a-real-password" not in args.request_json  # the password is the secret input, not the request
    req = install_request(args.request_json, "not-a-real-password")
    assert req.device == plan.device(args.server)
    assert [n.name for n in req.host.nics] == ["mgmt0", "bond0", "rail0", "rail1"]
    target = _target(req, LabSite().boot_mac(req.lab, args.server), {n.name: n.mac for n in req.host.nics})
    assert target.nics[0].address == "198.19.40.16/27" and target.nics[0].gateway == "198.19.40.1"
    assert {r.dev for r in target.routes} == {"bond0", "rail0", "rail1"}
