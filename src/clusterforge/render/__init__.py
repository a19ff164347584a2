"""Renderers: Plan in, file contents out (switch configs, Ansible inventory, assets, reports)."""

from clusterforge.render.registry import render_all
from clusterforge.render.writer import atomic_write, write_tree

__all__ = ["atomic_write", "render_all", "write_tree"]
