"""Combinators that make a primitive a few lines, and helpers shared by rules.

Rules are written with the bind functions of other primitives, never with raw
NumPy, so they can themselves be traced and differentiated.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray, aval_of, float0, tangent_dtype
from ..core.eager import wrap_weak
from ..core.errors import AxisError, FuncadTypeError, FuncadValueError
from ..core.trace import (Primitive, abstract_eval_rules, impl_rules, jvp_rules, python_rules,
                          transpose_rules)


class UndefinedPrimal:
    """A linear input of an equation being transposed: only its type is known."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x) -> bool:
    """Whether `x` is an UndefinedPrimal: a linear input that a transpose rule receives in
    place of a value (JAX's `ad.is_undefined_primal`).

    >>> from funcad.interpreters import ad
    >>> ad.is_undefined_primal(1.0)
    False
    """
    return type(x) is UndefinedPrimal


_SCALAR_TYPES = (float, int, complex, bool)


def shape_of(x) -> tuple:
    """The shape of an array, tracer, undefined primal or scalar. (np.shape on a tracer
    would go through NumPy's `__array_function__` dispatch: ~2 µs on a hot path.)"""
    t = type(x)
    if t is UndefinedPrimal:
        return x.aval.shape
    if t in _SCALAR_TYPES:
        return ()
    s = getattr(x, "shape", None)
    return np.shape(x) if s is None else s


def dtype_of(x):
    return x.aval.dtype if type(x) is UndefinedPrimal else aval_of(x).dtype


def canonical_axis(axis, nd: int, op: str = "", x=None) -> int:
    """`axis` in [-nd, nd) as a non-negative int; else an AxisError naming `op`
    and (when given) the operand's short type.

    >>> canonical_axis(-1, 3, "sum")
    2
    """
    a = int(axis)
    if not -nd <= a < nd:
        aval = getattr(x, "aval", None) or (aval_of(x) if x is not None else None)
        of = f"{aval.str_short()} (rank {nd})" if aval is not None else f"an array of rank {nd}"
        fix = f"valid axes are {-nd}..{nd - 1}" if nd else "it has no axes"
        raise AxisError(f"{op + ': ' if op else ''}axis {a} is out of bounds for {of}; {fix}")
    return a % nd


def check_eagerly(*prims) -> None:
    """Make eager calls of `prims` run their shape rule first. For these NumPy
    would accept some bad calls silently (an out-of-range slice is clipped,
    a short pad config is broadcast), where staged code raises."""
    for p in prims:
        impl, rule = impl_rules[p], abstract_eval_rules[p]

        def checked(*args, _impl=impl, _rule=rule, **params):
            _rule(*[aval_of(a) for a in args], **params)
            return _impl(*args, **params)
        impl_rules[p] = checked


def type_error(prim: str, msg: str, *avals) -> FuncadTypeError:
    types = ", ".join(a.str_short() for a in avals)
    return FuncadTypeError(f"{prim} got {types}: {msg}")


def new_primitive(name: str, impl, abstract_eval, multiple_results: bool = False) -> Primitive:
    p = Primitive(name, multiple_results)
    impl_rules[p] = impl
    abstract_eval_rules[p] = abstract_eval
    return p


def weak_if_all_operands_weak(prim: Primitive) -> None:
    """Make `prim`'s results weakly typed exactly when all its operands are (JAX's
    standard rule, which its linear algebra primitives follow too)."""
    rule = abstract_eval_rules[prim]

    def typed(*avals, **params):
        out = rule(*avals, **params)
        weak = all(a.weak_type for a in avals)
        if isinstance(out, (list, tuple)):
            return type(out)(o.update(weak_type=weak) for o in out)
        return out.update(weak_type=weak)
    abstract_eval_rules[prim] = typed


def defpython(prim: Primitive, template, helper: str | None = None) -> None:
    """The NumPy source `funcad.to_python` writes for `prim`: a format string over
    the input expressions {0}, {1}, ... and the params by name, or a function
    (eqn, inputs) -> str; `helper` is the source of a function the template calls."""
    python_rules[prim] = (template, helper)


def defjvp(prim: Primitive, *fns) -> None:
    """Jvp from one function per input: fns[i](t, ans, *primals, **params) -> tangent.

    A `None` entry marks an input the output does not depend on smoothly.
    Symbolic zero tangents (None) are skipped, so they cost nothing.
    """
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        # accuracy= applies to the primal op only (as in JAX); the tangent is computed plainly
        tangent_params = {k: v for k, v in params.items() if k != "accuracy"} if "accuracy" in params else params
        out = None
        for fn, t in zip(fns, tangents):
            if fn is None or t is None:
                continue
            c = fn(t, ans, *primals, **tangent_params)
            out = c if out is None else _add_tangents(out, c)
        return ans, out
    jvp_rules[prim] = rule


def jvp_of_composition(fun, primals, tangents):
    """The jvp of `fun` (flat lists in and out), a composition of primitives that
    computes what a primitive computes; for jvp rules that are easiest to state
    as the derivative of another algorithm (cumprod's is a prefix scan's)."""
    from ..transforms.jvp import jvp_flat  # allowed up-import: see tests/api/test_layers.py
    return jvp_flat(fun, primals, tangents)


def _add_tangents(a, b):
    from .elementwise import add  # rules are mutually recursive: see test_layers
    return add(a, b)


def defzero(prim: Primitive) -> None:
    """The output does not depend differentiably on any input."""
    def rule(primals, tangents, **params):
        return prim.bind(*primals, **params), ([None] * len(tangents) if prim.multiple_results else None)
    jvp_rules[prim] = rule


def deflinear(prim: Primitive, transpose) -> None:
    """A primitive linear in all its inputs: the jvp applies it to the tangents."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if all(t is None for t in tangents):
            return ans, None
        ts = [zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]
        return ans, prim.bind(*ts, **params)
    jvp_rules[prim] = rule
    transpose_rules[prim] = transpose


def zeros_tangent(x):
    """A materialised zero tangent (or cotangent) for a value or aval `x`: zeros of
    its tangent dtype, built with one broadcast (float0 zeros for integer values).
    The one place funcad makes zero tangents."""
    a = x if isinstance(x, ShapedArray) else aval_of(x)
    dt = tangent_dtype(a.dtype)
    if dt == float0:
        return np.zeros(a.shape, float0)
    return full(a.shape, 0, dt)


def zeros_like(x):
    a = aval_of(x)
    return full(a.shape, 0, a.dtype)


def full(shape, value, dtype):
    if not shape:
        return np.array(value, dtype)
    from .structural import broadcast_in_dim  # rules are mutually recursive: see test_layers
    return broadcast_in_dim(np.array(value, dtype), tuple(shape), ())


def const(x, value):
    """A 0-d constant of the dtype of x, weakly typed where x is (as JAX's constants
    made like an operand, so `log2` of a weak value stays weak)."""
    a = x.aval if type(x) is UndefinedPrimal else aval_of(x)
    c = np.array(value, a.dtype)
    return wrap_weak(c) if a.weak_type else c


def broadcast_shapes(*shapes) -> tuple:
    """np.broadcast_shapes, with the common cases (equal shapes, scalars) kept cheap and
    JAX's ValueError ("Incompatible shapes for broadcasting: shapes=[...]") on a mismatch."""
    big = [s for s in shapes if s]
    if not big:
        return ()
    if all(s == big[0] for s in big[1:]):
        return tuple(big[0])
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise FuncadValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}") \
            from None


def unbroadcast(ct, shape):
    """Sum a cotangent of a broadcast result back down to an operand's `shape`."""
    ct_shape = shape_of(ct)
    if tuple(ct_shape) == tuple(shape):  # the common case, kept cheap
        return ct
    from .reductions import reduce_sum  # rules are mutually recursive: see test_layers
    from .structural import reshape  # rules are mutually recursive: see test_layers
    lead = len(ct_shape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, (s, c) in enumerate(zip(shape, ct_shape[lead:])) if s == 1 and c != 1)
    summed = reduce_sum(ct, axes) if axes else ct
    return reshape(summed, tuple(shape)) if shape_of(summed) != tuple(shape) else summed


def broadcast_to(x, shape):
    xs = shape_of(x)
    if tuple(xs) == tuple(shape):
        return x
    lead = len(shape) - len(xs)
    return _broadcast_keep(x, shape, lead)


def _broadcast_keep(x, shape, lead):
    from .structural import broadcast_in_dim, reshape  # rules are mutually recursive: see test_layers
    xs = shape_of(x)
    keep = [i for i, s in enumerate(xs) if s == shape[lead + i]]
    if len(keep) != len(xs):
        x = reshape(x, tuple(xs[i] for i in keep))
    return broadcast_in_dim(x, tuple(shape), tuple(lead + i for i in keep))
