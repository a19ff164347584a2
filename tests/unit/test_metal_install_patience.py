"""A BMC call during an install is asked again while the BMC does not answer, and only then: a busy BMC
(sushy-tools on a loaded machine did not answer within 5 s once, after a 13-minute image write) must not end
an install, a BMC that refuses (credentials, a rejected request) or stays silent must."""

from __future__ import annotations

import pytest

from clusterforge.baremetal import install as metal_install
from clusterforge.baremetal.types import BmcError


def flaky(answers: list[object]):
    calls = []

    def call():
        calls.append(1)
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    return call, calls


def silent() -> BmcError:
    return BmcError("su01-r01-gpu01", "https://198.19.46.16", "unreachable", "no answer within 5 s")


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch):
    monkeypatch.setattr(metal_install.time, "sleep", lambda s: None)


def test_a_busy_bmc_is_asked_again():
    call, calls = flaky([silent(), silent(), "Off"])
    assert metal_install._patient(call) == "Off" and len(calls) == 3


def test_a_refusal_is_not_asked_again():
    call, calls = flaky([BmcError("su01-r01-gpu01", "https://198.19.46.16", "credentials", "HTTP 401"), "Off"])
    with pytest.raises(BmcError, match="refused the credentials"):
        metal_install._patient(call)
    assert len(calls) == 1


def test_a_bmc_silent_past_the_budget_ends_the_install():
    call, calls = flaky([silent()] * 50)
    with pytest.raises(BmcError, match="does not answer"):
        metal_install._patient(call, budget_s=-1.0)
    assert len(calls) == 1  # the budget is spent: the one-line error, no second try
