"""Fixtures for lab tests: a small synthetic lab, brought up once per session, always torn down."""

from __future__ import annotations

import pytest
from lab_fixtures import leftovers, skip_reason, small_topology

from clusterforge.lab import LabTopology


@pytest.fixture(scope="session")
def lab_topology() -> LabTopology:
    return small_topology()


@pytest.fixture(scope="session")
def lab(lab_topology: LabTopology, request: pytest.FixtureRequest):
    """The running lab (UpResult); torn down at the end of the session even when up fails."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    from clusterforge.lab import down, up

    def teardown() -> None:
        down(lab_topology.name)
        left = leftovers(lab_topology.name)
        assert not any(left.values()), f"lab left things behind: {left}"

    request.addfinalizer(teardown)
    return up(lab_topology)


@pytest.fixture(scope="session")
def lab_hosts(lab, lab_topology):
    """name → testinfra host over SSH with the lab's ssh_config (host keys checked)."""
    import testinfra

    return {h.name: testinfra.get_host(f"ssh://{h.name}", ssh_config=str(lab.ssh_config)) for h in lab_topology.hosts}
