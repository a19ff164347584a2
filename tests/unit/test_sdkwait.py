"""The stack program's end-of-run wait for outputs: every output awaited, failures as the SDK reports them, and
one asyncio.wait per batch (the SDK's own loop makes one per resolved output, quadratic in their number)."""

from __future__ import annotations

import asyncio

import pulumi.runtime.stack as sdk_stack
import pytest
from pulumi.runtime.settings import SETTINGS

from clusterforge.pulumi import sdkwait


@pytest.fixture
def tracked(monkeypatch):
    """SETTINGS.outputs emptied for the test and restored after; the calls to asyncio.wait counted."""
    saved = set(SETTINGS.outputs)
    SETTINGS.outputs.clear()
    calls = []
    real_wait = asyncio.wait

    async def counting_wait(*args, **kwargs):
        calls.append(len(args[0]))
        return await real_wait(*args, **kwargs)

    monkeypatch.setattr(sdkwait.asyncio, "wait", counting_wait)
    yield calls
    SETTINGS.outputs.clear()
    SETTINGS.outputs.update(saved)


def _run(main) -> None:
    """Run on a loop of its own: asyncio.run would leave the thread without a current loop, which the
    Pulumi mocks of other tests ask for."""
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(main())
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.sleep(0))
        loop.close()


def _track(coro) -> asyncio.Task:
    task = asyncio.ensure_future(coro)
    SETTINGS.outputs.add(task)
    return task


def test_every_output_resolves_in_one_wait_per_batch(tracked) -> None:
    done: list[int] = []

    async def resolve(i: int, before: asyncio.Task | None) -> None:
        if before is not None:  # one after another, as engine replies arrive
            await before
        await asyncio.sleep(0)
        done.append(i)
        if i == 5:  # an output created while the first batch is pending
            _track(resolve(10_000, None))

    async def main() -> None:
        before = None
        for i in range(2_000):
            before = _track(resolve(i, before))
        await sdkwait.drain_outputs()

    _run(main)
    assert sorted(done) == [*range(2_000), 10_000]
    assert tracked == [2_000, 1]  # the SDK's loop: ~2,000 waits over up to 2,000 outputs each


def test_a_failed_output_is_raised(tracked) -> None:
    async def fail() -> None:
        raise ValueError("bad input")

    async def main() -> None:
        _track(asyncio.sleep(3600))  # never resolves: the failure must not wait for it
        _track(fail())
        await sdkwait.drain_outputs()

    with pytest.raises(ValueError, match="bad input"):
        _run(main)


def test_a_failed_registration_is_left_to_the_engine(tracked) -> None:
    async def failed() -> None:
        raise sdk_stack.ResourceRegistrationFailed()

    async def main() -> None:
        _track(failed())
        _track(asyncio.sleep(0))
        await sdkwait.drain_outputs()

    _run(main)
    assert not SETTINGS.outputs


def test_installed_where_the_sdk_looks_it_up_unless_kept(monkeypatch) -> None:
    monkeypatch.setattr(sdk_stack, "wait_for_rpcs", sdkwait._ORIGINAL)  # restored after the test
    assert sdkwait.linear_output_wait({sdkwait.KEEP_ENV: "1"}) is False
    assert sdk_stack.wait_for_rpcs is sdkwait._ORIGINAL
    assert sdkwait.linear_output_wait({}) is True
    assert sdk_stack.wait_for_rpcs is sdkwait._wait_for_rpcs
