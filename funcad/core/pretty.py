"""Print jaxprs the way JAX does: `{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }`."""
from __future__ import annotations

import html
import re

import numpy as np

from .avals import short_dtype
from .ir import ClosedJaxpr, Jaxpr, Literal


def _names():
    letters = "abcdefghijklmnopqrstuvwxyz"
    n = 0
    while True:
        q, r = divmod(n, 26)
        name = letters[r]
        while q:
            q, r = divmod(q - 1, 26)
            name = letters[r] + name
        yield name
        n += 1


class _Namer:
    def __init__(self):
        self.names, self.gen = {}, _names()

    def __call__(self, v):
        if isinstance(v, Literal):
            return _literal(v)
        if id(v) not in self.names:
            self.names[id(v)] = next(self.gen)
        return self.names[id(v)]


def _literal(lit) -> str:
    val = np.asarray(lit.val)
    if val.dtype == bool:
        text = str(bool(val))
    elif val.dtype.kind == "f":
        text = repr(float(val))
    else:
        text = str(val.item())
    return f"{text}:{lit.aval.str_short()}"


def _decl(name, v) -> str:
    return f"{name(v)}:{v.aval.str_short()}"


def _is_jaxpr(value) -> bool:
    return isinstance(value, (Jaxpr, ClosedJaxpr))


def _param(value, name, indent) -> str:
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if _is_jaxpr(value):
        return pp_jaxpr(value, indent, name)  # one namer: inner variables get fresh letters
    if isinstance(value, (list, tuple)) and value and all(_is_jaxpr(v) for v in value):
        pad = " " * (indent + 2)
        inner = "\n".join(pad + _param(v, name, indent + 2) for v in value)
        return f"(\n{inner}\n{' ' * indent})"
    if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic):
        return short_dtype(value)
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


def _params(params, name, indent) -> str:
    """`[k=v, ...]`, or one parameter a line (as JAX does) when one of them is a jaxpr."""
    if not params:
        return ""
    items = sorted(params.items())
    if not any(_is_jaxpr(v) or isinstance(v, (list, tuple)) and v and all(_is_jaxpr(u) for u in v)
               for _, v in items):
        return "[" + ", ".join(f"{k}={_param(v, name, indent)}" for k, v in items) + "]"
    pad = " " * (indent + 2)
    lines = "\n".join(f"{pad}{k}={_param(v, name, indent + 2)}" for k, v in items)
    return f"[\n{lines}\n{' ' * indent}]"


def pp_jaxpr(jaxpr, indent: int = 0, name=None) -> str:
    """The jaxpr as text; nested jaxprs in parameters are printed in place.

    >>> import funcad, funcad.numpy as fnp
    >>> print(funcad.make_jaxpr(fnp.sin)(1.0))
    { lambda ; a:f64[]. let
        b:f64[] = sin a
      in (b,) }
    """
    name = name or _Namer()
    consts = " ".join(_decl(name, v) for v in jaxpr.constvars)
    args = " ".join(_decl(name, v) for v in jaxpr.invars)
    pad = " " * (indent + 4)
    lines = []
    for eqn in jaxpr.eqns:
        lhs = " ".join(_decl(name, v) for v in eqn.outvars) or "_"
        params = _params(eqn.params, name, indent + 4)
        rhs = " ".join(name(a) for a in eqn.inputs)
        lines.append(f"{pad}{lhs} = {eqn.prim.name}{params} {rhs}".rstrip())
    outs = ", ".join(name(a) for a in jaxpr.outvars)
    outs = f"({outs},)" if len(jaxpr.outvars) == 1 else f"({outs})"
    head = f"{{ lambda {consts}; {args}. let"
    if not lines:
        return f"{head}  in {outs} }}"
    body = "\n".join(lines)
    return f"{head}\n{body}\n{' ' * (indent + 2)}in {outs} }}"


_STYLE = ("<style>.fj{font-family:monospace;white-space:pre;line-height:1.35}"
          ".fj .ty{color:#777}.fj .pr{color:#1a5fb4;font-weight:bold}.fj .kw{color:#a51d2d}</style>")


def pp_jaxpr_html(jaxpr) -> str:
    """The printed jaxpr as HTML, with primitives and types highlighted (for Jupyter)."""
    text = html.escape(pp_jaxpr(jaxpr))
    text = re.sub(r"(:)([a-z]+\d*\[[\d,]*\])", r'\1<span class="ty">\2</span>', text)
    text = re.sub(r"(= )([a-z_][a-z_0-9]*)(?=[\[ \n])", r'\1<span class="pr">\2</span>', text)
    text = re.sub(r"\b(lambda|let|in)\b", r'<span class="kw">\1</span>', text)
    return f'{_STYLE}<div class="fj">{text}</div>'


# The IR prints through this module (ir.py knows no printer).
Jaxpr.__str__ = lambda self: pp_jaxpr(self)
Jaxpr._repr_html_ = lambda self: pp_jaxpr_html(self)
ClosedJaxpr.__str__ = lambda self: pp_jaxpr(self.jaxpr)
ClosedJaxpr._repr_html_ = lambda self: pp_jaxpr_html(self.jaxpr)
