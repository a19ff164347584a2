"""A real Kubernetes control plane on loopback, from the k8s build cache (scripts/setup-k8s.sh): etcd, the
kube-apiserver (TLS, client certificates of clusterforge's own PKI, RBAC, no anonymous access) and the
kube-controller-manager running only the namespace controller (it finishes namespace deletion, which the API
server alone never does). No lab, no kubelet: the tests create the Node objects they need."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

START_TIMEOUT_S = 90.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LoopbackApi:
    server: str  # https://127.0.0.1:PORT
    kubeconfig: dict[str, Any]  # the admin's, as clusterforge.pulumi.kube.kubeconfig writes it (server moved)
    kubeconfig_path: Path
    bin_dir: Path
    bundle: dict[str, str]
    procs: list[subprocess.Popen]

    def stop(self) -> None:
        for proc in reversed(self.procs):  # only the processes this fixture started, by their handles
            if proc.poll() is None:
                proc.terminate()
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def _kubeconfig(cluster: str, server: str, bundle: dict[str, str], client: str) -> dict[str, Any]:
    from clusterforge.pulumi.kube.kubeconfig import admin_kubeconfig

    config = yaml.safe_load(admin_kubeconfig(cluster, server, {**bundle, "admin.crt": bundle[f"{client}.crt"],
                                                                "admin.key": bundle[f"{client}.key"]}))
    return config


def _write(path: Path, text: str) -> Path:
    path.touch(mode=0o600)
    path.write_text(text)
    return path


def _ready(server: str, config: dict[str, Any], procs: list[subprocess.Popen], logs: Path) -> None:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    from clusterforge.pulumi.kube.teardown import api_client

    deadline = time.monotonic() + START_TIMEOUT_S
    api = api_client(config)
    why = "no answer"
    while time.monotonic() < deadline:
        dead = [p.args[0] for p in procs if p.poll() is not None]
        if dead:
            raise RuntimeError(f"{dead} exited; logs in {logs}")
        try:
            client.CoreV1Api(api).list_namespace(_request_timeout=(2, 5))
            return
        except ApiException as exc:
            why = f"HTTP {exc.status}"
        except Exception as exc:  # noqa: BLE001 - not yet listening
            why = type(exc).__name__
        time.sleep(0.5)
    raise RuntimeError(f"the API server {server} was not ready in {START_TIMEOUT_S} s ({why}); logs in {logs}")


def start(bin_dir: Path, work: Path, cluster: str = "loopback") -> LoopbackApi:
    """etcd + kube-apiserver + kube-controller-manager (namespace controller) on 127.0.0.1, state under `work`."""
    from netaddr import IPNetwork

    from clusterforge.model.kubernetes import DEFAULT_SERVICE_CIDR as SERVICE_CIDR
    from clusterforge.pulumi.kube.pki import make_bundle

    SERVICE_IP = str(IPNetwork(SERVICE_CIDR)[1])

    bundle = make_bundle(cluster, [], SERVICE_IP)
    pki = work / "pki"
    pki.mkdir(mode=0o700)
    for name, text in bundle.items():
        _write(pki / name, text)
    logs = work / "logs"
    logs.mkdir()
    etcd_client, etcd_peer, api_port = free_port(), free_port(), free_port()
    server = f"https://127.0.0.1:{api_port}"
    admin = _kubeconfig(cluster, server, bundle, "admin")
    admin_path = _write(work / "admin.conf", yaml.safe_dump(admin))
    kcm_path = _write(work / "controller-manager.conf",
                      yaml.safe_dump(_kubeconfig(cluster, server, bundle, "controller-manager")))
    commands = {
        "etcd": [str(bin_dir / "etcd"), "--name", "default", "--data-dir", str(work / "etcd"),
                 "--listen-client-urls", f"http://127.0.0.1:{etcd_client}",
                 "--advertise-client-urls", f"http://127.0.0.1:{etcd_client}",
                 "--listen-peer-urls", f"http://127.0.0.1:{etcd_peer}",
                 "--initial-advertise-peer-urls", f"http://127.0.0.1:{etcd_peer}",
                 "--initial-cluster", f"default=http://127.0.0.1:{etcd_peer}"],
        "kube-apiserver": [str(bin_dir / "kube-apiserver"), "--advertise-address=127.0.0.1",
                           "--bind-address=127.0.0.1", f"--secure-port={api_port}", "--anonymous-auth=false",
                           "--authorization-mode=Node,RBAC", f"--client-ca-file={pki / 'ca.crt'}",
                           f"--tls-cert-file={pki / 'apiserver.crt'}",
                           f"--tls-private-key-file={pki / 'apiserver.key'}",
                           f"--etcd-servers=http://127.0.0.1:{etcd_client}", f"--cert-dir={work / 'certs'}",
                           "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                           f"--service-account-key-file={pki / 'sa.pub'}",
                           f"--service-account-signing-key-file={pki / 'sa.key'}",
                           f"--service-cluster-ip-range={SERVICE_CIDR}", "--profiling=false"],
        "kube-controller-manager": [str(bin_dir / "kube-controller-manager"), f"--kubeconfig={kcm_path}",
                                    "--controllers=namespace-controller", "--leader-elect=false",
                                    # each controller as its own service account (the role's setting): RBAC's
                                    # system:controller:namespace-controller may empty a namespace
                                    "--use-service-account-credentials=true",
                                    "--secure-port=0", "--profiling=false"],
    }
    procs: list[subprocess.Popen] = []
    try:
        for name, argv in commands.items():
            with open(logs / f"{name}.log", "wb") as log:
                procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                              env={**os.environ}))
            if name == "etcd":
                time.sleep(0.5)
            if name == "kube-apiserver":
                _ready(server, admin, procs, logs)
    except BaseException:
        LoopbackApi(server, admin, admin_path, bin_dir, bundle, procs).stop()
        raise
    return LoopbackApi(server, admin, admin_path, bin_dir, bundle, procs)
