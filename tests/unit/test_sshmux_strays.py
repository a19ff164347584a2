"""sshmux.stop_strays: a process titled as an ssh master of this run's control directory (how ssh names a
daemonised master: ``ssh: DIR/HASH [mux]``) is stopped; one of another directory is left alone."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from clusterforge.sshmux import private_control_dir, stop_strays


def _titled(title: str) -> subprocess.Popen:
    return subprocess.Popen(["bash", "-c", f'exec -a "{title}" sleep 60'])


def test_a_master_without_a_socket_is_stopped_and_another_runs_is_not(tmp_path: Path):
    other = tmp_path / "cf-cp-other"
    with private_control_dir() as directory:
        ours = _titled(f"ssh: {directory}/0123abcd [mux]")
        theirs = _titled(f"ssh: {other}/0123abcd [mux]")
        try:
            for _ in range(50):  # until exec has set the titles
                if all(Path(f"/proc/{p.pid}/cmdline").read_bytes().startswith(b"ssh: ") for p in (ours, theirs)):
                    break
                time.sleep(0.05)
            assert stop_strays(directory) == [ours.pid]
            assert ours.wait(timeout=10) == -15
            assert theirs.poll() is None
        finally:
            for p in (ours, theirs):
                p.kill()
                p.wait()
    assert not directory.exists()
