"""run_site reports failures per host: real ansible-runner runs that change nothing.

One host is unreachable (nothing listens on its loopback port); the other is this machine
over a local connection, where the driver role stops at its first check because the
`mirror` source has no URL. No task before that check changes the machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from clusterforge.provision import run_site

pytestmark = pytest.mark.slow

HOST_VARS = {
    "cf_software": {
        "nvidia_driver_branch": "535",
        "nvidia_driver_version": "535.261.03",
        "nvidia_driver_source": "mirror",
        "cuda_version": "11.8",
        "kubernetes_version": "1.31",
    },
}


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):
    workdir = tmp_path_factory.mktemp("runner")
    inventory = workdir / "inventory.yml"
    inventory.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "children": {
                        "servers": {
                            "hosts": {
                                "dark-host": {"ansible_host": "127.0.0.1", "ansible_port": 1, **HOST_VARS},
                                "local-host": {
                                    "ansible_connection": "local",
                                    "ansible_python_interpreter": sys.executable,
                                    "ansible_become": False,
                                    **HOST_VARS,
                                },
                            }
                        }
                    }
                }
            }
        )
    )
    return run_site(inventory, workdir / "private", tags=["driver"])


def test_run_is_not_ok(result) -> None:
    assert (result.ok, result.status) == (False, "failed")


def test_unreachable_host_is_reported(result) -> None:
    assert result.unreachable_hosts == ["dark-host"]


def test_failed_host_names_the_task_and_the_reason(result) -> None:
    assert list(result.failed_hosts) == ["local-host"]
    message = result.failed_hosts["local-host"]
    assert message.startswith("Check that a mirror source names its URL.")
    assert "nvidia_driver_mirror_url" in message


def test_per_host_stats_and_changes(result) -> None:
    assert result.stats["local-host"]["failed"] == 1
    assert result.stats["dark-host"]["unreachable"] == 1
    assert result.changed_per_host == {"dark-host": 0, "local-host": 0}


def test_artifacts_are_kept(result) -> None:
    assert result.artifact_dir is not None and (Path(result.artifact_dir) / "stdout").exists()


def test_host_key_checking_stays_on_when_called_as_a_library(result) -> None:
    """ansible-runner records the environment it started ansible-playbook with: checking is on."""
    import json

    command = json.loads((Path(result.artifact_dir) / "command").read_text())
    assert command["env"]["ANSIBLE_HOST_KEY_CHECKING"] == "True"
