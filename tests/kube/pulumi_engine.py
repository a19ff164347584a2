"""A stack of the real Pulumi engine (the one `up`/`destroy` drive) holding only a KubeGpuLayer, on a file backend
of the test's own: an inline program, so no declaration, lab or provisioning is involved."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest


def engine_stack(state: Path, server: str, planned: Mapping[str, Any], kubeconfig: str) -> Any:
    from pulumi import automation as auto

    from clusterforge.pulumi import engine
    from clusterforge.pulumi.automation import Backend

    try:
        found = engine.find()
    except engine.EngineMissing as exc:
        pytest.skip(f"the Pulumi engine is absent ({exc}); scripts/setup-pulumi.sh builds it")
    (state / "pulumi").mkdir(parents=True, exist_ok=True)
    backend = Backend.resolve(state, f"file://{state / 'pulumi'}")

    def program() -> None:
        from clusterforge.pulumi.providers.kube_gpu_layer import KubeGpuLayer, KubeGpuLayerArgs

        KubeGpuLayer("gpu-layer", KubeGpuLayerArgs("loopback", server, planned), kubeconfig)

    options = auto.LocalWorkspaceOptions(
        pulumi_home=str(state / "pulumi-home"), env_vars=backend.env(found.bin_dir), secrets_provider="passphrase",
        pulumi_command=auto.PulumiCommand(root=str(found.root)))
    return auto.create_or_select_stack("teardown", project_name="cf-kube-teardown", program=program, opts=options)
