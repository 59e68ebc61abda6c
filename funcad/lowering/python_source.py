"""Emit readable, runnable NumPy source for a jaxpr: `funcad.to_python`.

Each primitive registers a short source template beside its definition, in
`python_rules`: a format string over the input expressions {0}, {1}, ... and
the params by name, or a function (eqn, inputs) -> str, plus the source of a
helper function the template calls, if any. The emitted function imports only
NumPy (and SciPy's special functions where a primitive needs them).

A higher-order primitive's rule writes its bodies as nested functions with
`nested_function(closed, name)` and returns several lines: statements (the
defs, a Python `while` or `for` over them), then the expression whose value
the equation's outputs take. A call whose body has constants is written the
same way (`call_source`); one without is inlined. Constants inside bodies
become module-level arrays (`_const0 = np.array(...)`).
"""
from __future__ import annotations

import itertools
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
        call = call_rules.get(eqn.prim)
        if call is None:
            return None, None
        entry = (call_source(call.param), None)  # a call whose body has constants
    template, helper = entry
    if isinstance(template, str):
        return template.format(*a, **eqn.params), helper
    return template(eqn, a), helper


def _literal(lit) -> str:
    return _scalar_source(lit.val, lit.aval.dtype)


def _scalar_source(val, dt) -> str:
    v = np.asarray(val)
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


class _Emission:
    """What one to_python call collects besides the function: helpers, module-level
    constants, whether SciPy is needed, a counter for nested-function names."""

    def __init__(self):
        self.helpers: list[str] = []
        self.consts: list[str] = []
        self.special = False
        self.count = itertools.count()


_current: list[_Emission] = []  # the emission in progress (rules call back into it)


def _const_source(value) -> str:
    """Source that rebuilds the array `value` exactly."""
    v = np.asarray(value)
    if v.ndim == 0:
        return _scalar_source(v, v.dtype)
    if v.dtype.kind in "fc" and not np.isfinite(v).all():  # repr writes nan, not valid source
        return (f"np.frombuffer(bytes.fromhex({v.tobytes().hex()!r}), dtype={np_dtype(v.dtype)})"
                f".reshape({v.shape})")
    return f"np.array({v.tolist()!r}, dtype={np_dtype(v.dtype)})"


def fresh_name(prefix: str) -> str:
    """A module-unique name for a nested function or a temporary (`_while3`): the
    emitter names variables a, b, ..., never with a leading underscore."""
    return f"_{prefix}{next(_current[-1].count)}"


def _body_lines(jaxpr: Jaxpr, atom) -> list[str]:
    lines = []
    for eqn in jaxpr.eqns:
        outs = [atom(v) for v in eqn.outvars]
        expr, helper = _expr(eqn, [atom(x) for x in eqn.inputs])
        if expr is None:
            raise NotImplementedError(
                f"to_python has no NumPy template for primitive `{eqn.prim.name}`; "
                "it can print programs made of funcad's core primitives")
        em = _current[-1]
        if helper and helper not in em.helpers:
            em.helpers.append(helper)
        em.special |= "special." in expr
        *stmts, expr = expr.split("\n")
        lhs = ", ".join(outs) + ("," if len(outs) == 1 and eqn.prim.multiple_results else "")
        lines += stmts + [f"{lhs} = {expr}"]
    return lines


def _function(jaxpr: Jaxpr, name: str, consts, ret: str) -> str:
    """`def name(...)` for a jaxpr: constants are module-level arrays (`consts` given)
    or leading parameters (None); it returns its outputs as a "tuple", its one
    output ("single"), or as `return a, b` ("plain")."""
    jaxpr = _inline_calls(jaxpr)
    namer = _Namer()

    def atom(x):
        if isinstance(x, Literal):
            return _literal(x)
        n = namer(x)
        return n + "_" if keyword.iskeyword(n) or n in ("np", "special") else n

    lines = []
    if consts is None:
        params = [atom(v) for v in jaxpr.constvars + jaxpr.invars]
    else:
        params = [atom(v) for v in jaxpr.invars]
        em = _current[-1]
        for v, c in zip(jaxpr.constvars, consts):
            cname = f"_const{len(em.consts)}"
            em.consts.append(f"{cname} = {_const_source(c)}")
            lines.append(f"{atom(v)} = {cname}")
    lines += _body_lines(jaxpr, atom)
    rets = [atom(v) for v in jaxpr.outvars]
    if ret == "tuple":
        lines.append(f"return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
    else:
        lines.append(f"return {', '.join(rets)}")
    return f"def {name}({', '.join(params)}):\n" + "\n".join("    " + ln for ln in lines)


def nested_function(closed: ClosedJaxpr, name: str, single: bool = False) -> str:
    """Source of a nested `def name(...)` computing `closed` (for a higher-order
    primitive's to_python rule): its constants become module-level arrays; it
    returns a tuple of its outputs, or its one output if `single`."""
    return _function(closed.jaxpr, name, closed.consts, "single" if single else "tuple")


def call_source(param: str):
    """The to_python rule of a call primitive whose body (`params[param]`) has
    constants, so is not inlined: a nested function and a call of it."""
    def rule(eqn, a):
        fn = fresh_name(eqn.prim.name)
        return f"{nested_function(eqn.params[param], fn)}\n{fn}({', '.join(a)})"
    return rule


def to_python(jaxpr, name: str = "f") -> str:
    """Readable NumPy source for a jaxpr, as a function `name`.

    Constants of a ClosedJaxpr become leading parameters named after their
    variables, so the source stays small; pass their values when calling.
    Control flow becomes nested functions and Python `if`/`while`/`for`.

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
    em = _Emission()
    _current.append(em)
    try:
        fn = _function(jaxpr, name, None, "plain")
    finally:
        _current.pop()
    head = ["import numpy as np"] + (["from scipy import special"] if em.special else [])
    parts = ["\n".join(head), *em.helpers, "\n".join(em.consts), fn]
    return "\n\n".join(p.rstrip("\n") for p in parts if p) + "\n"
