"""One real Nautobot per test session (nautobot_server.py); skips with the reason where it cannot run."""

from __future__ import annotations

import pytest
from nautobot_server import Nautobot, missing, running_nautobot


@pytest.fixture(scope="session")
def nautobot() -> Nautobot:
    why = missing()
    if why:
        pytest.skip("no Nautobot here: " + ", ".join(why))
    with running_nautobot() as server:
        yield server
