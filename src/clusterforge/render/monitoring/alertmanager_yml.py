"""alertmanager.yml: alerts grouped by alert name and host, critical ones repeated more often.

The one receiver has no integration of its own: the monitoring role adds webhook URLs
(``monitoring_alertmanager_webhook_urls``), so a site's paging endpoint never passes through the Plan.
"""

from __future__ import annotations

from typing import Any

from clusterforge.render.monitoring.rules import CRITICAL

__all__ = ["alertmanager_config", "RECEIVER"]

RECEIVER = "operators"


def alertmanager_config() -> dict[str, Any]:
    return {
        "route": {
            "receiver": RECEIVER, "group_by": ["alertname", "host"], "group_wait": "30s",
            "group_interval": "5m", "repeat_interval": "4h",
            "routes": [{"matchers": [f'severity="{CRITICAL}"'], "receiver": RECEIVER, "repeat_interval": "1h"}],
        },
        # a critical alert on a host silences its warnings of the same name family (temperature, Xid)
        "inhibit_rules": [{"source_matchers": [f'severity="{CRITICAL}"'], "target_matchers": ['severity="warning"'],
                           "equal": ["host", "gpu"]}],
        "receivers": [{"name": RECEIVER}],
    }
