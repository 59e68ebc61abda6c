"""funcad.lax's tokens, DCE sink and varying-type casts: `create_token`, `after_all`,
`dce_sink` (primitives/tokens.py), `pcast` and `pbroadcast` (compositions of the
collectives, so their derivatives and batching come from psum, pvary and select)."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import ctx
from ..primitives import collectives as C
from ..primitives import elementwise as E
from ..primitives.tokens import after_all_p, create_token_p, dce_sink_p
from ..arrays.dtypes import asarray_or_tracer

__all__ = ["create_token", "after_all", "dce_sink", "pcast", "pbroadcast"]


def create_token(_=None):
    """A token with no preconditions, for sequencing effects (the argument is ignored, as JAX's).

    >>> import funcad
    >>> funcad.lax.create_token()
    Token()
    """
    return create_token_p.bind()


def after_all(*operands):
    """One token that comes after all the given tokens.

    >>> import funcad
    >>> t = funcad.lax.create_token()
    >>> funcad.jit(lambda a, b: funcad.lax.after_all(a, b))(t, t).aval
    AbstractToken()
    """
    return after_all_p.bind(*operands)


def dce_sink(val, *, prevent_mlir_dce: bool = False) -> None:
    """Mark every array of the pytree `val` as used, so that dead-code elimination keeps
    the computation that produces it; with `prevent_mlir_dce`, XLA keeps it too.

    >>> import funcad, funcad.numpy as fnp
    >>> def f(x):
    ...     funcad.lax.dce_sink(fnp.sin(x))
    ...     return x
    >>> print(funcad.make_jaxpr(f)(1.0))
    { lambda ; a:f64[]. let
        b:f64[] = sin a
        _ = dce_sink[prevent_mlir_dce=False] b
      in (a,) }
    """
    for leaf in tree_flatten(val)[0]:
        dce_sink_p.bind(asarray_or_tracer(leaf), prevent_mlir_dce=bool(prevent_mlir_dce))


_PCAST_TO = ("unreduced", "reduced", "varying")


def pcast(x, axis_name, *, to: str):
    """x (a pytree) cast to the device-varying type `to` over the named shard_map axes.

    funcad types values inside shard_map as invariant or varying over each mesh axis
    (funcad/transforms/vma.py); `to="varying"` marks invariant values as varying
    (`pvary`); a value already varying stays as it is. funcad has no reduced or unreduced
    types, so `to="reduced"` and `to="unreduced"` raise.

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: funcad.lax.pcast(v, "i", to="varying"), axis_name="i")(np.arange(3.0))
    array([0., 1., 2.])
    """
    if isinstance(axis_name, (set, frozenset)):
        raise FuncadTypeError(f"pcast: axis_name={axis_name!r} must be a tuple or a str")
    if to not in _PCAST_TO:
        raise FuncadValueError(f"pcast: unexpected to={to!r}; allowed values are {set(_PCAST_TO)}")
    if to != "varying":
        raise FuncadValueError(
            f"pcast(..., to={to!r}): funcad's shard_map types values only as invariant or varying "
            "(it has no reduced/unreduced types); use to='varying', or psum to reduce")
    if not axis_name:
        return x
    return C.pvary(x, axis_name)


def pbroadcast(x, axis_name, source):
    """Every device (or vmap entry) along `axis_name` gets the value `x` has at index
    `source` (a collective broadcast); `source` is an int or an int32 scalar array.

    >>> import funcad, numpy as np
    >>> funcad.vmap(lambda v: funcad.lax.pbroadcast(v, "i", 2), axis_name="i")(np.arange(4.0))
    Array([2., 2., 2., 2.], dtype=float64)
    """
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if len(names) != 1:
        raise FuncadValueError(f"pbroadcast: broadcasts over one axis, got axis_name={axis_name!r}")
    if isinstance(source, (int, np.integer)):
        n = C.axis_size(axis_name)
        if not 0 <= int(source) < n:
            raise FuncadValueError(f"pbroadcast: source={int(source)} is out of range for axis "
                                   f"{names[0]!r} of size {n}")
        src = np.int32(source)
    else:
        src = asarray_or_tracer(source)
        av = aval_of(src)
        if av.shape != () or np.dtype(av.dtype).kind not in "iu":
            raise FuncadTypeError(f"pbroadcast: a dynamic source must be an integer scalar, got "
                                  f"{av.str_short()}")
        src = E.convert_element_type(src, np.int32)
    is_source = E.eq(C.axis_index(axis_name), src)
    leaves, tree = tree_flatten(x)
    outs = []
    for v in leaves:
        v = asarray_or_tracer(v)
        dtype = aval_of(v).dtype
        masked = E.select_n(is_source, np.zeros(aval_of(v).shape, dtype), v)
        total = C.psum(masked, axis_name)
        if np.dtype(dtype) == np.bool_:
            total = E.convert_element_type(total, np.bool_)
        # psum makes the value invariant over the axis; the broadcast keeps x's type, as JAX's
        if ctx.vma is not None and names[0] in ctx.vma.of(v):
            total = C.pvary(total, axis_name)
        outs.append(total)
    return tree_unflatten(tree, outs)
