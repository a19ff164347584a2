"""Renderers: Plan in, file contents out (switch configs, Ansible inventory, assets, reports)."""

from clusterforge.render.registry import render_all
from clusterforge.render.tree import RenderedTree, render_tree
from clusterforge.render.writer import atomic_write, write_tree

__all__ = ["RenderedTree", "atomic_write", "render_all", "render_tree", "write_tree"]
