"""Algebraic simplification with exact semantics.

Every rewrite gives bitwise the same values as the equation it replaces, for
every input including -0.0, inf and NaN, and keeps its shape and dtype:
  x*1, 1*x, x/1, x-(+0.0), x+(-0.0)  -> x (broadcast if the result is bigger).
      Not x+0.0 (-0.0+0.0 is +0.0), not x*0 (NaN*0 is NaN), real dtypes only
      (complex (inf+0j)*(1+0j) is inf+nanj).
  neg(neg x), rev(rev x)             -> x
  transpose/reshape/broadcast chains -> one equation, or x when it changes nothing
  convert to x's own type, reduce over no axes, slice of everything, pad by
  nothing, concatenate of one array, integer_pow by 1  -> x
  select_n with a constant selector, or with one case repeated -> that case
  sum over broadcast axes of an integer broadcast -> a product (floats would round
                                               differently, so they are left alone)
  an operand of a broadcasting elementwise op that is a NumPy-style broadcast (or
  a constant with one value) -> the unbroadcast operand (or a scalar literal):
  the op broadcasts it itself, and the broadcast equation dies.
Rules are looked up by primitive in `rules` and return None (no change), an
atom (the output equals it) or a new equation binding the same outputs.
"""
from __future__ import annotations

import numpy as np

from ...core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ...primitives import elementwise as E
from ...primitives import reductions as R
from ...primitives import structural as S
from ._util import ELEMENTWISE, Env, concrete, literal, map_subjaxprs, uniform_scalar

rules: dict = {}


def simplify(closed: ClosedJaxpr, open_: bool = False) -> ClosedJaxpr:
    """Apply the rewrite rules in one forward sweep.

    >>> import funcad, numpy as np
    >>> from funcad.transforms.passes import dce
    >>> j = funcad.make_jaxpr(lambda x: -(-x) * np.ones(3))(np.ones(3))
    >>> print(dce(simplify(j)))
    { lambda ; a:f64[3]. let  in (a,) }
    """
    j = closed.jaxpr
    ctx = _Ctx(j, closed.consts)
    env = Env()
    eqns = []
    for eqn in j.eqns:
        eqn = eqn._replace(inputs=[env.read(a) for a in eqn.inputs],
                           params=map_subjaxprs(eqn.params, simplify))
        for _ in range(4):  # a rewritten equation may simplify further
            rule = rules.get(eqn.prim)
            new = rule(ctx, eqn) if rule is not None and not eqn.prim.multiple_results else None
            if new is None or isinstance(new, Eqn):
                eqn = new or eqn
                if new is None:
                    break
                continue
            env.set(eqn.outvars[0], new)
            eqn = None
            break
        if eqn is not None:
            for v in eqn.outvars:
                ctx.producer[id(v)] = eqn
            eqns.append(eqn)
    outvars = [env.read(a) for a in j.outvars]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, eqns, outvars), closed.consts)


class _Ctx:
    """What rules may ask about atoms: who produced them and which are constants."""

    def __init__(self, jaxpr: Jaxpr, consts):
        self.producer: dict[int, Eqn] = {}
        self.consts = {id(v): c for v, c in zip(jaxpr.constvars, consts) if concrete(c) is not None}
        self.outs = {id(v) for v in jaxpr.outvars if type(v) is Var}
        self._uniform: dict[int, object] = {}

    def made_by(self, a, prim) -> Eqn | None:
        e = self.producer.get(id(a)) if type(a) is Var else None
        return e if e is not None and e.prim is prim else None

    def uniform(self, a):
        """The one value all elements of `a` are known to have, or None."""
        if type(a) is Literal:
            return np.asarray(a.val, a.aval.dtype)
        key = id(a)
        if key not in self._uniform:
            if key in self.consts:
                self._uniform[key] = uniform_scalar(self.consts[key])
            else:
                e = self.made_by(a, S.broadcast_in_dim_p)
                self._uniform[key] = None if e is None else self.uniform(e.inputs[0])
        return self._uniform[key]

    def is_value(self, a, value, negative_zero: bool | None = None) -> bool:
        u = self.uniform(a)
        if u is None or u != value:
            return False
        return negative_zero is None or u.dtype.kind != "f" or bool(np.signbit(u)) == negative_zero

    def same_type(self, a, out: Var) -> bool:
        """Whether `a` may stand for `out`: same shape and dtype, and the same
        weak type too where `out` is an output of the jaxpr."""
        x, y = a.aval, out.aval
        return (x.shape == y.shape and x.dtype == y.dtype
                and (x.weak_type == y.weak_type or id(out) not in self.outs))


def _rule(*prims):
    def register(f):
        for p in prims:
            rules[p] = f
        return f
    return register


# ------------------------------------------------------------ arithmetic ----

def _real(eqn) -> bool:
    return eqn.outvars[0].aval.dtype.kind in "fiub"


def _as_output(ctx, a, eqn):
    """`a` standing for the output of `eqn`, NumPy-broadcast to its shape if needed;
    None when the types do not allow it."""
    out = eqn.outvars[0]
    if ctx.same_type(a, out):
        return a
    x, y = a.aval, out.aval
    if x.dtype != y.dtype or (x.weak_type != y.weak_type and id(out) in ctx.outs):
        return None
    n, m = out.aval.ndim, a.aval.ndim
    return Eqn(S.broadcast_in_dim_p, [a], eqn.outvars,
               {"shape": out.aval.shape, "broadcast_dimensions": tuple(range(n - m, n))}, eqn.source)


def _identity(ctx, eqn, pairs):
    """For (a, b) in pairs with b the op's identity element, the op's result is a."""
    if _real(eqn):
        for a, b, value, negative_zero in pairs:
            if ctx.is_value(b, value, negative_zero):
                new = _as_output(ctx, a, eqn)
                if new is not None:
                    return new
    return _absorb(ctx, eqn)


@_rule(E.mul_p)
def _mul(ctx, eqn):
    x, y = eqn.inputs
    return _identity(ctx, eqn, [(x, y, 1, None), (y, x, 1, None)])


@_rule(E.add_p)
def _add(ctx, eqn):
    x, y = eqn.inputs
    return _identity(ctx, eqn, [(x, y, 0, True), (y, x, 0, True)])


@_rule(E.sub_p)
def _sub(ctx, eqn):
    x, y = eqn.inputs
    return _identity(ctx, eqn, [(x, y, 0, False)])


@_rule(E.div_p)
def _div(ctx, eqn):
    x, y = eqn.inputs
    return _identity(ctx, eqn, [(x, y, 1, None)])


@_rule(E.neg_p)
def _neg(ctx, eqn):
    inner = ctx.made_by(eqn.inputs[0], E.neg_p)
    if inner is not None and ctx.same_type(inner.inputs[0], eqn.outvars[0]):
        return inner.inputs[0]
    return None


@_rule(E.integer_pow_p)
def _integer_pow(ctx, eqn):
    x = eqn.inputs[0]
    return x if eqn.params["y"] == 1 and ctx.same_type(x, eqn.outvars[0]) else None


@_rule(E.convert_element_type_p)
def _convert(ctx, eqn):
    x = eqn.inputs[0]
    return x if ctx.same_type(x, eqn.outvars[0]) else None


# A broadcasting elementwise op broadcasts NumPy-style operands by itself.
@_rule(E.rem_p, E.pow_p, E.max_p, E.min_p, E.atan2_p, E.and_p, E.or_p, E.xor_p,
       E.eq_p, E.ne_p, E.lt_p, E.le_p, E.gt_p, E.ge_p)
def _absorb(ctx, eqn):
    out_shape = eqn.outvars[0].aval.shape
    inputs = list(eqn.inputs)
    changed = False
    for i, a in enumerate(inputs):
        if not a.aval.shape:
            continue
        e = ctx.made_by(a, S.broadcast_in_dim_p)
        u = ctx.uniform(a)
        if u is not None:
            cand = literal(u, a.aval.update(shape=()))
        elif e is not None and _numpy_style(e):
            cand = e.inputs[0]
        else:
            continue
        trial = inputs[:i] + [cand] + inputs[i + 1:]
        if np.broadcast_shapes(*[b.aval.shape for b in trial]) == out_shape:
            inputs, changed = trial, True
    return eqn._replace(inputs=inputs) if changed else None


def _numpy_style(e: Eqn) -> bool:
    """A broadcast_in_dim that NumPy broadcasting would do: trailing axes aligned."""
    n, m = len(e.params["shape"]), e.inputs[0].aval.ndim
    return tuple(e.params["broadcast_dimensions"]) == tuple(range(n - m, n))


# ---------------------------------------------------------------- select ----

@_rule(E.select_n_p)
def _select_n(ctx, eqn):
    which, *cases = eqn.inputs
    pick = None
    u = ctx.uniform(which)
    if u is not None and 0 <= int(u) < len(cases):
        pick = cases[int(u)]
    elif all(c is cases[0] for c in cases) and type(cases[0]) is Var:
        pick = cases[0]
    if pick is None:
        return _absorb(ctx, eqn)
    return _as_output(ctx, pick, eqn)


# ------------------------------------------------------------- structural ----

@_rule(S.transpose_p)
def _transpose(ctx, eqn):
    x, perm = eqn.inputs[0], tuple(eqn.params["permutation"])
    inner = ctx.made_by(x, S.transpose_p)
    if inner is not None:
        p1 = inner.params["permutation"]
        x, perm = inner.inputs[0], tuple(p1[p] for p in perm)
    if perm == tuple(range(len(perm))) and ctx.same_type(x, eqn.outvars[0]):
        return x
    if x is eqn.inputs[0]:
        return None
    return eqn._replace(inputs=[x], params=dict(eqn.params, permutation=perm))


def _unreshaped(ctx, a):
    """The operand of the reshape or squeeze that produced `a`, or None."""
    e = ctx.made_by(a, S.reshape_p) or ctx.made_by(a, S.squeeze_p)
    return None if e is None else e.inputs[0]


@_rule(S.reshape_p, S.squeeze_p)
def _reshape(ctx, eqn):
    x, out = eqn.inputs[0], eqn.outvars[0]
    y = _unreshaped(ctx, x)
    if ctx.same_type(y if y is not None else x, out):
        return y if y is not None else x
    if y is not None:
        return Eqn(S.reshape_p, [y], eqn.outvars, {"new_sizes": out.aval.shape}, eqn.source)
    # reshape(f(reshape(y), scalars...)) with f elementwise is f(y, scalars...)
    # when the outer reshape undoes the inner one.
    e = ctx.producer.get(id(x)) if type(x) is Var else None
    if e is None or e.prim not in ELEMENTWISE:
        return None
    arrays = [i for i, a in enumerate(e.inputs) if a.aval.shape]
    if len(arrays) != 1 or e.inputs[arrays[0]].aval.shape != x.aval.shape:
        return None
    y = _unreshaped(ctx, e.inputs[arrays[0]])
    if y is None or y.aval.shape != out.aval.shape:
        return None
    inputs = list(e.inputs)
    inputs[arrays[0]] = y
    return Eqn(e.prim, inputs, eqn.outvars, e.params, e.source)


@_rule(S.broadcast_in_dim_p)
def _broadcast(ctx, eqn):
    x, out = eqn.inputs[0], eqn.outvars[0]
    if ctx.same_type(x, out):
        return x
    inner = ctx.made_by(x, S.broadcast_in_dim_p)
    if inner is not None:
        d1, d2 = inner.params["broadcast_dimensions"], eqn.params["broadcast_dimensions"]
        return eqn._replace(inputs=[inner.inputs[0]],
                            params=dict(eqn.params, broadcast_dimensions=tuple(d2[d] for d in d1)))
    y = _unreshaped(ctx, x)
    dims = None if y is None else _unit_reshape_dims(y.aval.shape, x.aval.shape,
                                                     eqn.params["broadcast_dimensions"], out.aval.ndim)
    if dims is None:
        return None
    return eqn._replace(inputs=[y], params=dict(eqn.params, broadcast_dimensions=dims))


def _unit_reshape_dims(y_shape, x_shape, x_dims, ndim):
    """broadcast_dimensions that broadcast y like `x_dims` broadcasts x = reshape(y),
    when that reshape only adds or drops axes of size 1; else None."""
    y_big = [i for i, n in enumerate(y_shape) if n != 1]
    x_big = [i for i, n in enumerate(x_shape) if n != 1]
    if [y_shape[i] for i in y_big] != [x_shape[i] for i in x_big]:
        return None
    want = {yi: x_dims[xi] for yi, xi in zip(y_big, x_big)}
    dims, prev = [], -1
    for i in range(len(y_shape)):
        d = want.get(i, prev + 1)  # a size-1 axis may go anywhere in order: take the first slot
        if d <= prev or d >= ndim:
            return None
        dims.append(d)
        prev = d
    return tuple(dims)


@_rule(S.rev_p)
def _rev(ctx, eqn):
    x, dims = eqn.inputs[0], eqn.params["dimensions"]
    if not dims and ctx.same_type(x, eqn.outvars[0]):
        return x
    inner = ctx.made_by(x, S.rev_p)
    if inner is not None and sorted(inner.params["dimensions"]) == sorted(dims) \
            and ctx.same_type(inner.inputs[0], eqn.outvars[0]):
        return inner.inputs[0]
    return None


@_rule(S.slice_p)
def _slice(ctx, eqn):
    x = eqn.inputs[0]
    return x if ctx.same_type(x, eqn.outvars[0]) and all(s == 1 for s in eqn.params["strides"]) else None


@_rule(S.pad_p)
def _pad(ctx, eqn):
    x = eqn.inputs[0]
    nothing = all(c == (0, 0, 0) for c in eqn.params["padding_config"])
    return x if nothing and ctx.same_type(x, eqn.outvars[0]) else None


@_rule(S.concatenate_p)
def _concatenate(ctx, eqn):
    x = eqn.inputs[0]
    return x if len(eqn.inputs) == 1 and ctx.same_type(x, eqn.outvars[0]) else None


# ------------------------------------------------------------- reductions ----

@_rule(R.reduce_max_p, R.reduce_min_p, R.reduce_prod_p)
def _reduce(ctx, eqn):
    x = eqn.inputs[0]
    return x if not eqn.params["axes"] and ctx.same_type(x, eqn.outvars[0]) else None


@_rule(R.reduce_sum_p)
def _reduce_sum(ctx, eqn):
    x, axes, out = eqn.inputs[0], eqn.params["axes"], eqn.outvars[0]
    if not axes and ctx.same_type(x, out):
        return x
    # An integer sum of n copies is exactly n times the value (modular arithmetic).
    b = ctx.made_by(x, S.broadcast_in_dim_p)
    if b is None or out.aval.dtype.kind not in "iu":
        return None
    y, dims = b.inputs[0], b.params["broadcast_dimensions"]
    if set(axes) & set(dims) or len(axes) + len(dims) != len(b.params["shape"]) \
            or not ctx.same_type(y, out):
        return None
    n = np.array(int(np.prod([b.params["shape"][a] for a in axes])), np.int64).astype(y.aval.dtype)
    return Eqn(E.mul_p, [y, literal(n, y.aval.update(shape=()))], eqn.outvars, {}, eqn.source)
