"""Jvp and transpose rules of primitives (JAX's `interpreters.ad`).

Rules take JAX's conventions: a jvp rule is `(primals, tangents, **params) ->
(out, out_tangent)` where a zero tangent is a `Zero`; a transpose rule is
`(ct, *args, **params) -> cts` where the linear inputs are `UndefinedPrimal`s.

>>> import funcad
>>> from funcad.extend.core import Primitive
>>> from funcad.interpreters import ad
>>> cube_p = Primitive("cube")
>>> _ = cube_p.def_impl(lambda x: x ** 3)
>>> _ = cube_p.def_abstract_eval(lambda x: x)
>>> ad.defjvp(cube_p, lambda g, x: 3 * x ** 2 * g)
>>> float(funcad.grad(cube_p.bind)(2.0))
12.0
"""
from __future__ import annotations

from typing import Callable

from ..core.avals import ShapedArray, aval_of, tangent_dtype
from ..core.trace import abstract_eval_rules, jvp_rules, transpose_rules
from ..primitives import _base
from ..primitives._base import UndefinedPrimal, is_undefined as is_undefined_primal, zeros_tangent
from ..primitives.elementwise import add as _add
from ._tables import RuleTable

__all__ = ["UndefinedPrimal", "Zero", "add_jaxvals", "add_tangents", "defbilinear", "defjvp",
           "defjvp2", "deflinear", "deflinear2", "get_primitive_transpose", "instantiate_zeros",
           "is_undefined_primal", "primitive_jvps", "primitive_transposes", "zeros_like_aval"]


class Zero:
    """A symbolic zero tangent or cotangent of type `aval` (never materialised)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def from_primal_value(val) -> "Zero":
        """The zero tangent of a primal value (float0 for integers)."""
        a = aval_of(val)
        return Zero(ShapedArray(a.shape, tangent_dtype(a.dtype), a.weak_type))

    def instantiate(self):
        return zeros_tangent(self.aval)

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


def instantiate_zeros(tangent):
    """`tangent`, with a symbolic Zero made an array of zeros."""
    return tangent.instantiate() if type(tangent) is Zero else tangent


def zeros_like_aval(aval: ShapedArray):
    """An array of zeros of type `aval`."""
    return _base.full(aval.shape, 0, aval.dtype)


def add_tangents(x, y):
    """The sum of two tangents, either of which may be a symbolic Zero."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return _add(x, y)


add_jaxvals = add_tangents


def _tangent_aval(a: ShapedArray) -> ShapedArray:
    return ShapedArray(a.shape, tangent_dtype(a.dtype), a.weak_type)


def _none_if_zero(t):
    return None if type(t) is Zero else t


def _out_avals(prim, args, params) -> list:
    avals = [a.aval if type(a) is UndefinedPrimal else aval_of(a) for a in args]
    out = abstract_eval_rules[prim](*avals, **params)
    return list(out) if prim.multiple_results else [out]


# ---------------------------------------------------------------- jvp rules ----

def _jvp_to_funcad(prim, rule: Callable) -> Callable:
    def funcad_rule(primals, tangents, **params):
        ts = [Zero.from_primal_value(x) if t is None else t for x, t in zip(primals, tangents)]
        out, t_out = rule(list(primals), ts, **params)
        if prim.multiple_results:
            return list(out), [_none_if_zero(t) for t in t_out]
        return out, _none_if_zero(t_out)
    return funcad_rule


def _jvp_to_jax(prim, rule: Callable) -> Callable:
    def jax_rule(primals, tangents, **params):
        out, t_out = rule(list(primals), [_none_if_zero(t) for t in tangents], **params)
        if prim.multiple_results:
            return out, [Zero.from_primal_value(o) if t is None else t for o, t in zip(out, t_out)]
        return out, Zero.from_primal_value(out) if t_out is None else t_out
    return jax_rule


primitive_jvps = RuleTable(jvp_rules, _jvp_to_funcad, _jvp_to_jax)


def defjvp(prim, *jvprules: Callable | None) -> None:
    """One jvp rule per input: `jvprules[i](g, *primals, **params)` is the output's
    tangent from input i's tangent `g`; `None` for an input with no derivative."""
    _base.defjvp(prim, *[None if r is None else (lambda g, ans, *xs, _r=r, **p: _r(g, *xs, **p))
                         for r in jvprules])


def defjvp2(prim, *jvprules: Callable | None) -> None:
    """As defjvp, with the primal output too: `jvprules[i](g, ans, *primals, **params)`."""
    _base.defjvp(prim, *jvprules)


# ---------------------------------------------------------- transpose rules ----

def _transpose_to_funcad(prim, rule: Callable) -> Callable:
    def funcad_rule(ct, *args, **params):
        if prim.multiple_results:
            if any(c is None for c in ct):
                avals = _out_avals(prim, args, params)
                ct = [Zero(_tangent_aval(a)) if c is None else c for a, c in zip(avals, ct)]
        elif ct is None:
            ct = Zero(_tangent_aval(_out_avals(prim, args, params)[0]))
        return [_none_if_zero(c) for c in rule(ct, *args, **params)]
    return funcad_rule


def _transpose_to_jax(prim, rule: Callable) -> Callable:
    def jax_rule(ct, *args, **params):
        if prim.multiple_results:
            ct = [_none_if_zero(c) for c in ct]
            if all(c is None for c in ct):
                cts = [None] * len(args)
            else:
                cts = rule(ct, *args, **params)
        else:
            cts = [None] * len(args) if type(ct) is Zero else rule(ct, *args, **params)
        return [Zero(_tangent_aval(a.aval)) if c is None and type(a) is UndefinedPrimal else c
                for a, c in zip(args, cts)]
    return jax_rule


primitive_transposes = RuleTable(transpose_rules, _transpose_to_funcad, _transpose_to_jax)


def get_primitive_transpose(prim) -> Callable:
    """`prim`'s transpose rule, in JAX's convention."""
    try:
        return primitive_transposes[prim]
    except KeyError:
        raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                  f"'{prim.name}' not implemented") from None


def deflinear(prim, transpose_rule: Callable) -> None:
    """`prim` is linear in all its inputs; `transpose_rule(ct, **params)` returns the
    cotangents of the inputs."""
    deflinear2(prim, lambda ct, *args, **params: transpose_rule(ct, **params))


def deflinear2(prim, transpose_rule: Callable) -> None:
    """As deflinear, with the (undefined) inputs: `transpose_rule(ct, *args, **params)`."""
    _base.deflinear(prim, _transpose_to_funcad(prim, transpose_rule))
    transpose_rules[prim].jax_rule = transpose_rule


def defbilinear(prim, lhs_rule: Callable, rhs_rule: Callable) -> None:
    """`prim(x, y)` is linear in each of x and y; `lhs_rule(ct, x, y, **params)` is x's
    cotangent (x undefined) and `rhs_rule(ct, x, y, **params)` is y's."""
    defjvp(prim, lambda g, x, y, **p: prim.bind(g, y, **p), lambda g, x, y, **p: prim.bind(x, g, **p))

    def transpose(ct, x, y, **params):
        if type(ct) is Zero:
            return [None, None]
        return [lhs_rule(ct, x, y, **params) if is_undefined_primal(x) else None,
                rhs_rule(ct, x, y, **params) if is_undefined_primal(y) else None]
    primitive_transposes[prim] = transpose
