"""Source of truth: the Plan pushed into Nautobot (idempotently) and as-built facts pulled back."""

from clusterforge.sot.client import NautobotClient, SotError

__all__ = ["NautobotClient", "SotError"]
