"""The Pulumi SDK's end-of-program wait for outputs, made linear in the number of outputs.

After the program returns, the Python SDK (3.260, pulumi/runtime/stack.py ``wait_for_rpcs``) waits for
every pending ``Output`` with ``asyncio.wait(pending, FIRST_COMPLETED)`` in a loop: each pass hangs a
callback on every pending output, returns once one of them resolves and puts the rest back. Outputs
resolve one engine reply at a time, so a program with N outputs makes ~N passes over ~N outputs. A
64-SU cluster has ~10,600 resources and several outputs each: the passes were ~78 % of the program's
GIL-held samples in a preview (py-spy --gil), and the program's CPU grew with the square of the size.

``linear_output_wait()`` keeps the SDK's own function for the RPC drain and its error handling (called
with ``await_all_outstanding_tasks=False``) and replaces only the output drain: one ``asyncio.wait`` per
batch with FIRST_EXCEPTION, which returns early on the first failure exactly as often as the SDK's loop
re-raises one, else once the whole batch resolved. Outputs created meanwhile are picked up by the next
batch; a registration that failed (``ResourceRegistrationFailed``) is skipped as the SDK skips it. What
the program registers, and so the engine's steps and the diff, are unchanged.
``CLUSTERFORGE_PULUMI_SDK_WAIT=1`` keeps the SDK's own loop (benchmarks/pulumi_preview.py --sdk-wait-too).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pulumi.runtime.stack as sdk_stack
from pulumi.runtime.settings import SETTINGS, _get_rpc_manager

__all__ = ["KEEP_ENV", "drain_outputs", "linear_output_wait"]

KEEP_ENV = "CLUSTERFORGE_PULUMI_SDK_WAIT"

_ORIGINAL: Callable[..., Awaitable[None]] = sdk_stack.wait_for_rpcs


async def drain_outputs() -> None:
    """Wait until no tracked output is pending; re-raise the first failure other than a failed registration."""
    while True:
        with SETTINGS.lock:
            if not SETTINGS.outputs:
                return
            pending: list[asyncio.Task[Any]] = list(SETTINGS.outputs)
            SETTINGS.outputs.clear()
        done, not_done = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            with contextlib.suppress(sdk_stack.ResourceRegistrationFailed):  # the engine reports it; the SDK
                await task  # lets the program finish too
        if not_done:
            with SETTINGS.lock:
                SETTINGS.outputs.update(not_done)


async def _wait_for_rpcs(await_all_outstanding_tasks: bool = True) -> None:
    while True:
        await _ORIGINAL(await_all_outstanding_tasks=False)  # every RPC, and the SDK's checks of their errors
        if not await_all_outstanding_tasks:
            return
        await drain_outputs()
        if not _get_rpc_manager().rpcs:  # resolving outputs queued no further RPC
            return


def linear_output_wait(environ: Mapping[str, str] = os.environ) -> bool:
    """Install the linear wait for this program (True), or keep the SDK's when KEEP_ENV is 1 (False).
    run_pulumi_func looks ``wait_for_rpcs`` up in its module when the program returns, so this reaches it."""
    if environ.get(KEEP_ENV) == "1":
        return False
    sdk_stack.wait_for_rpcs = _wait_for_rpcs
    return True
