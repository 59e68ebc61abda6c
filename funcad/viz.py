"""Draw jaxprs with Graphviz: `funcad.viz.graph(jaxpr)`.

Inputs are green, outputs red, constants grey; each equation is a box named
after its primitive; nested jaxprs (jit calls, control flow) are clusters.
Needs the `graphviz` Python package, and Graphviz's `dot` program to render.
"""
from .core.jaxpr_graph import GraphvizMissingError, graph

__all__ = ["graph", "GraphvizMissingError"]
