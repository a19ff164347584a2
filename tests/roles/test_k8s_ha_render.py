"""What k8s_control_plane writes for a highly available control plane, rendered by Ansible itself (the role's
defaults, vars and templates evaluated on this machine, nothing run): with the plan's virtual address every
kubeconfig names it, HAProxy passes port 8443 to the three API servers, keepalived holds the address on the
interface of the node's own address with unicast adverts to the two other members, each API server lists every
etcd member (its own first), and the certificates' SANs take the address. With one control node nothing of
that is written and the kubeconfigs keep the local API server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "k8s_control_plane"
MEMBERS = [{"name": "ctl-01", "ip": "198.18.8.76"}, {"name": "ctl-02", "ip": "198.18.8.77"},
           {"name": "ctl-03", "ip": "198.18.8.78"}]
USERS = ("admin", "controller-manager", "scheduler", "kwok")
PKI_FILES = ("ca", "apiserver", "etcd-server", "apiserver-etcd-client", "apiserver-kubelet-client", *USERS)


def _render(tmp_path: Path, host: str, members: list[dict[str, str]], ha: dict[str, object]) -> dict[str, object]:
    """The role's config and secret files (path -> text) as this host would get them."""
    (tmp_path / "templates").symlink_to(ROLE / "templates")
    pki = {f"{name}.{ext}": f"{name} {ext}" for name in PKI_FILES for ext in ("crt", "key")} | {
        "ca.crt": "CA", "sa.key": "SA", "sa.pub": "SA PUB"}
    ip = next(m["ip"] for m in members if m["name"] == host)
    playbook = tmp_path / "play.yml"
    link = {"stdout": f"2: mgmt0    inet {ip}/26 brd 198.18.8.127 scope global"}  # `ip -o -4 addr show to`'s
    # extra vars: above the role's defaults and vars, which the play reads as vars_files
    (tmp_path / "vars.json").write_text(json.dumps({
        "k8s_control_plane_pki": pki, "k8s_control_plane_etcd_members": members,
        "k8s_control_plane_advertise_address": ip, "k8s_control_plane_service_cidr": "198.18.48.0/24",
        "k8s_control_plane_cluster_name": "lab", "k8s_control_plane_address_link": link, **ha}))
    playbook.write_text(json.dumps([{
        "hosts": "all", "gather_facts": False,
        "vars_files": [str(ROLE / "defaults" / "main.yml"), str(ROLE / "vars" / "main.yml")],
        "tasks": [{"ansible.builtin.copy": {"dest": str(tmp_path / "out.json"), "content":
                   "{{ {'config': k8s_control_plane_config_files, 'secret': k8s_control_plane_secret_files,"
                   " 'services': k8s_control_plane_services, 'paths': k8s_control_plane_path_services,"
                   " 'directories': k8s_control_plane_directories} | to_json }}"}}]}]))
    env = {**os.environ, "ANSIBLE_LOCALHOST_WARNING": "False", "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_HOME": str(tmp_path / "ah")}
    out = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", f"{host},", "-c", "local",
                          "-e", f"ansible_python_interpreter={sys.executable}", "-e", f"@{tmp_path / 'vars.json'}",
                          str(playbook)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    return json.loads((tmp_path / "out.json").read_text())


HA = {"k8s_control_plane_api_vip": "198.18.8.79", "k8s_control_plane_api_vip_prefixlen": 26,
      "k8s_control_plane_server": "https://198.18.8.79:8443"}


def test_three_control_nodes_behind_one_address(tmp_path: Path):
    got = _render(tmp_path, "ctl-02", MEMBERS, HA)
    config, secret = got["config"], got["secret"]
    for name in ("admin", "controller-manager", "scheduler"):
        kubeconfig = yaml.safe_load(secret[f"/etc/kubernetes/{name}.conf"])
        assert kubeconfig["clusters"][0]["cluster"]["server"] == "https://198.18.8.79:8443"
    haproxy = config["/etc/haproxy/haproxy.cfg"]
    assert "bind :8443" in haproxy
    assert [ln.split() for ln in haproxy.splitlines() if ln.strip().startswith("server ")] == [
        ["server", m["name"], f"{m['ip']}:6443"] for m in MEMBERS]
    keepalived = config["/etc/keepalived/keepalived.conf"]
    assert "virtual_router_id 251" in keepalived and "interface mgmt0" in keepalived
    assert "198.18.8.79/26 dev mgmt0" in keepalived and "unicast_src_ip 198.18.8.77" in keepalived
    peers = keepalived.split("unicast_peer {")[1].split("}")[0].split()
    assert peers == ["198.18.8.76", "198.18.8.78"]
    assert "priority 149" in keepalived  # the second member: one below the first
    assert "auth_pass" not in keepalived  # no clear-text VRRP password
    apiserver = config["/etc/systemd/system/kube-apiserver.service"]
    assert ("--etcd-servers=https://198.18.8.77:2379,https://198.18.8.76:2379,https://198.18.8.78:2379"
            in apiserver)
    etcd = config["/etc/systemd/system/etcd.service"]
    assert "--initial-cluster=ctl-01=https://198.18.8.76:2380,ctl-02=https://198.18.8.77:2380," \
           "ctl-03=https://198.18.8.78:2380" in etcd
    assert "--leader-elect=true" in config["/etc/systemd/system/kube-scheduler.service"]
    assert got["services"][-2:] == ["haproxy", "keepalived"]
    assert got["paths"]["/etc/haproxy/haproxy.cfg"] == ["haproxy"]
    assert got["paths"]["/etc/keepalived/keepalived.conf"] == ["keepalived"]


def test_one_control_node_keeps_the_local_api_server(tmp_path: Path):
    got = _render(tmp_path, "ctl-01", MEMBERS[:1], {})
    config, secret = got["config"], got["secret"]
    assert not any("haproxy" in p or "keepalived" in p for p in config)
    assert got["services"] == ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"]
    assert "/etc/keepalived" not in [d["path"] for d in got["directories"]]
    kubeconfig = yaml.safe_load(secret["/etc/kubernetes/admin.conf"])
    assert kubeconfig["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:6443"
    assert "--etcd-servers=https://127.0.0.1:2379 " in config["/etc/systemd/system/kube-apiserver.service"]
