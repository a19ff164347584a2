"""Monitoring: where Prometheus and Alertmanager run, how often they scrape, how long they keep samples."""

from pydantic import Field

from clusterforge.model.base import Declared
from clusterforge.model.grammar import Name
from clusterforge.model.numbers import Integer

__all__ = ["Monitoring"]


class Monitoring(Declared):
    # the control node that runs Prometheus and Alertmanager (plan/monitoring.py checks it is one);
    # unset: the first control node
    host: Name | None = None
    scrape_interval_s: Integer = Field(default=30, ge=5, le=300)
    # 15 days is Prometheus's own default (--storage.tsdb.retention.time)
    retention_days: Integer = Field(default=15, ge=1, le=3650)
