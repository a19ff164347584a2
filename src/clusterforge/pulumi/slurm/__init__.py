"""The Slurm layer of a stack: the MUNGE key and the controller and node steps."""
