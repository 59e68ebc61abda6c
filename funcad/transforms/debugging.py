"""Debugging aids: the machinery behind `funcad.debug.print` inside transformed
code and `funcad.config.update("debug_nans", True)`.

`print(fmt, *args, **kwargs)` is an effectful primitive: eager code prints at
once; under grad/jvp/linearize the primal values are printed, under vmap the
batched values (batch axis first); under jit the values become extra outputs
of the compiled program and are printed after each call, in program order.
The optimiser never removes it (`register_effect`).

>>> import funcad, funcad.numpy as fnp
>>> def f(x):
...     funcad.debug.print("x = {x}", x=x)
...     return fnp.sin(x)
>>> _ = funcad.grad(f)(0.0)
x = 0.0
>>> _ = funcad.jit(f)(1.0)
x = 1.0

debug_nans: eager primitives check their outputs as they run (bind's fast
path pays one flag check when it is off). A jitted call checks its outputs;
on a NaN the function is traced again with each equation's source line
recorded and interpreted op by op with NumPy, so the error names the first
primitive that made a NaN and the user's line that called it.
"""
from __future__ import annotations

from ..core.trace import sharding_rules as _sharding_rules
from ..core.typed_sharding import BY_SHAPE_RULE as _BY_SHAPE_RULE
import builtins
from typing import Any

import numpy as np

from ..core import eager as _eager
from ..core import options as _options
from ..core import x64 as _x64
from ..core.avals import aval_of
from ..core.errors import FuncadError, InfError, NaNError
from ..core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import (Primitive, abstract_eval_rules, batch_rules, call_rules, ctx, hooks,
                          impl_rules, jvp_rules, lowering_rules, transpose_rules)
from ..core.traceback_util import user_source
from ..primitives.structural import moveaxis
from .passes import register_effect
from .passes._util import subjaxprs

__all__ = ["print", "check_eager_nans", "check_jit_nans", "find_first_nan", "hoist_prints"]

# ---------------------------------------------------------------- print ----

debug_print_p = Primitive("debug_print", multiple_results=True)


def print(fmt: str, *args, **kwargs) -> None:  # noqa: A001  (as jax.debug.print)
    """Print `fmt.format(*args, **kwargs)` with the values the program computes,
    also inside jit, grad, jvp and vmap.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> _ = funcad.vmap(lambda x: funcad.debug.print("{}", x * 2.0) or x)(np.arange(3.0))
    [0. 2. 4.]
    """
    if not isinstance(fmt, str):
        raise FuncadError(f"funcad.debug.print takes a format string first, got {type(fmt).__name__}; "
                          "write funcad.debug.print('{}', x)")
    leaves, in_tree = tree_flatten((args, kwargs))
    debug_print_p.bind(*leaves, fmt=fmt, in_tree=in_tree)


def _format(values, fmt: str, in_tree) -> str:
    args, kwargs = tree_unflatten(in_tree, [np.asarray(v) if not isinstance(v, (int, float, complex, bool))
                                            else v for v in values])
    return fmt.format(*args, **kwargs)


def _print_impl(*values, fmt, in_tree):
    builtins.print(_format(values, fmt, in_tree), flush=True)
    return []


def _print_jvp(primals, tangents, **params):
    return debug_print_p.bind(*primals, **params), []  # the primal values are printed


def _print_batch(vals, dims, *, axis_size, **params):
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    return debug_print_p.bind(*vals, **params), []


impl_rules[debug_print_p] = _print_impl
abstract_eval_rules[debug_print_p] = lambda *avals, fmt, in_tree: []
_sharding_rules[debug_print_p] = _BY_SHAPE_RULE  # no results
jvp_rules[debug_print_p] = _print_jvp
transpose_rules[debug_print_p] = lambda cts, *args, fmt, in_tree: [None] * len(args)
batch_rules[debug_print_p] = _print_batch


def _print_lowering(ctx_, *args, fmt, in_tree):
    # Top-level prints never reach the lowering: jit hoists them out (hoist_prints below).
    raise FuncadError(
        f"funcad.debug.print({fmt!r}) inside funcad.lax control flow (cond, switch, while_loop, "
        "fori_loop, scan) cannot be compiled by jit. Print before or after the loop, return the "
        "values you want to see from the body, or run the loop without jit.")


lowering_rules[debug_print_p] = _print_lowering
register_effect(debug_print_p)


# -- under jit: prints become extra outputs, printed after the call ----------

class PrintPlan:
    """How to print after a compiled call: the real output count, then per print
    (params, slots) where a slot is ("val", value) or ("out", k) = extra output k."""

    __slots__ = ("n_out", "entries")

    def __init__(self, n_out: int, entries: list):
        self.n_out, self.entries = n_out, entries

    def emit(self, outs: list) -> list:
        extra = outs[self.n_out:]
        for params, slots in self.entries:
            _print_impl(*[v if kind == "val" else extra[v] for kind, v in slots], **params)
        return outs[:self.n_out]


def _call_param(prim) -> str | None:
    """The param holding the body of a call primitive (jit, checkpoint, ...), or None."""
    rule = call_rules.get(prim)
    return None if rule is None else rule.param


def _has_print(jaxpr: Jaxpr) -> bool:
    return any(e.prim is debug_print_p or any(_has_print(j) for j in subjaxprs(e.params))
               for e in jaxpr.eqns)


def hoist_prints(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, PrintPlan | None]:
    """The jaxpr without its debug_print equations, whose operands become extra
    outputs instead, and the plan to print them; (closed, None) if it prints nothing.

    >>> import funcad
    >>> j = funcad.make_jaxpr(lambda x: print("{}", x) or x * 2.0)(1.0)
    >>> j2, plan = hoist_prints(j)
    >>> len(j2.out_avals), plan.n_out
    (2, 1)
    """
    if not _has_print(closed.jaxpr):
        return closed, None
    j = closed.jaxpr
    eqns: list[Eqn] = []
    extra: list = []
    entries: list = []

    def slot(a):
        if type(a) is Literal:
            return ("val", a.val)
        extra.append(a)
        return ("out", len(extra) - 1)

    for eqn in j.eqns:
        if eqn.prim is debug_print_p:
            entries.append((eqn.params, [slot(a) for a in eqn.inputs]))
            continue
        if any(_has_print(s) for s in subjaxprs(eqn.params)):
            param = _call_param(eqn.prim)
            if param is None:
                raise FuncadError(
                    f"funcad.debug.print inside `{eqn.prim.name}` (funcad.lax control flow) cannot "
                    "be compiled by jit. Print before or after it, return the values you want to "
                    "see from the body, or run it without jit.")
            body, plan = hoist_prints(eqn.params[param])
            new_vars = [Var(a) for a in body.out_avals[plan.n_out:]]
            eqn = eqn._replace(outvars=list(eqn.outvars) + new_vars, params=dict(eqn.params, **{param: body}))
            base = len(extra)
            extra.extend(new_vars)
            entries.extend((p, [(k, v + base if k == "out" else v) for k, v in slots])
                           for p, slots in plan.entries)
        eqns.append(eqn)
    n_out = len(j.outvars)
    hoisted = ClosedJaxpr(Jaxpr(j.constvars, j.invars, eqns, list(j.outvars) + extra), closed.consts)
    return hoisted, PrintPlan(n_out, entries)


# ----------------------------------------------------------- debug_nans ----

# What debug_nans / debug_infs look for (set by funcad.config; `ctx.debug_nans` is on
# while either is, the one flag bind and jit read).
NANS = False
INFS = False


def set_checks(nans: bool, infs: bool) -> None:
    global NANS, INFS
    NANS, INFS = nans, infs
    type(ctx).debug_nans = nans or infs
    _eager.set_lane(_x64.enabled, nans or infs)  # the eager fast lane skips the checks


_options.bind("debug_nans", on_set=lambda v: set_checks(v, INFS), get=lambda: NANS)
_options.bind("debug_infs", on_set=lambda v: set_checks(NANS, v), get=lambda: INFS)


def _bad_array(a: np.ndarray) -> bool:
    if NANS and INFS:
        return not bool(np.isfinite(a).all())
    return bool(np.isnan(a).any()) if NANS else bool(np.isinf(a).any())


def _has_nan(x) -> bool:
    """Whether x holds a value the active checks flag: a NaN (debug_nans), an inf (debug_infs)."""
    t = type(x)
    if t is float or t is complex:
        return _bad_array(np.asarray(x))
    if t is np.ndarray or isinstance(x, np.generic):
        return x.dtype.kind in "fc" and _bad_array(x)
    dtype = getattr(x, "dtype", None)  # a device Array
    if dtype is not None and np.dtype(dtype).kind in "fc":
        return _bad_array(np.asarray(x))
    return False


def _what(xs) -> tuple[str, str, type]:
    """('a NaN', 'debug_nans', NaNError) or the inf equivalents, for the values found."""
    if NANS and any(np.isnan(np.asarray(x)).any() for x in xs if np.asarray(x).dtype.kind in "fc"):
        return "a NaN", "debug_nans", NaNError
    return "an inf", "debug_infs", InfError


def _types(xs) -> str:
    out = []
    for x in xs:
        try:
            out.append(aval_of(x).str_short())
        except Exception:
            out.append(type(x).__name__)
    return ", ".join(out)


def _with_values(xs) -> str:
    """'f64[2] = [1. 4.], f64[]' : short types, and the values of small arrays."""
    out = []
    for x in xs:
        t = _types([x])
        try:
            v = np.asarray(x)
            if v.size <= 4 and v.dtype.kind in "biufc":
                t += f" = {np.array2string(v, precision=6)}"
        except Exception:
            pass
        out.append(t)
    return ", ".join(out)


def _nan_error(prim_name: str, ins, outs, where: str, inside: str = "") -> NaNError:
    what, option, error = _what(outs)
    note = f" Its inputs already held {what}." if any(_has_nan(x) for x in ins) else ""
    at = f" at {where}" if where else ""
    hint = (" (a NaN under funcad.numpy.where still poisons gradients: see docs/where_gradient.md)"
            if error is NaNError else "")
    return error(
        f"{option}: primitive `{prim_name}`{inside} produced {what} in its output "
        f"{_types(outs)} (inputs: {_with_values(ins) or 'none'}){at}.{note} Find where the inputs leave "
        f"the op's domain{hint}. Turn the check off with funcad.config.update('{option}', False).")


def check_eager_nans(prim: Primitive, args, params: dict, out) -> None:
    """Raise NaNError if an eagerly evaluated primitive produced a NaN (called by bind)."""
    outs = out if prim.multiple_results else (out,)
    if not any(_has_nan(o) for o in outs):
        return
    where = user_source()
    param = _call_param(prim)
    if param is not None and isinstance(params.get(param), ClosedJaxpr):
        # A compiled call (jit under grad, say): find the equation inside that made the NaN.
        find_first_nan(params[param], list(args), where, f" in {prim.name}")
    raise _nan_error(prim.name, args, outs, where)


hooks.check_eager_nans = check_eager_nans

def find_first_nan(closed: ClosedJaxpr, args: list, where: str = "", inside: str = "") -> None:
    """Interpret `closed` op by op with NumPy; raise NaNError at the first equation
    whose output holds a NaN, naming its source line (if recorded) or `where`.
    Returns normally if no equation makes a NaN."""
    saved, type(ctx).debug_nans = ctx.debug_nans, False  # this loop does the checking
    try:
        _run_checked(closed, args, where, inside)
    finally:
        type(ctx).debug_nans = saved


def _run_checked(closed: ClosedJaxpr, args: list, where: str, inside: str) -> None:
    j = closed.jaxpr
    env: dict[int, Any] = {}
    for v, x in zip(j.constvars, closed.consts):
        env[id(v)] = x
    for v, x in zip(j.invars, args):
        env[id(v)] = x
    for eqn in j.eqns:
        ins = [a.val if type(a) is Literal else env[id(a)] for a in eqn.inputs]
        out = eqn.prim.bind(*ins, **eqn.params)
        outs = list(out) if eqn.prim.multiple_results else [out]
        if any(_has_nan(o) for o in outs):
            src = eqn.source or where
            param = _call_param(eqn.prim)
            if param is not None:  # look inside the call for the culprit
                _run_checked(eqn.params[param], ins, src, inside)
            raise _nan_error(eqn.prim.name, ins, outs, src, inside)
        for v, o in zip(eqn.outvars, outs):
            env[id(v)] = o


def check_jit_nans(jitted, args, kwargs, outs) -> None:
    """After a top-level jitted call with debug_nans on: on a NaN output, trace the
    function again with source lines and find the first equation making a NaN."""
    bad = [i for i, o in enumerate(outs) if _has_nan(o)]
    if not bad:
        return
    where = user_source()
    leaves, _, in_tree, static_pos = jitted._split(args, kwargs)
    closed, _ = jitted._trace(args, kwargs, leaves, in_tree, static_pos)  # records sources
    find_first_nan(closed, [np.asarray(x) if hasattr(x, "_buf") else x for x in leaves], where,
                   f" in jit({jitted.name})")
    what, option, error = _what([outs[bad[0]]])
    raise error(
        f"{option}: jit({jitted.name}) returned {what} in output {bad[0]} ({_types([outs[bad[0]]])}), "
        f"called at {where}; re-running it op by op with NumPy gave none, so XLA's arithmetic differs "
        "from NumPy's here (e.g. an overflow in float32). Check the function without jit.")
