"""Firing alerts read from the Alertmanager the declaration plans (plan.monitoring), or from another one.

Where: the planned Alertmanager listens on its monitoring host's management address
(``http://ADDRESS:ALERTMANAGER_PORT``, clusterforge.plan.monitoring); `planned_url` says so, pure. An operator
may name another (`--alertmanager URL`, `alertmanager_url` checks it) or read none (`--alertmanager none`).

How: one GET of Alertmanager's ``/api/v2/alerts`` (the same JSON list `--alerts FILE` reads offline), with a
bounded timeout and never through a proxy (the management network is reached directly; an ``http_proxy`` in the
operator's environment must not see the cluster's alerts). A failure to read them (no answer, an HTTP error, a
body that is not the alert list) is `AlertsUnavailable`, which health turns into ``unknown`` evidence on every
node it judges: an Alertmanager that cannot be read never passes for one with nothing firing.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from clusterforge.plan import Plan

__all__ = ["ALERTS_PATH", "TIMEOUT_S", "AlertsUnavailable", "alertmanager_url", "fetch_alerts", "planned_url"]

ALERTS_PATH = "/api/v2/alerts"
TIMEOUT_S = 10.0
_MAX_BYTES = 32 * 1024 * 1024  # a fleet's firing alerts fit in far less; a body past this is not read whole


class AlertsUnavailable(Exception):
    """The firing alerts could not be read; the message says from where and why."""


def planned_url(plan: Plan) -> str | None:
    """The declaration's Alertmanager (its monitoring host's management address), None without monitoring."""
    monitoring = plan.monitoring
    if monitoring is None:
        return None
    host = f"[{monitoring.address}]" if ":" in monitoring.address else monitoring.address
    return f"http://{host}:{monitoring.alertmanager_port}"


def alertmanager_url(text: str) -> str:
    """An operator's `--alertmanager` value as the base URL health reads (no trailing slash). Raises ValueError
    naming what is wrong: not http or https, no host, credentials, a query or a fragment."""
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in text):
        raise ValueError("a space or control character in the URL")
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"{text[:200]!r}: expected http://HOST:PORT or https://HOST:PORT")
    if not parts.hostname:
        raise ValueError(f"{text[:200]!r}: no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("credentials in the URL are refused (they would show in process lists and unit files)")
    if parts.query or parts.fragment:
        raise ValueError(f"{text[:200]!r}: a query or fragment has no place in Alertmanager's base URL")
    try:
        parts.port  # noqa: B018 -- raises on a port out of range
    except ValueError as exc:
        raise ValueError(f"{text[:200]!r}: {exc}") from None
    return text.rstrip("/")


def fetch_alerts(base: str, timeout_s: float = TIMEOUT_S) -> list[Any]:
    """Alertmanager's alert list at `base` (GET /api/v2/alerts). Raises AlertsUnavailable."""
    url = base + ALERTS_PATH
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy, whatever the environment
    try:
        with opener.open(request, timeout=timeout_s) as response:
            body = response.read(_MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise AlertsUnavailable(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise AlertsUnavailable(f"{url}: {exc.reason}") from None
    except (OSError, ValueError) as exc:  # a timeout while reading, a reset, a malformed response line
        raise AlertsUnavailable(f"{url}: {exc or type(exc).__name__}") from None
    if len(body) > _MAX_BYTES:
        raise AlertsUnavailable(f"{url}: the answer is over {_MAX_BYTES // 2**20} MiB")
    try:
        alerts = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AlertsUnavailable(f"{url}: not JSON: {exc}") from None
    if not isinstance(alerts, list):
        raise AlertsUnavailable(f"{url}: expected the JSON list of alerts, got {type(alerts).__name__}")
    return alerts
