"""Each identifier grammar and the address-pool rule: what passes, what is refused, and that the refusal
states the allowed form."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from clusterforge.model import grammar
from clusterforge.model.pools import Ipv4Pool

CASES = {
    grammar.Name: (["lab", "a", "dc-1", "x" * 63], ["", "-lab", "lab-", "Lab", "a_b", "x" * 64, "lab\nx", "a b"]),
    grammar.ModelKey: (["sn5600", "hgx-h200-8gpu", "px3.415v_32a"], ["", "SN5600", "-x", "a/b", "a b", "{{x}}"]),
    grammar.GpuModel: (["H200", "NVIDIA H200", "H100-SXM5-80GB"], ["", " H200", "H200\n", "{{ x }}", "a;b"]),
    grammar.NicName: (["ens1f0", "rail0", "eth0.10", "x" * 15], ["", "0eth", "x" * 16, "eth 0", "eth/0", "a\nb"]),
    grammar.VrfName: (["mgmt", "default", "Vrf_1"], ["", "1mgmt", "x" * 16, "mgmt\nusername evil", "mg mt"]),
    grammar.Version: (["11.8", "1.31", "2.21.5", "12.4.1.2"], ["", "11", "v11.8", "11.8-1", "{{ 1 }}", "1..2"]),
    grammar.DriverBranch: (["535", "1000"], ["53", "535.1", "r535", ""]),
    grammar.DriverVersion: (["535.261.03", "580.159"], ["535", "535.261.03.1", "535-261", ""]),
    grammar.OsRelease: (["debian-12", "ubuntu-22.04"], ["debian", "Debian-12", "debian-12; id", "ubuntu-22.04 "]),
    grammar.MountPath: (["/mnt/hot", "/lustre", "/a/b.c/d_e"],
                        ["mnt/hot", "/mnt/../etc", "/mnt//x", "/mnt/x/", "/mnt/a b", "/", "/mnt/.."]),
    grammar.Export: (["hot", "/export/hot", "fs_1"], ["../x", "/export/../x", "host:/x", "a b", ""]),
    grammar.MountOptions: (["rw", "rw,noatime,vers=4.2", "nconnect=8"], ["", "rw, noatime", "rw\nx", "rw,,x", "#rw"]),
    grammar.Owner: (["platform-team", "ML Infra", "ops@example.org"], ["=cmd", "+1", "-x", "@x", "a\tb", ""]),
    grammar.FreeText: (["PX3 switched, 415 V 3-phase 32 A (22 kVA)", ""],
                       ["a\nb", "a\x1bb", "{{ x }}", "{% if %}", "x" * 501, "a\u202eb"]),
}


@pytest.mark.parametrize("kind", list(CASES), ids=lambda kind: str(kind).split("[")[0][-30:])
def test_grammar_accepts_and_refuses(kind):
    adapter = TypeAdapter(kind)
    good, bad = CASES[kind]
    for value in good:
        assert adapter.validate_python(value) == value
    for value in bad:
        with pytest.raises(ValidationError) as caught:
            adapter.validate_python(value)
        message = str(caught.value)
        assert "allowed:" in message or "not allowed" in message or "longer than" in message, message


@pytest.mark.parametrize("pool", ["10.0.0.0/8", "198.18.0.0/15", "172.16.4.0/22", "100.64.0.0/10", "10.1.2.0/30"])
def test_usable_pools(pool):
    assert TypeAdapter(Ipv4Pool).validate_python(pool) == pool


@pytest.mark.parametrize(("pool", "message"), [
    ("10.0.0.1/8", "host bits set; did you mean 10.0.0.0/8"), ("10.0.0.0/31", "not a usable pool"),
    ("10.0.0.0/7", "not a usable pool"), ("0.0.0.0/0", "not a usable pool"), ("010.0.0.0/8", "not an IPv4 address"),
    ("256.0.0.0/8", "not an IPv4 address"), ("10.0.0.0", "not a CIDR prefix"), (" 10.0.0.0/8x", "not a CIDR prefix"),
    ("fd00::/64", "IPv6 is not planned"), ("::ffff:10.0.0.0/104", "IPv6 is not planned"),
    ("10.0.0.0/8\nx: 1", "not a CIDR prefix"), ("10.0.0.0/8 # a: b", "not a CIDR prefix"),
    ("127.0.0.0/8", "loopback"), ("224.0.0.0/24", "multicast"), ("239.1.0.0/16", "multicast"),
    ("169.254.0.0/16", "link-local"), ("240.0.0.0/8", "reserved"), ("0.1.0.0/16", "'this network'"),
])
def test_unusable_pools(pool, message):
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(Ipv4Pool).validate_python(pool)
    assert message in str(caught.value)
