"""Waiting in tests: one poll loop for every module that waits on a lab, an engine or a process."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["until"]


def until(what: str, test: Callable[[], Any], timeout_s: float, step_s: float = 0.5) -> Any:
    """``test()``'s first truthy value, asked every ``step_s`` seconds; AssertionError naming ``what`` once
    ``timeout_s`` has passed (``test`` is asked once more at the deadline)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = test()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s:.0f} s")
        time.sleep(step_s)
