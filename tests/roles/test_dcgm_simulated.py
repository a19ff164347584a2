"""roles/dcgm_exporter's SIMULATED exporter as the role writes it, rendered by Ansible on this machine: the
configuration task of tasks/simulated.yml (its own `content` and `vars`, only the destination moved) feeds the
role's script, which then serves every GPU's series labelled simulated="true"; the unit runs that script on the
exporter's port and says SIMULATED; site.yml turns it on only for lab hosts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
ROLE = REPO_ROOT / "roles" / "dcgm_exporter"
HOST = "su01-r02-gpu02"


def _task(name: str) -> dict:
    tasks = yaml.safe_load((ROLE / "tasks" / "simulated.yml").read_text())
    (task,) = [t for t in tasks if t["name"] == name]
    return task


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dcgm-simulated")
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    config = _task("Ensure the simulated exporter's configuration is installed.")
    copy = {**config["ansible.builtin.copy"], "dest": str(out / "config.json"), "owner": None, "group": None}
    copy = {k: v for k, v in copy.items() if v is not None}
    play = [{"hosts": HOST, "connection": "local", "gather_facts": False, "vars": {
        **defaults, **yaml.safe_load((ROLE / "vars" / "main.yml").read_text()),
        "ansible_python_interpreter": sys.executable,
        "dcgm_exporter_simulated_gpus": "{{ 2 | int }}", "dcgm_exporter_simulated_model": "H200"}, "tasks": [
        {"ansible.builtin.copy": copy, "vars": config["vars"]},
        {"ansible.builtin.template": {"src": str(ROLE / "templates" / "cf-sim-dcgm-exporter.service.j2"),
                                      "dest": str(out / "cf-sim-dcgm-exporter.service"), "mode": "0644"}},
    ]}]
    (out / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(out / "tmp"), "ANSIBLE_HOME": str(out / "home"), "NO_COLOR": "1"}
    played = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", f"{HOST},",
                             str(out / "play.yml")], env=env, capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stdout + played.stderr
    return out


def test_the_roles_configuration_feeds_its_script(rendered: Path) -> None:
    config = json.loads((rendered / "config.json").read_text())
    assert (config["simulated"], config["gpus"], config["model"], config["hostname"]) == (True, 2, "H200", HOST)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    script = ROLE / "files" / "cf-sim-dcgm-exporter.py"
    process = subprocess.Popen([sys.executable, str(script), "--config", str(rendered / "config.json"), "--state",
                                str(rendered / "state.json"), "--listen", "127.0.0.1", "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        deadline = time.monotonic() + 20
        while True:
            try:
                with opener.open(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
                    text = answer.read().decode()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        process.terminate()
        process.wait(timeout=10)
    samples = [line for line in text.splitlines() if not line.startswith("#")]
    assert len(samples) == 2 * len(config["metrics"])
    assert all('simulated="true"' in line and f'Hostname="{HOST}"' in line for line in samples)
    assert 'DCGM_FI_DEV_GPU_TEMP{gpu="1",' in text


def test_the_unit_runs_the_script_on_the_exporter_port_and_says_simulated(rendered: Path) -> None:
    unit = (rendered / "cf-sim-dcgm-exporter.service").read_text()
    assert "Description=SIMULATED dcgm-exporter" in unit
    assert ("ExecStart=/usr/bin/python3 /usr/local/libexec/clusterforge/cf-sim-dcgm-exporter.py"
            " --config /etc/cf-sim-dcgm-exporter/config.json --state /var/lib/cf-sim-dcgm-exporter/state.json"
            " --port 9400") in unit
    assert "StateDirectory=cf-sim-dcgm-exporter" in unit


def test_site_simulates_the_gpus_on_lab_hosts_only() -> None:
    plays = yaml.safe_load((REPO_ROOT / "playbooks" / "site.yml").read_text())
    (entry,) = [r for p in plays for r in p.get("roles", [])
                if isinstance(r, dict) and r.get("role") == "dcgm_exporter"]
    gate = entry["vars"]["dcgm_exporter_simulated_gpus"]
    assert "cf_gpu_count" in gate and "if cf_lab" in gate and gate.rstrip("} ").endswith("else 0")
    assert yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())["dcgm_exporter_simulated_gpus"] == 0
