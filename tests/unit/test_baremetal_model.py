"""The bare-metal declaration: BMC management per server model or SU, refused at FILE:LINE: field when hostile;
the plan's BMC records (address = the server's oob address, SU over model, password kept a reference)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clusterforge.loading import load_and_plan
from clusterforge.model.errors import DeclarationError

REPO = Path(__file__).resolve().parents[2]
LAB = (REPO / "inventory" / "lab.yaml").read_text()

MODEL_BLOCK = """
baremetal:
  models:
    hgx-h200-2gpu:
      kind: redfish
      credentials: {username: admin, password: {pulumi: bmcPassword}}
      ca: .lab/pki/bmc-ca.pem
      bios: {ProcTurboMode: Disabled, NumCores: 10, QuietBoot: true}
"""


def _declare(tmp_path: Path, text: str) -> Path:
    # the lab inventory with a block appended, beside a copy of the catalog files it names
    shutil.copytree(REPO / "inventory" / "catalog", tmp_path / "catalog")
    path = tmp_path / "metal.yaml"
    path.write_text(LAB + text)
    return path


def _problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(DeclarationError) as caught:
        load_and_plan(_declare(tmp_path, text))
    return [str(p) for p in caught.value.problems]


def test_every_server_of_a_managed_model_gets_its_oob_address_as_bmc(tmp_path):
    spec, plan, _ = load_and_plan(_declare(tmp_path, MODEL_BLOCK))
    servers = [d for d in plan.devices if d.kind == "server" and d.model == "hgx-h200-2gpu"]
    assert servers and set(plan.bmcs) == {d.name for d in servers}
    for device in servers:
        facts = plan.bmcs[device.name]
        oob = next(i for i in device.interfaces if i.plane == "oob")
        assert f"{facts.address}/{facts.prefix}" == oob.ip
        assert facts.url == f"https://{facts.address}"
        assert facts.password.pulumi == "bmcPassword" and facts.password.vault is None
        assert dict(facts.bios) == {"ProcTurboMode": "Disabled", "NumCores": 10, "QuietBoot": True}
        assert (facts.boot_mode, facts.boot_target, facts.verify_tls) == ("uefi", "pxe", True)
        assert facts.install == "image"  # the default install method


def test_the_install_method_reaches_the_servers_install_request(tmp_path):
    from clusterforge.lab.from_plan import lab_topology
    from clusterforge.pulumi.metal import metal_servers
    from clusterforge.pulumi.providers.metal_server import install_request
    from clusterforge.render import render_tree

    _, plan, _ = load_and_plan(_declare(tmp_path, MODEL_BLOCK + "      install: debian-installer\n"))
    assert {f.install for f in plan.bmcs.values()} == {"debian-installer"}
    server = next(iter(plan.bmcs))
    _, metal = metal_servers(plan, lab_topology(plan, render_tree(plan)), "pw", {server: "gpu-0123456789abcdef"})
    requests = {m.server: install_request(m.request_json, "pw") for m in metal}
    assert requests[server].method == "debian-installer" and requests[server].image == "gpu-0123456789abcdef"
    assert all(r.image is None for name, r in requests.items() if name != server)


def test_no_declaration_no_bmcs():
    _, plan, _ = load_and_plan(REPO / "inventory" / "lab.yaml")
    assert plan.bmcs == {}


def test_an_su_management_replaces_the_models(tmp_path):
    text = LAB.replace("    server_model: hgx-h200-2gpu\n", "    server_model: hgx-h200-2gpu\n"
                       "    management:\n"
                       "      credentials: {username: ops, password: {vault: secrets/bmc.vault}}\n"
                       "      port: 8443\n      verify_tls: false\n", 1)
    shutil.copytree(REPO / "inventory" / "catalog", tmp_path / "catalog")
    path = tmp_path / "su.yaml"
    path.write_text(text + MODEL_BLOCK)
    _, plan, _ = load_and_plan(path)
    su1 = {n: f for n, f in plan.bmcs.items() if n.startswith("su01-")}
    assert su1 and all(f.username == "ops" and f.port == 8443 and not f.verify_tls for f in su1.values())
    assert all(f.password.vault == "secrets/bmc.vault" and f.url.endswith(":8443") for f in su1.values())
    assert all(f.bios == () for f in su1.values())  # the SU's block replaces the model's, BIOS settings included


@pytest.mark.parametrize(("old", "new", "field", "words"), [
    ("password: {pulumi: bmcPassword}", "password: hunter2", "password", "a literal password is not allowed"),
    ("password: {pulumi: bmcPassword}", "password: {pulumi: bmcPassword, vault: x/y}", "password",
     "exactly one of"),
    ("password: {pulumi: bmcPassword}", "password: {pulumi: 'bmc;rm'}", "password.pulumi", "Pulumi config key"),
    ("username: admin", "username: 'admin root'", "username", "BMC user name"),
    ("ca: .lab/pki/bmc-ca.pem", "ca: ../../etc/ssl/ca.pem", "ca", "repository path"),
    ("ca: .lab/pki/bmc-ca.pem", "ca: /etc/ssl/ca.pem", "ca", "repository path"),
    ("ProcTurboMode: Disabled", "'Proc Turbo{{x}}': Disabled", "bios", "Redfish attribute identifier"),
    ("NumCores: 10", "NumCores: 'ten; reboot'", "bios.NumCores", "BIOS attribute value"),
    ("NumCores: 10", "NumCores: 99999999999", "bios.NumCores", "BIOS attribute value"),
    ("kind: redfish", "kind: ipmi", "kind", "'redfish'"),
    ("bios: {", "install: 'image; reboot'\n      bios: {", "install", "'image' or 'debian-installer'"),
])
def test_hostile_management_is_refused_at_file_line_field(tmp_path, old, new, field, words):
    block = MODEL_BLOCK.replace(old, new)
    problems = _problems(tmp_path, block)
    key = new.split(":")[0].strip("'{ ")
    line = LAB.count("\n") + 1 + next(n for n, text in enumerate(block.splitlines()) if key in text)
    assert any(f"metal.yaml:{line}:" in p and field in p and words in p for p in problems), (problems, line)
    assert not any("hunter2" in p for p in problems)  # a refused password is not echoed


def test_a_model_the_catalog_lacks_is_refused(tmp_path):
    problems = _problems(tmp_path, MODEL_BLOCK.replace("    hgx-h200-2gpu:", "    no-such-model:"))
    assert any("baremetal.models.no-such-model" in p and "unknown server model" in p for p in problems), problems
