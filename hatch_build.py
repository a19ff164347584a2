"""Wheel build hook: ship templates/, roles/, playbooks/ and stacks/cluster/ inside the package.

They stay at the top of the repository, where they are edited; a regular wheel carries a copy
under ``clusterforge/_data/``, where ``clusterforge.paths`` looks when there is no checkout. An
editable install gets no copy: it runs from the checkout and reads the originals.
"""

from __future__ import annotations

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

DATA = {
    "templates": "clusterforge/_data/templates",
    "roles": "clusterforge/_data/roles",
    "playbooks": "clusterforge/_data/playbooks",
    "stacks/cluster": "clusterforge/_data/stacks/cluster",
}


class PackageDataHook(BuildHookInterface):
    PLUGIN_NAME = "clusterforge-data"

    def initialize(self, version: str, build_data: dict) -> None:
        if version == "standard":
            build_data["force_include"].update(DATA)
