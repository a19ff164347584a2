"""Fixtures for the shared-state tests: one private PostgreSQL server per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from state_fixtures import PgServer, pg_server


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    with pg_server() as server:
        yield server
