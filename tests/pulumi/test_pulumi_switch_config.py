"""SwitchConfigProvider without the engine: file target writes, updates, deletes; ssh target against a real sshd.

No NOS runs here: the ssh tests put stand-ins for the NOS commands (sonic-cfggen, config, docker, nv,
FastCli, sudo) first on the sshd session's PATH. They log each call, so the tests check which
commands the push runs on the switch, in which order, and that a failing NOS step fails the push.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from clusterforge.pulumi._hashing import files_hash
from clusterforge.pulumi.providers.switch_config import SwitchConfigProvider

FILES = {"config_db.json": '{"DEVICE_METADATA": {}}\n', "frr.conf": "hostname spine-01\n"}


def _props(target: dict, files: dict[str, str] = FILES, device: str = "spine-01", credential: str | None = None,
           nos: str | None = "sonic"):
    return {"device": device, "files": dict(files), "content_hash": files_hash(files), "target": target,
            "credential": credential, "nos": nos}


def test_create_writes_each_file_under_the_device_dir(tmp_path: Path) -> None:
    result = SwitchConfigProvider().create(_props({"kind": "file", "path": str(tmp_path)}))
    assert {p.name: p.read_text() for p in (tmp_path / "spine-01").iterdir()} == FILES
    assert result.outs["written"] == sorted(FILES)


def test_update_rewrites_changed_files_and_removes_dropped_ones(tmp_path: Path) -> None:
    provider, target = SwitchConfigProvider(), {"kind": "file", "path": str(tmp_path)}
    olds = provider.create(_props(target)).outs
    news = _props(target, {"frr.conf": "hostname spine-01\nrouter bgp 65000\n"})
    outs = provider.update("id", olds, news).outs
    assert {p.name: p.read_text() for p in (tmp_path / "spine-01").iterdir()} == news["files"]
    assert outs["written"] == ["frr.conf"]


def test_delete_removes_what_it_wrote_and_nothing_else(tmp_path: Path) -> None:
    provider, target = SwitchConfigProvider(), {"kind": "file", "path": str(tmp_path)}
    outs = provider.create(_props(target, {**FILES, "sub/dir/extra.conf": "x\n"})).outs
    (tmp_path / "spine-01" / "operator-notes.txt").write_text("keep me\n")
    provider.delete("id", outs)
    assert [p.name for p in (tmp_path / "spine-01").rglob("*")] == ["operator-notes.txt"]


def test_delete_prunes_the_device_dir_it_emptied(tmp_path: Path) -> None:
    provider, target = SwitchConfigProvider(), {"kind": "file", "path": str(tmp_path)}
    provider.delete("id", provider.create(_props(target, {**FILES, "sub/extra.conf": "x\n"})).outs)
    assert list(tmp_path.iterdir()) == []


def test_a_new_target_or_device_replaces(tmp_path: Path) -> None:
    olds = _props({"kind": "file", "path": str(tmp_path / "a")})
    moved = SwitchConfigProvider().diff("id", olds, _props({"kind": "file", "path": str(tmp_path / "b")}))
    renamed = SwitchConfigProvider().diff("id", olds, {**olds, "device": "spine-02"})
    assert (moved.replaces, renamed.replaces) == (["target"], ["device"])
    assert moved.delete_before_replace


def test_new_content_updates_in_place(tmp_path: Path) -> None:
    target = {"kind": "file", "path": str(tmp_path)}
    diff = SwitchConfigProvider().diff("id", _props(target), _props(target, {"frr.conf": "changed\n"}))
    assert diff.changes and diff.replaces == []


def test_same_inputs_are_no_change(tmp_path: Path) -> None:
    target = {"kind": "file", "path": str(tmp_path)}
    SwitchConfigProvider().create(_props(target))
    assert not SwitchConfigProvider().diff("id", _props(target), _props(target)).changes


def test_a_delivered_file_edited_or_removed_is_drift_and_update_repairs_it(tmp_path: Path, capfd) -> None:
    target = {"kind": "file", "path": str(tmp_path)}
    provider = SwitchConfigProvider()
    provider.create(_props(target))
    name = sorted(FILES)[0]
    (tmp_path / "spine-01" / name).write_text("hostname hand-edited\n")
    diff = provider.diff("id", _props(target), _props(target))
    assert diff.changes and diff.replaces == []
    said = capfd.readouterr().err
    assert f"drift: switch spine-01: {tmp_path / 'spine-01' / name} differs from the rendered config" in said
    provider.update("id", _props(target), _props(target))
    assert (tmp_path / "spine-01" / name).read_text() == FILES[name]
    (tmp_path / "spine-01" / name).unlink()
    assert provider.diff("id", _props(target), _props(target)).changes
    assert "is missing" in capfd.readouterr().err


@pytest.mark.parametrize("relpath", ["../escape.conf", "/etc/passwd", "a/../../b"])
def test_check_rejects_paths_outside_the_device_dir(tmp_path: Path, relpath: str) -> None:
    failures = SwitchConfigProvider().check({}, _props({"kind": "file", "path": str(tmp_path)}, {relpath: "x"}))
    assert [f.property for f in failures.failures] == ["files"]


def test_check_rejects_an_ssh_target_without_known_hosts() -> None:
    failures = SwitchConfigProvider().check({}, _props({"kind": "ssh", "host": "192.0.2.1"}))
    assert [f.reason for f in failures.failures] == ["an ssh target needs known_hosts"]


# --- ssh target: a real sshd on 127.0.0.1 with its own host key and one authorized key ----------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


RUNNING_CONFIG_DB = {  # what `sonic-cfggen -d --print-data` prints on the stand-in switch
    "DEVICE_METADATA": {"localhost": {"hostname": "sonic", "mac": "0c:42:a1:00:00:01", "hwsku": "ACS-SN5600"}},
    "PORT": {"Ethernet0": {"fec": "rs", "lanes": "0,1,2,3,4,5,6,7", "speed": "800000"},
             "Ethernet8": {"lanes": "8,9,10,11,12,13,14,15", "speed": "800000"}},
    "VLAN": {"Vlan1000": {"vlanid": "1000"}},
    "FEATURE": {"bgp": {"state": "enabled"}},
}


def _nos_stand_ins(tmp_path: Path) -> Path:
    """Executables named like the NOS commands; each appends its argv to nos.log. `config` also keeps
    the file `config replace` was given; FAIL_<name> in tmp_path makes <name> exit 1."""
    shims = tmp_path / "nos-bin"
    shims.mkdir()
    log = tmp_path / "nos.log"
    (tmp_path / "running.json").write_text(json.dumps(RUNNING_CONFIG_DB))
    common = f'echo "$(basename "$0") $*" >> {log}; [ ! -e {tmp_path}/FAIL_$(basename "$0") ] || exit 1\n'
    scripts = {
        # sudo runs the command, except writes under /etc/sonic (the stand-in switch has none)
        "sudo": 'case "$*" in *" /etc/sonic/"*) exit 0;; esac; exec "$@"\n',
        # `-d --print-data`: the running CONFIG_DB; `-v DEVICE_METADATA.localhost.buffer_model -j FILE`: that field
        "sonic-cfggen": f'[ "$1" = -v ] || exec cat {tmp_path / "running.json"}\n'
                        'python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\'DEVICE_METADATA\']'
                        '[\'localhost\'].get(\'buffer_model\', \'\'))" "$4"\n',
        "config": f'[ "$1" != replace ] || cp "$2" {tmp_path / "replaced.json"}\n',
        "docker": "", "nv": "", "FastCli": "",
    }
    for name, body in scripts.items():
        path = shims / name
        path.write_text("#!/bin/sh\n" + (common if name != "sudo" else "") + body)
        path.chmod(0o755)
    return shims


def _nos_calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "nos.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def sshd(tmp_path: Path):
    sshd_bin = shutil.which("sshd") or "/usr/sbin/sshd"
    if not Path(sshd_bin).exists() or not shutil.which("ssh-keygen"):
        pytest.skip("openssh-server (sshd, ssh-keygen) is not installed")
    if not Path("/run/sshd").is_dir():
        if os.geteuid() != 0:
            pytest.skip("sshd needs its privilege-separation dir /run/sshd")
        Path("/run/sshd").mkdir(mode=0o755)
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    shims = _nos_stand_ins(tmp_path)
    for name in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    shutil.copyfile(keys / "client.pub", keys / "authorized_keys")
    port = _free_port()
    config = keys / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
        f"StrictModes no\nPidFile {keys / 'sshd.pid'}\nUsePAM no\nSubsystem sftp internal-sftp\n"
        f"SetEnv PATH={shims}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
    )  # fmt: skip
    proc = subprocess.Popen([sshd_bin, "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.skip(f"sshd did not start: {proc.stderr.read() if proc.stderr else ''}")
                time.sleep(0.1)
        known_hosts = keys / "known_hosts"
        known_hosts.write_text(f"[127.0.0.1]:{port} {(keys / 'host.pub').read_text().split(' ')[0]} "
                               f"{(keys / 'host.pub').read_text().split(' ')[1]}\n")
        target = {"kind": "ssh", "host": "127.0.0.1", "port": port, "user": os.environ.get("USER") or "root",
                  "known_hosts": str(known_hosts), "remote_dir": str(tmp_path / "remote")}
        yield target, (keys / "client").read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_ssh_push_delivers_the_files(sshd, tmp_path: Path) -> None:
    target, key = sshd
    SwitchConfigProvider().create(_props(target, credential=key))
    pushed = tmp_path / "remote" / "spine-01"
    assert {p.name: p.read_text() for p in pushed.iterdir()} == FILES


def test_ssh_update_swaps_the_whole_directory(sshd, tmp_path: Path) -> None:
    target, key = sshd
    provider = SwitchConfigProvider()
    olds = provider.create(_props(target, credential=key)).outs
    # no NOS: the swap alone (an apply step would need the NOS's own files)
    provider.update("id", olds, _props(target, {"frr.conf": "hostname spine-01\n!\n"}, credential=key, nos=None))
    assert [p.name for p in (tmp_path / "remote").iterdir()] == ["spine-01"]  # no staging dirs left
    assert [p.name for p in (tmp_path / "remote" / "spine-01").iterdir()] == ["frr.conf"]


def test_ssh_delete_removes_the_device_dir(sshd, tmp_path: Path) -> None:
    target, key = sshd
    provider = SwitchConfigProvider()
    provider.delete("id", provider.create(_props(target, credential=key)).outs)
    assert list((tmp_path / "remote").iterdir()) == []


def test_ssh_refuses_an_unknown_host_key(sshd, tmp_path: Path) -> None:
    target, key = sshd
    Path(target["known_hosts"]).write_text("")
    with pytest.raises(RuntimeError, match="Host key verification failed"):
        SwitchConfigProvider().create(_props(target, credential=key))


def test_ssh_runs_the_apply_command(sshd, tmp_path: Path) -> None:
    target, key = sshd
    marker = tmp_path / "applied"
    SwitchConfigProvider().create(_props({**target, "apply_command": f"touch {marker}"}, credential=key))
    assert marker.exists()


# --- the NOS apply step after the swap -------------------------------------------------------------


def test_ssh_sonic_push_replaces_config_db_and_reloads_frr(sshd, tmp_path: Path) -> None:
    target, key = sshd
    files = {"config_db.json": json.dumps({
        "DEVICE_METADATA": {"localhost": {"hostname": "spine-01", "docker_routing_config_mode": "split-unified"}},
        "PORT": {"Ethernet0": {"lanes": "0,1,2,3,4,5,6,7", "speed": "400000", "mtu": "9100"}},
        "INTERFACE": {"Ethernet0": {}, "Ethernet0|198.18.0.0/31": {}},
    }), "frr.conf": "hostname spine-01\n"}
    SwitchConfigProvider().create(_props(target, files, credential=key))
    calls = _nos_calls(tmp_path)
    assert calls[1].startswith("config replace /") and calls[1].endswith("/target.json")
    assert calls[3].startswith("sonic-cfggen -v DEVICE_METADATA.localhost.buffer_model -j ")
    assert calls == [
        "sonic-cfggen -d --print-data",
        calls[1],
        "config save -y",
        calls[3], calls[4],  # the buffer model before and after: both unset, so no reload
        "docker exec bgp /usr/lib/frr/frr-reload.py --test /etc/frr/frr.conf.cf-new",
        "docker exec bgp /usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf",
    ]
    replaced = json.loads((tmp_path / "replaced.json").read_text())
    # our tables in; the platform's fields and the tables we do not render kept
    assert replaced["DEVICE_METADATA"]["localhost"] == {
        "hostname": "spine-01", "docker_routing_config_mode": "split-unified", "mac": "0c:42:a1:00:00:01",
        "hwsku": "ACS-SN5600"}
    assert replaced["PORT"]["Ethernet0"] == {"fec": "rs", "lanes": "0,1,2,3,4,5,6,7", "speed": "400000", "mtu": "9100"}
    assert replaced["PORT"]["Ethernet8"] == RUNNING_CONFIG_DB["PORT"]["Ethernet8"]
    assert replaced["INTERFACE"] == {"Ethernet0": {}, "Ethernet0|198.18.0.0/31": {}}
    assert replaced["FEATURE"] == RUNNING_CONFIG_DB["FEATURE"] and replaced["VLAN"] == RUNNING_CONFIG_DB["VLAN"]
    assert sorted(p.name for p in (tmp_path / "remote" / "spine-01").iterdir()) == ["config_db.json", "frr.conf"]


def test_ssh_sonic_push_reloads_where_the_buffer_model_changes(sshd, tmp_path: Path) -> None:
    # buffermgrd.sh picks the buffer manager when swss starts: a new buffer_model needs `config reload`
    target, key = sshd
    files = {"config_db.json": json.dumps({"DEVICE_METADATA": {"localhost": {"buffer_model": "dynamic"}}})}
    SwitchConfigProvider().create(_props(target, files, credential=key))
    calls = _nos_calls(tmp_path)
    assert calls[-1] == "config reload -y" and calls[-4] == "config save -y"
    assert json.loads((tmp_path / "replaced.json").read_text())["DEVICE_METADATA"]["localhost"]["buffer_model"] \
        == "dynamic"


def test_ssh_sonic_push_fails_when_config_replace_fails(sshd, tmp_path: Path) -> None:
    target, key = sshd
    (tmp_path / "FAIL_config").touch()
    with pytest.raises(RuntimeError, match="exit 1"):
        SwitchConfigProvider().create(_props(target, credential=key))
    calls = _nos_calls(tmp_path)
    assert calls[-1].startswith("config replace ")  # nothing after the failed step: no save, no FRR reload


def test_ssh_cumulus_push_is_nv_config_replace_then_apply(sshd, tmp_path: Path) -> None:
    target, key = sshd
    SwitchConfigProvider().create(_props(target, {"startup.yaml": "- set: {}\n"}, device="leaf-1", credential=key,
                                         nos="cumulus"))
    remote = f"{tmp_path}/remote/leaf-1"
    assert _nos_calls(tmp_path) == [f"nv config replace {remote}/startup.yaml", "nv config apply --assume-yes",
                                    "nv config save"]


def test_ssh_eos_push_is_configure_replace(sshd, tmp_path: Path) -> None:
    target, key = sshd
    SwitchConfigProvider().create(_props(target, {"running-config": "hostname leaf-1\n"}, device="leaf-1",
                                         credential=key, nos="eos"))
    remote = f"{tmp_path}/remote/leaf-1"
    assert _nos_calls(tmp_path) == [f"FastCli -p 15 -c configure replace file:{remote}/running-config",
                                    "FastCli -p 15 -c copy running-config startup-config"]
