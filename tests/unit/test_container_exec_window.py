"""container.is_running across the execve from the cgroup shell to nspawn: the kernel shows an
empty command line for a moment there, which once failed a lab boot as "exited during boot"."""

from __future__ import annotations

import os
import subprocess
import time

from clusterforge.lab import container


def test_a_container_in_the_middle_of_exec_is_running(tmp_path):
    nspawn = tmp_path / "systemd-nspawn"  # a shell under nspawn's name: argv[0] as the real one shows it
    os.symlink("/bin/sh", nspawn)
    root = tmp_path / "hosts" / "h1" / "root"
    misses = 0
    for _ in range(30):
        # the child lives until the test closes its stdin: a worker descheduled for a moment under
        # load (two xdist workers beside a lab on two cores) cannot find it already gone and count
        # that as a miss; only is_running answering False for a live process does
        p = subprocess.Popen(["/bin/sh", "-c", 'echo $$ > /dev/null && exec "$@"', "cf-nspawn",
                              str(nspawn), "-c", "read line; true", "-D", str(root)],
                             stdin=subprocess.PIPE)
        container._children[p.pid] = p
        try:
            t0 = time.monotonic()
            while time.monotonic() - t0 < 0.05:  # the window is in the first milliseconds
                if not container.is_running(p.pid, root):
                    misses += 1
                    break
        finally:
            assert p.stdin is not None
            p.stdin.close()
            p.wait()
            container._children.pop(p.pid, None)
        assert not container.is_running(p.pid, root)  # gone is gone
    assert misses == 0
