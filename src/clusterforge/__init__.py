"""clusterforge: infrastructure as code for AI GPU clusters."""

import os as _os

__version__ = "0.1.0"

# gRPC (loaded with pulumi) must not run its fork handlers in this process: clusterforge forks while gRPC's threads
# may run (ansible-runner's pexpect for every playbook, ssh, subprocesses). With the handlers on, a forked child
# restarts gRPC's epoll poller, pexpect then closes every inherited descriptor before exec, and the child aborts
# ("Epoll1Poller ... epoll_wait error: Bad file descriptor", SIGABRT) before ansible-playbook starts: 16 of 300
# pexpect spawns after one gRPC channel on grpcio 1.85, 0 of 300 with this. It is read when gRPC first loads, so it
# is set here, before any clusterforge module imports pulumi; an explicit setting is kept. The Pulumi program and
# its providers get the same through the engine's environment (clusterforge.pulumi.automation).
_os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
