"""Jaxprs drawn with Graphviz (`funcad.viz.graph`).

Inputs are green, outputs red, constants grey; each equation is a box named after its
primitive; nested jaxprs (jit calls, control flow) are clusters. The `graphviz` package
is optional: it is imported when a graph is drawn.
"""
import shutil as _shutil

from .errors import FuncadError as _FuncadError
from .ir import ClosedJaxpr as _ClosedJaxpr, Jaxpr as _Jaxpr, Literal as _Literal
from .pretty import _literal, _Namer


__all__ = ["graph", "GraphvizMissingError"]


class GraphvizMissingError(_FuncadError, RuntimeError):
    """Graphviz (the `dot` program or the `graphviz` package) is not installed."""


def _graphviz():
    try:
        import graphviz  # an optional package: only drawing needs it
    except ImportError:
        raise GraphvizMissingError("funcad.viz needs the `graphviz` Python package: "
                                   "pip install graphviz") from None
    return graphviz


def _check_dot():
    if _shutil.which("dot") is None:
        raise GraphvizMissingError(
            "rendering needs Graphviz's `dot` program, which is not on PATH. Install it "
            "(apt-get install graphviz, brew install graphviz, or conda install graphviz); "
            "the DOT text is available without it as `.source`.")


def _make_class():
    graphviz = _graphviz()

    class JaxprGraph(graphviz.Digraph):
        """A graphviz.Digraph that says clearly when `dot` is missing."""

        def pipe(self, *args, **kwargs):
            _check_dot()
            return super().pipe(*args, **kwargs)

        def render(self, *args, **kwargs):
            _check_dot()
            return super().render(*args, **kwargs)

        def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
            _check_dot()
            return super()._repr_mimebundle_(include, exclude, **kwargs)

    return JaxprGraph


def graph(jaxpr, name: str = "jaxpr", rankdir: str = "TB"):
    """A Graphviz diagram of a jaxpr (or ClosedJaxpr), to show inline or save.

    >>> import funcad, funcad.numpy as fnp
    >>> g = funcad.viz.graph(funcad.make_jaxpr(lambda x: fnp.sin(x) * x)(1.0))
    >>> "sin" in g.source
    True
    """
    if isinstance(jaxpr, _ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    if not isinstance(jaxpr, _Jaxpr):
        raise TypeError(f"graph needs a jaxpr (from funcad.make_jaxpr), got {type(jaxpr).__name__}")
    g = _make_class()(name=name, graph_attr={"rankdir": rankdir, "fontname": "Helvetica"},
                      node_attr={"fontname": "Helvetica", "fontsize": "11"})
    counter = iter(range(10 ** 9))
    _draw(g, jaxpr, {}, "", counter, top=True)
    return g


def _draw(g, jaxpr, env, prefix, counter, top):
    """Add jaxpr's nodes to g; returns the id of the first node drawn (or None)."""
    names = _Namer()
    first = None

    def new_id(tag):
        nonlocal first
        nid = f"{prefix}{tag}{next(counter)}"
        first = first or nid
        return nid

    for vs, color in ((jaxpr.constvars, "lightgrey"), (jaxpr.invars, "palegreen")):
        for v in vs:
            nid = new_id("v")
            env[id(v)] = nid
            g.node(nid, f"{names(v)}: {v.aval.str_short()}", shape="ellipse", style="filled",
                   fillcolor=color)
    for eqn in jaxpr.eqns:
        eid = new_id("e")
        params = [f"{k}={v}" for k, v in sorted(eqn.params.items())
                  if not isinstance(v, (_Jaxpr, _ClosedJaxpr)) and len(str(v)) < 40]
        label = eqn.prim.name + ("\n" + "\n".join(params) if params else "")
        g.node(eid, label, shape="box", style="rounded,filled", fillcolor="lightyellow")
        for x in eqn.inputs:
            if isinstance(x, _Literal):
                lid = new_id("l")
                g.node(lid, _literal(x), shape="plaintext", fontsize="9")
                g.edge(lid, eid)
            else:
                g.edge(env[id(x)], eid, label=x.aval.str_short(), fontsize="9")
        for sub_name, sub in sorted(eqn.params.items()):
            if isinstance(sub, (_Jaxpr, _ClosedJaxpr)):
                inner = sub.jaxpr if isinstance(sub, _ClosedJaxpr) else sub
                with g.subgraph(name=f"cluster_{eid}_{sub_name}") as c:
                    c.attr(label=f"{eqn.prim.name}: {sub_name}", style="dashed", color="grey50")
                    head = _draw(c, inner, {}, f"{eid}_{sub_name}_", counter, top=True)
                if head is not None:
                    g.edge(eid, head, style="dotted", arrowhead="none")
        for v in eqn.outvars:
            env[id(v)] = eid
    if top:
        for i, v in enumerate(jaxpr.outvars):
            oid = new_id("out")
            if isinstance(v, _Literal):
                g.node(oid, f"out {i} = {_literal(v)}", shape="ellipse", style="filled", fillcolor="lightpink")
            else:
                g.node(oid, f"out {i}: {v.aval.str_short()}", shape="ellipse", style="filled",
                       fillcolor="lightpink")
                g.edge(env[id(v)], oid)
    return first
