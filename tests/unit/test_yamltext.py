"""The YAML writer is byte-identical to PyYAML's safe dump on host_vars-shaped values, tricky strings included."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterforge.render.yamltext import _AnsibleDumper, to_ansible_yaml, to_yaml

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
TRICKY = ["550", "12.4", "1.31", "true", "no", "On", "null", "~", "", " x", "x ", "a: b", "a #b", "#x", "-x", "- x",
          "10.0.0.1/31", "2001:db8::1", "190:20:30", "1e3", "0x1F", "0o17", "2026-12-01", "@x", "'q'", '"q"', "x'y",
          "ä", "---", "...", "<<", "=", "*a", "&a", "!t", "%p", "|", ">", "[a]", "{a}", "a,b", "a\tb", "Ethernet0",
          "a:", "a:b", "a:b:c", "leaf-01:eth1", "x:/etc/y", "ceos:latest", "a :b", "a  b", "ip link set dev eth0 up",
          "2001-12-14 21:59:43.10 -5", "2001-12-14t21:59:43.10-05:00", "12:30:00", "1:20", "a b:", "a #b", "a b ",
          "ab c" * 40, "x\t" * 60, "y" * 150, "q:" * 70]
strings = st.one_of(st.sampled_from(TRICKY), st.text(max_size=10),
                    st.from_regex(r"[a-z0-9][a-z0-9._/-]{0,12}", fullmatch=True),
                    st.from_regex(r"[a-z0-9/][a-z0-9._/: -]{0,40}", fullmatch=True))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), strings)
keys = st.one_of(st.sampled_from(["name", "ip", "cf_su", "members", "a-b", "x.y"]), strings)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)), max_leaves=30)


def reference(data, dumper=_Dumper) -> str:
    return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, width=4096,
                     explicit_start=True)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, values, max_size=6))
def test_matches_pyyaml(data):
    assert to_yaml(data) == reference(data)
    assert to_ansible_yaml(data) == reference(data, _AnsibleDumper)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, values, max_size=6), st.sampled_from([40, 80, 120]))
def test_matches_pyyaml_at_a_width_without_a_start(data, width):
    expected = yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=width)
    assert to_yaml(data, width=width, explicit_start=False) == expected


def test_ansible_strings_with_braces_stay_unsafe():
    data = {"a": "x{y", "b": ["{{ lookup('pipe', 'id') }}"], "c": "plain"}
    text = to_ansible_yaml(data)
    assert text == reference(data, _AnsibleDumper)
    assert text.count("!unsafe") == 2


def test_shared_containers_floats_and_tuples_follow_pyyaml():
    shared = {"a": 1}
    for data in ({"x": shared, "y": shared}, {"f": 1.5}, {"t": [[1, 2], []]}, {"k" * 200: 1}, {"s": "a\nb"}):
        assert to_yaml(data) == reference(data)


def test_host_vars_and_inventories_take_the_fast_path(monkeypatch):
    from pathlib import Path

    from clusterforge.loading import load_and_plan
    from clusterforge.render import yamltext
    from clusterforge.render.ansible_inventory import HEADER, render_ansible
    from clusterforge.render.yamltext import UnsafeTolerantLoader

    def refuse(data):
        raise AssertionError(f"fell back to PyYAML for {str(data)[:200]}")

    monkeypatch.setattr(yamltext, "_pyyaml", refuse)
    spec, plan, _ = load_and_plan(Path(__file__).resolve().parents[2] / "inventory" / "superpod-4su.yaml")
    files = render_ansible(plan)
    assert len(files) > 100
    for path, text in files.items():
        assert text == HEADER + reference(yaml.load(text, Loader=UnsafeTolerantLoader), _AnsibleDumper), path
