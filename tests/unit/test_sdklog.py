"""The Pulumi SDK's debug messages are dropped in the stack's program unless CLUSTERFORGE_PULUMI_SDK_DEBUG=1."""

from __future__ import annotations

import pulumi.log
import pulumi.runtime.resource as sdk_resource

from clusterforge.pulumi import sdklog


def test_debug_is_dropped_where_the_sdk_calls_it(monkeypatch):
    monkeypatch.setattr(pulumi.log, "debug", pulumi.log.debug)  # restored after the test
    assert sdklog.quiet_sdk_debug({}) is True
    assert sdk_resource.log.debug is sdklog._dropped  # the SDK's own modules reach the module attribute
    assert sdk_resource.log.debug("Registering resource: t=x, name=y") is None


def test_kept_when_asked(monkeypatch):
    original = pulumi.log.debug
    monkeypatch.setattr(pulumi.log, "debug", original)
    assert sdklog.quiet_sdk_debug({sdklog.KEEP_ENV: "1"}) is False
    assert pulumi.log.debug is original
