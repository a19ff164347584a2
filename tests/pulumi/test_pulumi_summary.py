"""ChangeSummary: engine step events folded into one entry per resource and operation (no engine)."""

from __future__ import annotations

from types import SimpleNamespace

from clusterforge.pulumi.automation import ChangeSummary

PREFIX = "urn:pulumi:s::clusterforge-cluster::"


def _event(op: str, name: str, rtype: str = "clusterforge:fabric:Switch") -> SimpleNamespace:
    meta = SimpleNamespace(op=SimpleNamespace(value=op), urn=f"{PREFIX}{rtype}::{name}", type=rtype)
    return SimpleNamespace(resource_pre_event=SimpleNamespace(metadata=meta))


def _summary(*events: SimpleNamespace) -> ChangeSummary:
    summary = ChangeSummary()
    for event in events:
        summary.on_event(event)
    summary.on_event(SimpleNamespace(resource_pre_event=None))  # other event kinds are ignored
    return summary


def test_a_replacement_counts_once_as_replace() -> None:
    summary = _summary(_event("create-replacement", "a"), _event("replace", "a"), _event("delete-replaced", "a"))
    assert summary.to_json() == {"create": [], "update": [], "replace": [f"{PREFIX}clusterforge:fabric:Switch::a"],
                                 "delete": [], "same": 0}


def test_json_lists_urns_per_operation_and_counts_same() -> None:
    summary = _summary(_event("create", "b"), _event("update", "c"), _event("delete", "d"), _event("same", "e"),
                       _event("same", "f"))
    result = summary.to_json()
    assert [len(result[op]) for op in ("create", "update", "replace", "delete")] == [1, 1, 0, 1]
    assert result["same"] == 2
    assert summary.changes == 3


def test_per_type_counts() -> None:
    summary = _summary(_event("create", "r1", "clusterforge:facility:Rack"), _event("create", "s1"),
                       _event("same", "s2"))
    assert summary.per_type() == {"clusterforge:fabric:Switch": {"create": 1, "same": 1},
                                  "clusterforge:facility:Rack": {"create": 1}}
