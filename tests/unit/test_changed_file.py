"""The file a host-drift line names: a template task's check-mode result as the lab showed it (after removing
/etc/modprobe.d/blacklist-nouveau.conf) names its rendered temporary source as after_header; the drift line
must name the host's file."""

from clusterforge.provision.runner import changed_file


def test_a_template_names_its_destination():
    result = {"changed": True, "diff": [{"before_header": "/etc/modprobe.d/blacklist-nouveau.conf",
                                         "after_header": "/root/.ansible/tmp/a-1/t/blacklist-nouveau.conf.j2",
                                         "before": "", "after": "blacklist nouveau\n"}]}
    assert changed_file(result) == "/etc/modprobe.d/blacklist-nouveau.conf"


def test_dest_wins_and_nothing_named_is_empty():
    assert changed_file({"dest": "/etc/x", "diff": [{"after_header": "/tmp/y"}]}) == "/etc/x"
    assert changed_file({"changed": True}) == ""
