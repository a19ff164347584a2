"""`destroy` through the real Pulumi engine: a stack holding only the KubeGpuLayer, against the loopback API server.

First the recorded server does not answer (a port nothing listens on): destroy fails, its error one line naming
the server, and the resource stays in the state. Then a plain TCP relay on that port reaches the loopback API
server (its certificate names 127.0.0.1), and the next destroy carries on: the role's layer is gone."""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.pulumi]

kubernetes = pytest.importorskip("kubernetes")
from kubernetes.client import AppsV1Api  # noqa: E402
from layer_helpers import apply_layer, ensure_nodes, gone, lab_kube_vars  # noqa: E402
from loopback_api import free_port  # noqa: E402

from clusterforge.pulumi.kube.gpu_layer import planned_layer, role_defaults  # noqa: E402
from clusterforge.pulumi.kube.teardown import api_client  # noqa: E402


class Relay:
    """127.0.0.1:port -> target port, byte for byte (started on demand, stopped by the test)."""

    def __init__(self, port: int, target: int) -> None:
        self.port, self.target, self.stopped = port, target, threading.Event()
        self.listener = socket.create_server(("127.0.0.1", port))
        self.listener.settimeout(0.2)
        threading.Thread(target=self._serve, daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._pipe, args=(conn, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, conn), daemon=True).start()

    def stop(self) -> None:
        self.stopped.set()
        self.listener.close()


def test_a_failed_destroy_leaves_the_record_and_the_next_one_removes_the_layer(loopback_api, tmp_path: Path):
    from pulumi_engine import engine_stack

    kube_vars = lab_kube_vars()
    layer = planned_layer(kube_vars, role_defaults())
    port = free_port()
    server = f"https://127.0.0.1:{port}"
    config = yaml.safe_load(yaml.safe_dump(loopback_api.kubeconfig))
    config["clusters"][0]["cluster"]["server"] = server
    stack = engine_stack(tmp_path / "state", server, layer.to_dict(), yaml.safe_dump(config))  # or skip
    api = api_client(loopback_api.kubeconfig)
    ensure_nodes(api, kube_vars)
    (tmp_path / "apply").mkdir()
    apply_layer(loopback_api, tmp_path / "apply", kube_vars)  # again: the other test module may have removed it
    stack.up(color="never")
    failed_output: list[str] = []
    with pytest.raises(Exception) as failed:  # noqa: PT011 - the Automation API's CommandError
        stack.destroy(color="never", on_output=failed_output.append)
    # what `clusterforge destroy` shows of it (cli/apply.py folds a provider's traceback into its sentence)
    from clusterforge.ops.engine_text import fold_tracebacks

    shown = [line for line in fold_tracebacks(str(failed.value).splitlines()) if "cannot be reached" in line]
    assert len(shown) == 1 and f"the API server {server} cannot be reached" in shown[0], failed.value
    assert "File \"" not in "\n".join(fold_tracebacks(str(failed.value).splitlines()))
    assert [r for r in stack.export_stack().deployment.get("resources", []) if r["type"].endswith("KubeGpuLayer")]
    AppsV1Api(api).read_namespaced_daemon_set(layer.daemonset, layer.namespace)  # nothing was removed
    relay = Relay(port, int(loopback_api.server.rsplit(":", 1)[1]))
    try:
        output: list[str] = []
        stack.destroy(color="never", on_output=output.append)
    finally:
        relay.stop()
    shown = "\n".join(output)
    assert f"kubernetes {server}: deleted DaemonSet {layer.namespace}/{layer.daemonset}" in shown, shown
    assert gone(AppsV1Api(api).read_namespaced_daemon_set, layer.daemonset, layer.namespace)
    assert not [r for r in stack.export_stack().deployment.get("resources", []) if r["type"].endswith("KubeGpuLayer")]
    stack.workspace.remove_stack(stack.name)
