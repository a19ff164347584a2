"""A drift check (run_site in check mode) leaves nothing behind that changes the next run in the same
ansible-runner directory: ansible-runner writes its `cmdline` argument to env/cmdline and reads it back
whenever a run passes none, so the provisioning run after a drift check ran with --check and repaired
nothing. Real ansible-runner and ansible-playbook on this machine (a local connection, files under tmp)."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from clusterforge.provision import run_site

PLAYBOOK = """\
- name: Write one file.
  hosts: all
  gather_facts: false
  tasks:
    - name: Ensure the marker file holds the planned text.
      ansible.builtin.copy:
        dest: "{{ marker }}"
        content: "planned\\n"
        mode: "0644"
"""


def _project(tmp_path: Path) -> tuple[Path, Path, Path]:
    project = tmp_path / "playbooks"
    project.mkdir()
    (project / "ansible.cfg").write_text("[defaults]\n")
    (project / "one.yml").write_text(PLAYBOOK)
    marker = tmp_path / "marker"
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"local-host": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable, "marker": str(marker)}}}}))
    return project, inventory, marker


def test_the_run_after_a_check_mode_run_changes_the_host(tmp_path: Path) -> None:
    project, inventory, marker = _project(tmp_path)
    private = tmp_path / "private"
    checked = run_site(inventory, private, playbooks_dir=project, playbook="one.yml", check=True)
    assert checked.ok, checked.failed_hosts
    assert checked.changes == {"local-host": [("Ensure the marker file holds the planned text.", str(marker))]}
    assert not marker.exists()  # check mode changed nothing
    assert not (private / "env" / "cmdline").exists()

    applied = run_site(inventory, private, playbooks_dir=project, playbook="one.yml")
    assert applied.ok, applied.failed_hosts
    assert marker.read_text() == "planned\n"
    assert applied.changed_per_host == {"local-host": 1}


def test_a_cmdline_file_left_by_an_older_run_is_not_read(tmp_path: Path) -> None:
    project, inventory, marker = _project(tmp_path)
    private = tmp_path / "private"
    (private / "env").mkdir(parents=True)
    (private / "env" / "cmdline").write_text("--check --diff")  # what a drift check before the fix left
    applied = run_site(inventory, private, playbooks_dir=project, playbook="one.yml")
    assert applied.ok and marker.read_text() == "planned\n"


TEMPLATE_PLAYBOOK = """\
- name: Write one file from a template.
  hosts: all
  gather_facts: false
  tasks:
    - name: Ensure the templated file holds the planned text.
      ansible.builtin.template:
        src: planned.conf.j2
        dest: "{{ marker }}"
        mode: "0644"
"""


def test_a_missing_templated_file_is_named_by_its_destination(tmp_path: Path) -> None:
    """A template's check-mode result for a file that is gone carries no dest and no before header; its after
    header is the rendered temporary source on the controller (the lab's drift line named that .j2 path)."""
    project, inventory, marker = _project(tmp_path)
    (project / "planned.conf.j2").write_text("planned {{ 1 + 1 }}\n")
    (project / "one.yml").write_text(TEMPLATE_PLAYBOOK)
    checked = run_site(inventory, tmp_path / "private", playbooks_dir=project, playbook="one.yml", check=True)
    assert checked.ok, checked.failed_hosts
    assert checked.changes == {"local-host": [("Ensure the templated file holds the planned text.", str(marker))]}
    assert not marker.exists()
    marker.write_text("edited by hand\n")  # present but different: named the same way
    checked = run_site(inventory, tmp_path / "private", playbooks_dir=project, playbook="one.yml", check=True)
    assert checked.changes == {"local-host": [("Ensure the templated file holds the planned text.", str(marker))]}
