"""Emit readable, runnable NumPy source for a jaxpr: `funcad.to_python`.

Each primitive registers a short source template beside its definition, in
`python_rules`: a format string over the input expressions {0}, {1}, ... and
the params by name, or a function (eqn, inputs) -> str, plus the source of a
helper function the template calls, if any. The emitted function imports only
NumPy (and SciPy's special functions where a primitive needs them).
"""
from __future__ import annotations

import keyword

import numpy as np

from ..core.ir import ClosedJaxpr, Jaxpr, Literal, Var, inline_jaxpr
from ..core.pretty import _Namer
from ..core.trace import call_rules, python_rules


def np_dtype(d) -> str:
    """How the emitted source names dtype `d`: `np.float32`."""
    return f"np.{np.dtype(d).name}"


def _expr(eqn, a):
    """Source for one equation (`a` holds the input expressions) and the helper
    function it needs, from the rule its primitive registered."""
    entry = python_rules.get(eqn.prim)
    if entry is None:
        return None, None
    template, helper = entry
    if isinstance(template, str):
        return template.format(*a, **eqn.params), helper
    return template(eqn, a), helper


def _literal(lit) -> str:
    v = np.asarray(lit.val)
    dt = lit.aval.dtype
    if dt == np.bool_:
        return f"np.bool_({bool(v)})"
    if v.dtype.kind == "c" and not np.isfinite(v):  # repr gives (nan+nanj), not valid source
        c = v.item()
        text = f"complex(float('{c.real}'), float('{c.imag}'))"
    elif v.dtype.kind == "f" and not np.isfinite(v):
        text = f"float('{v.item()}')"
    else:
        text = repr(v.item())
    return f"{np_dtype(dt)}({text})"


def _inline_calls(jaxpr: Jaxpr) -> Jaxpr:
    """The jaxpr with the calls (see register_call) of constant-free bodies replaced by
    the bodies' equations (a custom_jvp function's value is its body's)."""
    eqns, sub = [], {}

    def s(a):
        return sub.get(id(a), a) if type(a) is Var else a

    for eqn in jaxpr.eqns:
        rule = call_rules.get(eqn.prim)
        body = eqn.params.get(rule.param) if rule is not None else None
        if not isinstance(body, ClosedJaxpr) or body.consts:
            eqns.append(eqn._replace(inputs=[s(a) for a in eqn.inputs]))
            continue
        body_eqns, outs = inline_jaxpr(_inline_calls(body.jaxpr), [], [s(a) for a in eqn.inputs])
        eqns += body_eqns
        sub.update((id(v), a) for v, a in zip(eqn.outvars, outs))
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, [s(a) for a in jaxpr.outvars])


def to_python(jaxpr, name: str = "f") -> str:
    """Readable NumPy source for a jaxpr, as a function `name`.

    Constants of a ClosedJaxpr become leading parameters named after their
    variables, so the source stays small; pass their values when calling.

    >>> import funcad, funcad.numpy as fnp
    >>> print(funcad.to_python(funcad.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(1.0)))
    import numpy as np
    <BLANKLINE>
    def f(a):
        b = np.sin(a)
        c = b * np.float64(2.0)
        return c
    """
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    if not isinstance(jaxpr, Jaxpr):
        raise TypeError(f"to_python needs a jaxpr (from funcad.make_jaxpr), got {type(jaxpr).__name__}")
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a valid Python function name")
    jaxpr = _inline_calls(jaxpr)
    namer = _Namer()

    def atom(x):
        if isinstance(x, Literal):
            return _literal(x)
        n = namer(x)
        return n + "_" if keyword.iskeyword(n) or n in ("np", "special") else n

    params = [atom(v) for v in jaxpr.constvars + jaxpr.invars]
    body, helpers, needs_special = [], [], False
    for eqn in jaxpr.eqns:
        outs = [atom(v) for v in eqn.outvars]
        expr, helper = _expr(eqn, [atom(x) for x in eqn.inputs])
        if expr is None:
            raise NotImplementedError(
                f"to_python has no NumPy template for primitive `{eqn.prim.name}`; "
                "it can print programs made of funcad's core primitives")
        if helper and helper not in helpers:
            helpers.append(helper)
        needs_special |= "special." in expr
        lhs = ", ".join(outs) + ("," if len(outs) == 1 and eqn.prim.multiple_results else "")
        body.append(f"    {lhs} = {expr}")
    rets = [atom(v) for v in jaxpr.outvars]
    body.append(f"    return {', '.join(rets)}")
    head = ["import numpy as np"] + (["from scipy import special"] if needs_special else [])
    parts = ["\n".join(head), *helpers, f"def {name}({', '.join(params)}):\n" + "\n".join(body)]
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"
