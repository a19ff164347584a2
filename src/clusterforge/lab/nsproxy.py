"""ssh ProxyCommand relay: stdin/stdout <-> TCP inside a lab host's network namespace.

Run as ``ip netns exec <ns> python3 -m clusterforge.lab.nsproxy HOST PORT`` (the lab's
ssh_config does that for hosts without a management address).  Exits as soon as either
side closes, so nothing outlives the ssh session (a backgrounded ``cat`` relay did, and
held the caller's stderr pipe open).
"""

from __future__ import annotations

import os
import selectors
import socket
import sys


def relay(host: str, port: int) -> int:
    sock = socket.create_connection((host, port), timeout=10)
    sock.settimeout(None)
    sel = selectors.DefaultSelector()
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    sel.register(stdin, selectors.EVENT_READ)
    sel.register(sock, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            if key.fileobj == stdin:
                data = os.read(stdin, 65536)
                if not data:
                    sock.shutdown(socket.SHUT_WR)
                    sel.unregister(stdin)
                    continue
                sock.sendall(data)
            else:
                data = sock.recv(65536)
                if not data:
                    return 0
                view = memoryview(data)
                while view:
                    view = view[os.write(stdout, view) :]


if __name__ == "__main__":
    sys.exit(relay(sys.argv[1], int(sys.argv[2])))
