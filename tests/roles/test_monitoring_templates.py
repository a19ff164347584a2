"""roles/monitoring's templates rendered by Ansible on this machine from the lab's rendered files: the
Alertmanager configuration with the site's webhooks passes amtool (the task's own validate), as does the lab's
(playbooks/monitoring.yml's lab settings: the lab alert receiver and the route's shorter waits), and the daemons'
arguments carry the planned address, ports and retention."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from clusterforge.loading import load_and_plan
from clusterforge.render.ansible_inventory import monitoring_vars
from clusterforge.render.monitoring import monitoring_files

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = REPO_ROOT / "roles" / "monitoring" / "templates"
HOOKS = ["http://198.18.8.1:5001/alerts", "https://pager.example.invalid/hook?team=gpu"]


def lab_settings() -> dict:
    """What playbooks/monitoring.yml sets on lab hosts (its cf_lab pre_task's set_fact)."""
    plays = yaml.safe_load((REPO_ROOT / "playbooks" / "monitoring.yml").read_text())
    (task,) = [t for p in plays for t in p.get("pre_tasks", []) if "cf_lab" in str(t.get("when", ""))]
    return task["ansible.builtin.set_fact"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("amtool") is None:
        pytest.fail("amtool is not installed (scripts/setup.sh installs prometheus-alertmanager)")
    out = tmp_path_factory.mktemp("monitoring-role")
    _, plan, _ = load_and_plan(REPO_ROOT / "inventory" / "lab.yaml")
    (out / "alertmanager.src.yml").write_text(monitoring_files(plan)["alertmanager.yml"])
    facts = monitoring_vars(plan)
    lab = lab_settings()
    play = [{"hosts": "localhost", "connection": "local", "gather_facts": False, "vars": {
        "ansible_python_interpreter": sys.executable,
        "monitoring_alertmanager_webhook_urls": HOOKS,
        "monitoring_alertmanager_route_timing": {},
        "monitoring_lab_receiver_enabled": False,
        "monitoring_lab_receiver_port": 9097,
        "monitoring_listen_address": facts["listen_address"],
        "monitoring_prometheus_port": facts["prometheus_port"],
        "monitoring_alertmanager_port": facts["alertmanager_port"],
        "monitoring_retention_days": facts["retention_days"],
        "monitoring_retention_size_mb": facts["retention_size_mb"],
        "monitoring_rendered_alertmanager":
            f"{{{{ lookup('ansible.builtin.file', '{out}/alertmanager.src.yml') | ansible.builtin.from_yaml }}}}",
    }, "tasks": [
        {"ansible.builtin.template": {"src": str(TEMPLATES / "alertmanager.yml.j2"),
                                      "dest": str(out / "alertmanager.yml"), "mode": "0644",
                                      "validate": "amtool check-config %s"}},
        # as on a lab host: playbooks/monitoring.yml's lab settings over the same webhooks
        {"ansible.builtin.template": {"src": str(TEMPLATES / "alertmanager.yml.j2"),
                                      "dest": str(out / "alertmanager.lab.yml"), "mode": "0644",
                                      "validate": "amtool check-config %s"},
         "vars": {k: v for k, v in lab.items() if k.startswith("monitoring_alertmanager_route")
                  or k == "monitoring_lab_receiver_enabled"}},
        {"ansible.builtin.template": {"src": str(TEMPLATES / "cf-lab-alert-receiver.service.j2"),
                                      "dest": str(out / "cf-lab-alert-receiver.service"), "mode": "0644"},
         "vars": {"__monitoring_alertmanager_service": "prometheus-alertmanager",
                  "__monitoring_lab_receiver_script": "/usr/local/libexec/clusterforge/cf-lab-alert-receiver.py"}},
        *({"ansible.builtin.template": {"src": str(TEMPLATES / name), "dest": str(out / name.removesuffix(".j2")),
                                        "mode": "0644"}} for name in ("prometheus.args.j2", "alertmanager.args.j2")),
    ]}]
    (out / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(out / "tmp"), "ANSIBLE_HOME": str(out / "home"), "NO_COLOR": "1"}
    played = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,",
                             str(out / "play.yml")], env=env, capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stdout + played.stderr
    return out


@pytest.fixture(scope="module")
def lab_monitoring_src(rendered: Path) -> dict:
    """The lab's rendered alertmanager.yml (the role's input)."""
    return yaml.safe_load((rendered / "alertmanager.src.yml").read_text())


def _args(path: Path) -> list[str]:
    line = next(line for line in path.read_text().splitlines() if line.startswith("ARGS="))
    return shlex.split(shlex.split(line.removeprefix("ARGS="))[0])


def test_the_site_webhooks_are_the_receivers_integrations(rendered: Path) -> None:
    config = yaml.safe_load((rendered / "alertmanager.yml").read_text())
    assert [hook["url"] for hook in config["receivers"][0]["webhook_configs"]] == HOOKS
    assert config["route"]["receiver"] == config["receivers"][0]["name"]


def test_a_real_cluster_gets_the_rendered_route_and_no_lab_receiver(rendered: Path, lab_monitoring_src) -> None:
    config = yaml.safe_load((rendered / "alertmanager.yml").read_text())
    assert config["route"] == lab_monitoring_src["route"]
    assert not any(":9097/" in hook["url"] for hook in config["receivers"][0]["webhook_configs"])


def test_the_lab_delivers_to_its_receiver_too_with_the_shorter_waits(rendered: Path, lab_monitoring_src) -> None:
    lab = lab_settings()
    assert lab["monitoring_lab_receiver_enabled"] is True
    config = yaml.safe_load((rendered / "alertmanager.lab.yml").read_text())
    (receiver,) = config["receivers"]
    assert [hook["url"] for hook in receiver["webhook_configs"]] == [*HOOKS, "http://198.18.8.76:9097/alerts"]
    timing = lab["monitoring_alertmanager_route_timing"]
    assert set(timing) <= {"group_wait", "group_interval", "repeat_interval"} and timing
    assert config["route"] == {**lab_monitoring_src["route"], **timing}  # the sub-routes and grouping unchanged
    assert config["route"]["group_wait"] != lab_monitoring_src["route"]["group_wait"]
    unit = (rendered / "cf-lab-alert-receiver.service").read_text()
    assert "LAB" in unit
    assert ("ExecStart=/usr/bin/python3 /usr/local/libexec/clusterforge/cf-lab-alert-receiver.py"
            " --listen 198.18.8.76 --port 9097 --record /var/lib/cf-lab-alert-receiver/notifications.jsonl") in unit


def test_prometheus_listens_on_the_management_address_with_the_planned_retention(rendered: Path) -> None:
    args = _args(rendered / "prometheus.args")
    assert "--web.listen-address=198.18.8.76:9090" in args
    assert "--storage.tsdb.retention.time=15d" in args
    assert any(a.startswith("--storage.tsdb.retention.size=") and a.endswith("MB") for a in args), args


def test_alertmanager_listens_on_the_management_address_without_gossip(rendered: Path) -> None:
    assert _args(rendered / "alertmanager.args") == ["--web.listen-address=198.18.8.76:9093",
                                                     "--cluster.listen-address="]


@pytest.fixture(scope="module")
def lab_rules(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Path]:
    """The lab's rendered rule files, and each as the role installs it on lab hosts (rules.yml.j2 with
    playbooks/monitoring.yml's lab override of NodeDown's `for`), checked by the task's own promtool validate."""
    if shutil.which("promtool") is None:
        pytest.fail("promtool is not installed (scripts/setup.sh installs prometheus)")
    out = tmp_path_factory.mktemp("monitoring-rules")
    _, plan, _ = load_and_plan(REPO_ROOT / "inventory" / "lab.yaml")
    rules = {path: text for path, text in monitoring_files(plan).items() if path.startswith("rules/")}
    for path, text in rules.items():
        (out / "src" / path).parent.mkdir(parents=True, exist_ok=True)
        (out / "src" / path).write_text(text)
    (out / "rules").mkdir()
    play = [{"hosts": "localhost", "connection": "local", "gather_facts": False, "vars": {
        "ansible_python_interpreter": sys.executable,
        "monitoring_alert_for": lab_settings()["monitoring_alert_for"]}, "tasks": [
        {"ansible.builtin.template": {"src": str(TEMPLATES / "rules.yml.j2"), "dest": f"{out}/{{{{ item }}}}",
                                      "mode": "0644", "validate": "promtool check rules %s"},
         "vars": {"monitoring_rendered_rules":
                  f"{{{{ lookup('ansible.builtin.file', '{out}/src/' ~ item) | ansible.builtin.from_yaml }}}}"},
         "loop": sorted(rules)}]}]
    (out / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(out / "tmp"), "ANSIBLE_HOME": str(out / "home"), "NO_COLOR": "1"}
    played = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,",
                             str(out / "play.yml")], env=env, capture_output=True, text=True, timeout=300)
    assert played.returncode == 0, played.stdout + played.stderr
    return rules, out


def test_the_lab_override_changes_only_the_named_alerts_wait(lab_rules) -> None:
    rules, out = lab_rules
    waits = lab_settings()["monitoring_alert_for"]
    assert {"NodeDown", "GpuTemperatureCritical"} <= set(waits)
    overridden = set()
    for path, text in rules.items():
        rendered, installed = yaml.safe_load(text), yaml.safe_load((out / path).read_text())
        for group in rendered["groups"]:
            for rule in group["rules"]:
                if rule.get("alert") in waits:
                    assert rule["for"] != waits[rule["alert"]]  # the rendered (production) wait is not the lab's
                    rule["for"] = waits[rule["alert"]]
                    overridden.add(rule["alert"])
        # everything else as rendered, templates in annotations ({{ $labels.host }}) left to Prometheus
        assert installed == rendered, path
    assert overridden == set(waits), "every lab override names a rendered alert"
