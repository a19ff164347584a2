"""The Pulumi SDK's own debug messages, dropped in the stack's program unless asked for.

The Python SDK sends the engine debug messages for every resource it prepares and registers
(pulumi/runtime/resource.py, rpc.py: ``log.debug(...)``, several per resource), each one a synchronous
gRPC call (``engine.Log``) that the engine then discards unless it runs with ``--debug`` or ``-v``,
which clusterforge never passes. In a 64-SU preview (10,699 resources) they were 23 % of the program's
samples. The per-resource diff the engine shows is not made of these messages and is unchanged.
``CLUSTERFORGE_PULUMI_SDK_DEBUG=1`` keeps them (for `pulumi preview --debug` in the stack's work dir).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pulumi.log

__all__ = ["KEEP_ENV", "quiet_sdk_debug"]

KEEP_ENV = "CLUSTERFORGE_PULUMI_SDK_DEBUG"


def _dropped(msg: str, resource: Any = None, stream_id: int | None = None, ephemeral: bool | None = None) -> None:
    """pulumi.log.debug's signature; sends nothing."""


def quiet_sdk_debug(environ: Mapping[str, str] = os.environ) -> bool:
    """Drop the SDK's debug messages (True), or keep them when KEEP_ENV is 1 (False)."""
    if environ.get(KEEP_ENV) == "1":
        return False
    pulumi.log.debug = _dropped  # the SDK's modules call log.debug through the module: this reaches them all
    return True
