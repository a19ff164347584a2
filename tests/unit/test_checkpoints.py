"""When `up` saves the state (clusterforge.pulumi.checkpoints.choose): a pure function of the stack's settings."""

from __future__ import annotations

import pytest

from clusterforge.pulumi.checkpoints import choose


@pytest.mark.parametrize(("config", "mode"), [
    ({"target": "files", "provision": "false"}, "end"),
    ({"target": "ssh", "provision": "false", "verify": "true"}, "end"),
    ({"target": "files", "provision": "off"}, "end"),
    ({"target": "files"}, "step"),  # provision defaults to true: keys and certificates are handed out
    ({}, "step"),
    ({"target": "files", "provision": "true"}, "step"),
    ({"target": "lab", "provision": "false"}, "step"),  # the lab's containers and VMs
    ({"target": "LAB", "provision": "false"}, "step"),
])
def test_auto_saves_once_only_where_a_repeated_create_converges(config: dict[str, str], mode: str) -> None:
    chosen = choose("auto", config)
    assert chosen.mode == mode
    assert chosen.why.startswith("auto: ")
    assert ("once, when the engine closes the run" in chosen.line) == (mode == "end")


@pytest.mark.parametrize("requested", ["step", "end"])
def test_an_explicit_mode_wins_over_the_settings(requested: str) -> None:
    for config in ({"target": "lab"}, {"target": "files", "provision": "false"}):
        assert choose(requested, config).mode == requested


def test_an_unknown_mode_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="expected one of auto, step, end"):
        choose("sometimes", {})
