"""Jacobians and Hessians, each one batched pass (vmap over basis vectors)."""
from __future__ import annotations

from functools import wraps
from typing import Callable

import numpy as np

from ..core.avals import aval_of
from ..core.pytree import tree_flatten, tree_unflatten
from ..primitives._base import full, zeros_tangent
from ..primitives.elementwise import convert_element_type, eq, real
from ..primitives.structural import iota, reshape, slice as lax_slice, transpose
from ..core.arguments import argnums_partial
from .api import _check_diff_inputs, _check_diff_outputs, _flatten_fun
from .jvp import jvp_flat
from .linearize import linearize_flat
from .transpose import backward_pass
from .vmap import vmap_flat


def _basis(avals, dtype):
    """The standard basis of the flattened inputs, one (N, *shape) block per leaf."""
    sizes = [a.size for a in avals]
    total = sum(sizes)
    # The identity from iotas rather than a NumPy constant, as JAX's: under jit XLA fuses
    # it into its use instead of reading an N x N constant from memory.
    eye = convert_element_type(eq(iota(np.int32, (total, total), 0), iota(np.int32, (total, total), 1)),
                               dtype)
    blocks, start = [], 0
    for a, n in zip(avals, sizes):
        blocks.append(reshape(lax_slice(eye, (0, start), (total, start + n)), (total,) + a.shape))
        start += n
    return blocks


def _split_last(y, avals, lead_shape):
    """(..., N) -> one array per leaf, shaped lead_shape + leaf shape."""
    out, start = [], 0
    nd = len(aval_of(y).shape)
    for a in avals:
        lo = [0] * nd
        hi = list(aval_of(y).shape)
        lo[-1], hi[-1] = start, start + a.size
        out.append(reshape(lax_slice(y, lo, hi), tuple(lead_shape) + a.shape))
        start += a.size
    return out


def _like(block, example):
    """A Jacobian block in the dtype and weak type of `example`'s aval (JAX's: jacfwd's
    blocks follow their output, jacrev's their input; a complex block of a real one is
    its real part)."""
    a = aval_of(block)
    if a.dtype.kind == "c" and example.dtype.kind != "c":
        block = real(block)
        a = aval_of(block)
    if a.dtype == example.dtype and a.weak_type == example.weak_type:
        return block
    return convert_element_type(block, example.dtype, example.weak_type)


def _prepare(fun, argnums, args, kwargs, name, holomorphic=False, allow_int=False):
    single, dyn, partial_fun = argnums_partial(fun, argnums, args, kwargs, name)
    flat, in_tree = tree_flatten(dyn)
    _check_diff_inputs(flat, name, holomorphic, allow_int, forward=name == "jacfwd")
    return single, dyn, flat, in_tree, partial_fun


def _assemble(out_tree, in_tree, single, jac_blocks):
    """Nest per-(output leaf, input leaf) blocks as JAX does: output tree of input trees."""
    per_out = [tree_unflatten(in_tree, blocks) for blocks in jac_blocks]
    if single:
        per_out = [p[0] for p in per_out]
    return tree_unflatten(out_tree, per_out)


def jacfwd(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """Jacobian by forward mode: one jvp per input entry, batched with vmap.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> funcad.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
    Array([[2., 0.],
           [0., 4.]], dtype=float64)
    """
    @wraps(fun)
    def jac(*args, **kwargs):
        single, dyn, flat, in_tree, partial_fun = _prepare(fun, argnums, args, kwargs, "jacfwd", holomorphic)
        flat_fun, store = _flatten_fun(lambda *d: partial_fun(*d), in_tree, has_aux)
        in_avals = [aval_of(x) for x in flat]
        dtype = np.result_type(*[a.dtype for a in in_avals])
        basis = _basis(in_avals, dtype)
        outs = {}

        def push(*ts):
            p, t = jvp_flat(flat_fun, flat, list(ts))
            outs["p"] = p
            return t

        tangents = vmap_flat(push, basis, [0] * len(basis), sum(a.size for a in in_avals), None)
        out_tree, aux_tree, n = store[0]
        primals = outs["p"]
        _check_diff_outputs(primals[:n], "jacfwd", holomorphic, forward=True)
        blocks = []
        for y, t in zip(primals[:n], tangents[:n]):
            y_shape = aval_of(y).shape
            nd = len(y_shape)
            t = transpose(t, tuple(range(1, nd + 1)) + (0,))  # (N, *y) -> (*y, N)
            y_aval = aval_of(y)
            blocks.append([_like(b, y_aval) for b in _split_last(t, in_avals, y_shape)])
        res = _assemble(out_tree, in_tree, single, blocks)
        if has_aux:
            return res, tree_unflatten(aux_tree, [_primal_of(a) for a in primals[n:]])
        return res

    return jac


def _primal_of(x):
    return x


def jacrev(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False) -> Callable:
    """Jacobian by reverse mode: one pullback per output entry, batched with vmap.

    allow_int: integer inputs are allowed (their blocks are zeros of the input's dtype,
    as JAX's), instead of raising.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> funcad.jacrev(lambda x: fnp.sin(x))(np.zeros(2))
    Array([[1., 0.],
           [0., 1.]], dtype=float64)
    """
    @wraps(fun)
    def jac(*args, **kwargs):
        single, dyn, flat, in_tree, partial_fun = _prepare(fun, argnums, args, kwargs, "jacrev", holomorphic,
                                                              allow_int)
        flat_fun, store = _flatten_fun(lambda *d: partial_fun(*d), in_tree, has_aux)
        p_out, linear = linearize_flat(flat_fun, flat)
        out_tree, aux_tree, n = store[0]
        _check_diff_outputs(p_out[:n], "jacrev", holomorphic)
        in_avals = [aval_of(x) for x in flat]
        out_avals = [aval_of(y) for y in p_out[:n]]
        dtype = np.result_type(*[a.dtype for a in out_avals])
        basis = _basis(out_avals, dtype)
        m = sum(a.size for a in out_avals)
        n_extra = len(p_out) - n

        def pull(*cts):
            cts = [c if c.dtype == a.dtype else c for c, a in zip(cts, out_avals)]
            res = backward_pass(linear.jaxpr, linear.consts, list(cts) + [None] * n_extra)
            return [zeros_tangent(a) if r is None else r for r, a in zip(res, in_avals)]

        rows = vmap_flat(pull, basis, [0] * len(basis), m, None)  # one (M, *x_shape) per input
        blocks = [[None] * len(in_avals) for _ in out_avals]
        for j, (r, a) in enumerate(zip(rows, in_avals)):
            if a.dtype.kind in "biu":  # allow_int: JAX's blocks are zeros of the input's dtype
                for i, oa in enumerate(out_avals):
                    blocks[i][j] = full(oa.shape + a.shape, 0, a.dtype)
                continue
            r = reshape(r, (m, a.size))
            start = 0
            for i, oa in enumerate(out_avals):
                piece = lax_slice(r, (start, 0), (start + oa.size, a.size))
                blocks[i][j] = _like(reshape(piece, oa.shape + a.shape), a)
                start += oa.size
        res = _assemble(out_tree, in_tree, single, blocks)
        if has_aux:
            return res, tree_unflatten(aux_tree, p_out[n:])
        return res

    return jac


jacobian = jacrev


def hessian(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """The Hessian, forward-over-reverse: jacfwd(jacrev(fun)).

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> funcad.hessian(lambda x: fnp.sum(x ** 3))(np.array([1.0, 2.0]))
    Array([[ 6.,  0.],
           [ 0., 12.]], dtype=float64)
    """
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
