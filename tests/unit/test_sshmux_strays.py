"""sshmux.stop_strays: a process titled as an ssh master of this run's control directory (how ssh names a
daemonised master: ``ssh: DIR/HASH [mux]``) and a client naming it in its ControlPath are stopped; those of
another directory are left alone."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from clusterforge.sshmux import private_control_dir, stop_strays


def _titled(title: str) -> subprocess.Popen:
    return subprocess.Popen(["bash", "-c", f'exec -a "{title}" sleep 60'])


def test_a_master_without_a_socket_is_stopped_and_another_runs_is_not(tmp_path: Path):
    other = tmp_path / "cf-cp-other"
    with private_control_dir() as directory:
        ours = _titled(f"ssh: {directory}/0123abcd [mux]")
        client = subprocess.Popen(["ssh-client-stand-in", "-c", "import time; time.sleep(60)",
                                   f"-oControlPath={directory}/%C"], executable=sys.executable)
        theirs = _titled(f"ssh: {other}/0123abcd [mux]")
        try:
            for _ in range(50):  # until exec has set the titles
                if all(Path(f"/proc/{p.pid}/cmdline").read_bytes().startswith(b"ssh") for p in (ours, client, theirs)):
                    break
                time.sleep(0.05)
            assert sorted(stop_strays(directory)) == sorted([ours.pid, client.pid])
            assert ours.wait(timeout=10) == -15 and client.wait(timeout=10) == -15
            assert theirs.poll() is None
        finally:
            for p in (ours, client, theirs):
                p.kill()
                p.wait()
    assert not directory.exists()
