"""`clusterforge sot push | pull` against a running Nautobot (PostgreSQL, Redis, nautobot-server).

One sequence, as a site would run it: push the lab with two SUs; push again (nothing changes);
push the lab without SU 2 (exactly SU 2's objects go); a technician records serials, asset tags and
status in Nautobot; `sot pull` brings them into the asset register and the next push keeps them.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from ruamel.yaml import YAML

from clusterforge.export.devicetypes import device_types
from clusterforge.loading import load_and_plan

pytestmark = [pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, token: str, env_name: str = "CLUSTERFORGE_SOT_TOKEN") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CLUSTERFORGE_SOT_TOKEN", "NAUTOBOT_TOKEN")}
    return subprocess.run([sys.executable, "-m", "clusterforge.cli", *args], capture_output=True, text=True,
                          timeout=1200, cwd=REPO, env={**env, env_name: token})


def _two_su_lab(directory: Path) -> Path:
    """inventory/lab.yaml with a second SU (the lab's envelope has room for two), beside a catalog copy."""
    shutil.copytree(REPO / "inventory" / "catalog", directory / "catalog")
    yaml = YAML()
    data = yaml.load((REPO / "inventory" / "lab.yaml").read_text())
    second = dict(data["scalable_units"][0])
    second["id"] = 2
    data["scalable_units"].append(second)
    path = directory / "lab.yaml"  # same cluster name: the same objects in Nautobot
    with path.open("w") as handle:
        yaml.dump(data, handle)
    return path


class Api:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.session = url, requests.Session()
        self.session.headers.update({"Authorization": f"Token {token}", "Accept": "application/json"})

    def list(self, endpoint: str, **params) -> list[dict]:
        found, url = [], f"{self.url}/api/{endpoint}"
        params = {"limit": 1000, **params}
        while url:
            page = self.session.get(url, params=params, timeout=120).json()
            found += page["results"]
            url, params = page.get("next"), None
        return found

    def patch(self, endpoint: str, obj_id: str, **fields) -> None:
        response = self.session.patch(f"{self.url}/api/{endpoint}{obj_id}/", json=fields, timeout=120)
        assert response.status_code == 200, response.text


@pytest.fixture(scope="module")
def sequence(nautobot, tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("sot")
    two = _two_su_lab(work)
    runs = {}
    for step, inventory in (("first", two), ("second", two), ("removed", REPO / "inventory" / "lab.yaml")):
        done = _cli("sot", "push", str(inventory), "--url", nautobot.url, "--format", "json", token=nautobot.token)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert nautobot.token not in done.stdout + done.stderr
        runs[step] = json.loads(done.stdout)
    return {"runs": runs, "two": two, "work": work}


def test_first_push_creates_the_plan(sequence) -> None:
    first = sequence["runs"]["first"]
    spec, plan, _ = load_and_plan(sequence["two"])
    assert first["created"]["device"] == len(plan.devices) + len(plan.pdus)
    assert first["created"]["cable"] == len(plan.links)
    assert first["created"]["rack"] == len(plan.racks)
    # ports instantiated from the device types get their planned MTU and bond membership
    assert set(first["updated"]) <= {"interface"} and first["deleted"] == {}


def test_second_push_changes_nothing(sequence) -> None:
    second = sequence["runs"]["second"]
    assert (second["changed"], second["created"], second["updated"], second["deleted"]) == (0, {}, {}, {})


def test_removing_an_su_removes_exactly_its_objects(sequence, nautobot) -> None:
    removed = sequence["runs"]["removed"]
    assert removed["created"] == {} and removed["updated"] == {}
    _, two_plan, _ = load_and_plan(sequence["two"])
    _, one_plan, _ = load_and_plan(REPO / "inventory" / "lab.yaml")
    gone_devices = sorted({d.name for d in two_plan.devices} - {d.name for d in one_plan.devices}
                          | {p.name for p in two_plan.pdus} - {p.name for p in one_plan.pdus})
    assert gone_devices and all(name.startswith("su02-") for name in gone_devices)
    deleted = {(kind, key) for action, kind, key in removed["changes"] if action == "delete"}
    assert sorted(key for kind, key in deleted if kind == "device") == gone_devices
    assert sorted(key for kind, key in deleted if kind == "rack") == sorted(
        {r.name for r in two_plan.racks} - {r.name for r in one_plan.racks})
    assert {key for kind, key in deleted if kind == "rack-group"} == {"lab-su02"}
    # what is left is exactly the one-SU plan
    api = Api(nautobot.url, nautobot.token)
    devices = api.list("dcim/devices/", tags="clusterforge-lab")
    assert sorted(d["name"] for d in devices) == sorted([d.name for d in one_plan.devices] +
                                                        [p.name for p in one_plan.pdus])
    addresses = {a["address"] for a in api.list("ipam/ip-addresses/", tags="clusterforge-lab")}
    assert addresses == {i.ip for d in one_plan.devices for i in d.interfaces if i.ip}
    cables = {c["id"] for c in api.list("dcim/cables/", tags="clusterforge-lab")}
    assert len(cables) == len(one_plan.links) + len(one_plan.pdus)


def test_device_types_carry_the_library_components(sequence, nautobot) -> None:
    spec, plan, _ = load_and_plan(REPO / "inventory" / "lab.yaml")
    api = Api(nautobot.url, nautobot.token)
    for device_type in device_types(spec, plan):
        (server_type,) = api.list("dcim/device-types/", model=device_type.data["model"])
        templates = api.list("dcim/interface-templates/", device_type=server_type["id"])
        assert sorted(t["name"] for t in templates) == sorted(i["name"] for i in device_type.data.get("interfaces", []))


def test_pull_reads_as_built_facts_and_push_keeps_them(sequence, nautobot) -> None:
    api = Api(nautobot.url, nautobot.token)
    (device,) = api.list("dcim/devices/", name="su01-r01-gpu01")
    (active,) = api.list("extras/statuses/", name="Active")
    api.patch("dcim/devices/", device["id"], serial="=HYPERLINK(1)", asset_tag="DC-0042", status=active["id"])
    out = sequence["work"] / "asbuilt"
    pulled = _cli("sot", "pull", "inventory/lab.yaml", "--url", nautobot.url, "--out", str(out), "--format", "json",
                  token=nautobot.token, env_name="NAUTOBOT_TOKEN")
    assert pulled.returncode == 0, pulled.stderr
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO((out / "assets-asbuilt.csv").read_text()))}
    assert (rows["su01-r01-gpu01"]["serial"], rows["su01-r01-gpu01"]["asset_tag"],
            rows["su01-r01-gpu01"]["status"]) == ("'=HYPERLINK(1)", "DC-0042", "Active")
    assert rows["su01-r01-gpu02"]["status"] == "Planned"
    again = _cli("sot", "push", "inventory/lab.yaml", "--url", nautobot.url, "--format", "json", token=nautobot.token)
    assert json.loads(again.stdout)["changed"] == 0
    (device,) = api.list("dcim/devices/", name="su01-r01-gpu01")
    assert (device["serial"], device["asset_tag"]) == ("=HYPERLINK(1)", "DC-0042")


def test_a_refused_token_is_reported_without_the_token(nautobot) -> None:
    wrong = "0123456789abcdef0123456789abcdef01234567"
    done = _cli("sot", "push", "inventory/lab.yaml", "--url", nautobot.url, token=wrong)
    assert done.returncode == 3 and "HTTP 403" in done.stderr
    assert wrong not in done.stdout + done.stderr


def test_no_token_is_a_usage_error() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("CLUSTERFORGE_SOT_TOKEN", "NAUTOBOT_TOKEN")}
    done = subprocess.run([sys.executable, "-m", "clusterforge.cli", "sot", "push", "inventory/lab.yaml", "--url",
                           "http://127.0.0.1:9"], capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert done.returncode == 2 and "no API token" in done.stderr


def test_token_from_a_pulumi_stack_secret(sequence, nautobot, tmp_path: Path) -> None:
    """--token-from-stack reads the stack's secret config (encrypted in the state, never in the output)."""
    from pulumi.automation import ConfigValue

    from clusterforge.pulumi import automation

    if not automation.engine_binary().exists():
        pytest.skip(f"no Pulumi engine at {automation.engine_binary()} (scripts/setup-pulumi.sh builds it)")
    state = tmp_path / "state"
    backend = automation.Backend.resolve(state)  # what the CLI resolves for --state-dir
    handle = automation.open_stack("sot", None, backend)
    handle.set_config("clusterforge:sotToken", ConfigValue(value=nautobot.token, secret=True))
    stored = b"".join(p.read_bytes() for p in (state / "pulumi").rglob("*") if p.is_file())
    stored += b"".join(p.read_bytes() for p in state.rglob("Pulumi.*.yaml"))
    assert nautobot.token.encode() not in stored
    env = {k: v for k, v in os.environ.items() if k not in ("CLUSTERFORGE_SOT_TOKEN", "NAUTOBOT_TOKEN")}
    done = subprocess.run([sys.executable, "-m", "clusterforge.cli", "sot", "push", "inventory/lab.yaml", "--url",
                           nautobot.url, "--token-from-stack", "sot", "--state-dir", str(state), "--format", "json"],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["changed"] == 0 and nautobot.token not in done.stdout + done.stderr
