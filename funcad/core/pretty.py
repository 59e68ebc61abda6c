"""Print jaxprs the way JAX does: `{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }`."""
from __future__ import annotations

import numpy as np

from .avals import short_dtype


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
        from .ir import Literal
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


def _param(value, name, indent) -> str:
    from .ir import ClosedJaxpr, Jaxpr
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        inner = pp_jaxpr(value, indent + 4, _Namer())
        return "\n" + " " * (indent + 4) + inner.lstrip()
    if isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic):
        return short_dtype(value)
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


def pp_jaxpr(jaxpr, indent: int = 0, name=None) -> str:
    name = name or _Namer()
    consts = " ".join(_decl(name, v) for v in jaxpr.constvars)
    args = " ".join(_decl(name, v) for v in jaxpr.invars)
    pad = " " * (indent + 4)
    lines = []
    for eqn in jaxpr.eqns:
        lhs = " ".join(_decl(name, v) for v in eqn.outvars) or "_"
        params = ", ".join(f"{k}={_param(v, k, indent + 4)}" for k, v in sorted(eqn.params.items()))
        params = f"[{params}]" if params else ""
        rhs = " ".join(name(a) for a in eqn.inputs)
        lines.append(f"{pad}{lhs} = {eqn.prim.name}{params} {rhs}".rstrip())
    outs = ", ".join(name(a) for a in jaxpr.outvars)
    outs = f"({outs},)" if len(jaxpr.outvars) == 1 else f"({outs})"
    head = f"{{ lambda {consts}; {args}. let"
    if not lines:
        return f"{head}  in {outs} }}"
    body = "\n".join(lines)
    return f"{head}\n{body}\n{' ' * (indent + 2)}in {outs} }}"
