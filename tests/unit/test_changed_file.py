"""The file a host-drift line names: a template task's check-mode result as the lab showed it (after removing
/etc/modprobe.d/blacklist-nouveau.conf) names its rendered temporary source as after_header; the drift line
must name the host's file."""

from clusterforge.provision.runner import changed_file, changed_files


def test_a_template_names_its_destination():
    result = {"changed": True, "diff": [{"before_header": "/etc/modprobe.d/blacklist-nouveau.conf",
                                         "after_header": "/root/.ansible/tmp/a-1/t/blacklist-nouveau.conf.j2",
                                         "before": "", "after": "blacklist nouveau\n"}]}
    assert changed_file(result) == "/etc/modprobe.d/blacklist-nouveau.conf"


def test_a_template_of_a_missing_file_names_its_destination():
    """The result's shape when the file is gone (ansible-core 2.19, check mode): no dest, no before header, the
    temporary source as after header, the dest in the invocation's module_args (the lab named the .j2 path)."""
    temp = "/root/.ansible/tmp/ansible-local-1/t/blacklist-nouveau.conf.j2"
    args = {"dest": "/etc/modprobe.d/blacklist-nouveau.conf", "mode": "0644", "src": temp, "follow": False}
    result = {"changed": True, "diff": [{"before": "", "after_header": temp, "after": "blacklist nouveau\n"}],
              "invocation": {**args, "module_args": args}}
    assert changed_file(result) == "/etc/modprobe.d/blacklist-nouveau.conf"
    censored = {**result, "invocation": "CENSORED: no_log is set"}  # no_log: no module_args, no traceback
    assert changed_file(censored) == temp


def test_dest_wins_and_nothing_named_is_empty():
    assert changed_file({"dest": "/etc/x", "diff": [{"after_header": "/tmp/y"}]}) == "/etc/x"
    assert changed_file({"changed": True}) == ""


def test_a_loop_names_each_changed_item_by_file_or_label():
    """A check-mode reporter task (a debug loop over interfaces, volumes, options) names each item it reports."""
    result = {"changed": True, "results": [
        {"changed": False, "_ansible_item_label": "/sys/class/net/rail0/mtu"},
        {"changed": True, "_ansible_item_label": "/sys/class/net/rail1/mtu"},
        {"changed": True, "dest": "/etc/x", "_ansible_item_label": "x"}]}
    assert changed_files(result) == ["/sys/class/net/rail1/mtu", "/etc/x"]
    assert changed_files({"changed": True, "dest": "/etc/y"}) == ["/etc/y"]
    assert changed_files({"changed": True, "results": []}) == [""]
