"""clusterforge: infrastructure as code for AI GPU clusters."""

__version__ = "0.1.0"
