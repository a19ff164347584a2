"""Fixtures for the Pulumi tests: the repo's engine and a local file backend in a temp dir."""

from __future__ import annotations

import pytest
from pulumi_fixtures import require_engine, temp_backend

from clusterforge.pulumi.automation import Backend


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Backend:
    require_engine()
    return temp_backend(tmp_path_factory.mktemp("pulumi-state"))
