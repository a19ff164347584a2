"""Changing nodes of a running cluster, one library call per command: ``replace`` (an RMA, one host) and ``roll``
(a rolling change in batches). Each drains through the scheduler drivers (clusterforge.schedulers), provisions
with the site playbook, gates on the host checks and takes the nodes back; the command line only parses flags
and prints what comes back."""
