"""sparsify: run a function written with funcad.numpy on BCOO arguments.

The function is traced on dense stand-ins (the BCOO arrays' shapes and dtypes) into a
jaxpr; an interpreter then evaluates it with a value per variable that is either a dense
array or a BCOO array. An equation with only dense inputs binds its primitive; one with a
sparse input runs the primitive's rule in `sparse_rules` (a BCOO result where the
operation preserves sparsity), or raises naming the primitive. The rules are funcad code,
so a sparsified function works under jit, vmap and grad.
"""
from __future__ import annotations

import functools

import numpy as np

import funcad.numpy as fnp
from ...core.avals import ShapedArray, aval_of
from ...core.ir import Literal
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.staging import trace_to_jaxpr
from ...primitives import bits as _bits, elementwise as _E, indexing as _indexing, linalg as _linalg
from ...primitives import reductions as _R, special as _special, structural as _S
from ...transforms.checkpoint import checkpoint_p
from ...transforms.control_flow import cond_p, while_p
from ...transforms.custom_calls import custom_jvp_call_p
from ...transforms.closed_call import closed_call_p
from ...transforms.jit import jit_p
from ._base import JAXSparse
from ._bcoo import BCOO, bcoo_sum_duplicates
from ._bcoo_dot import bcoo_dot_general, bcoo_multiply_dense, bcoo_multiply_sparse
from ._bcsr import BCSR, bcsr_broadcast_in_dim, bcsr_concatenate, bcsr_dot_general
from ._bcoo_shape import (bcoo_broadcast_in_dim, bcoo_concatenate, bcoo_dynamic_slice,
                          bcoo_reduce_sum, bcoo_reshape, bcoo_rev, bcoo_slice, bcoo_squeeze,
                          bcoo_transpose)
from ...lax import switch, while_loop

__all__ = ["sparsify", "sparse_rules"]

sparse_rules: dict = {}   # primitive -> rule(*values, **params) -> list of outputs
bcsr_rules: dict = {}     # the same for equations with a BCSR input

_DENSIFYING = {"acos", "acosh", "bessel_i0e", "cos", "cosh", "eq", "exp", "exp2", "ge", "gt",
               "le", "lt", "log", "log2", "ne", "xor"}


def _unimplemented(name: str):
    if name in _DENSIFYING:
        raise NotImplementedError(
            f"sparse rule for {name} is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to dense matrices.")
    raise NotImplementedError(f"sparse rule for {name} is not implemented. Convert the "
                              "argument with sparse.todense() before this operation.")


def _is_sparse(x) -> bool:
    return isinstance(x, JAXSparse)


def eval_sparse(jaxpr, consts, args):
    """Evaluate `jaxpr` on a mix of dense and BCOO values."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[id(v)] = x
    for v, x in zip(jaxpr.invars, args):
        env[id(v)] = x

    def read(a):
        return a.val if type(a) is Literal else env[id(a)]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.inputs]
        name = eqn.prim.name
        if any(isinstance(x, BCSR) for x in ins):
            rule = bcsr_rules.get(eqn.prim)
            if rule is None:
                _unimplemented(name + " with a BCSR operand")
            outs = rule(*ins, **eqn.params)
        elif any(_is_sparse(x) for x in ins):
            rule = sparse_rules.get(eqn.prim)
            if rule is None:
                _unimplemented(name)
            outs = rule(*ins, **eqn.params)
        else:
            out = eqn.prim.bind(*ins, **eqn.params)
            outs = out if eqn.prim.multiple_results else [out]
        for v, x in zip(eqn.outvars, outs):
            env[id(v)] = x
    return [read(a) for a in jaxpr.outvars]


def _aval(x) -> ShapedArray:
    if _is_sparse(x):
        return ShapedArray(tuple(x.shape), np.dtype(x.dtype))
    return aval_of(x)


def sparsify(f, use_tracer: bool = False):
    """Make `f` (written for dense arrays with funcad.numpy / funcad.lax) accept BCOO
    arrays anywhere in its arguments; operations that preserve sparsity return BCOO.

    `use_tracer` is accepted for JAX compatibility: both of JAX's implementations give the
    same results, and funcad always uses the jaxpr interpreter.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> @sparse.sparsify
    ... def f(M, v):
    ...     return 2 * M.T @ v
    >>> M = sparse.BCOO.fromdense(np.arange(12.).reshape(3, 4))
    >>> f(M, np.array([3., 4., 2.])).tolist()
    [64.0, 82.0, 100.0, 118.0]
    """
    @functools.wraps(f)
    def wrapped(*args, **params):
        leaves, in_tree = tree_flatten(args, is_leaf=_is_sparse)
        avals = [_aval(x) for x in leaves]
        out_tree = []

        def flat_fun(*flat):
            out = f(*tree_unflatten(in_tree, flat), **params)
            out_leaves, tree = tree_flatten(out)
            out_tree.append(tree)
            return out_leaves

        closed = trace_to_jaxpr(flat_fun, avals, name="sparsify")
        outs = eval_sparse(closed.jaxpr, closed.consts, leaves)
        return tree_unflatten(out_tree[0], outs)

    return wrapped


# ------------------------------------------------------------------------ rules ----

def _rule(*prims):
    def register(fn):
        for p in prims:
            sparse_rules[p] = fn
        return fn
    return register


def _like(mat: BCOO, data, **kw) -> BCOO:
    return BCOO((data, mat.indices), shape=kw.get("shape", mat.shape),
                indices_sorted=mat.indices_sorted, unique_indices=mat.unique_indices)


def _unique(mat: BCOO) -> BCOO:
    """Duplicates summed (same nse) before a nonlinear elementwise op."""
    if mat.unique_indices:
        return mat
    return bcoo_sum_duplicates(mat, nse=mat.nse)


def _unary(prim, linear):
    def rule(x, **params):
        mat = x if linear else _unique(x)
        return [_like(mat, prim.bind(mat.data, **params))]
    return rule


# Elementwise ops that keep zeros zero: nonlinear ones act on each stored value once
# (duplicates summed first), linear ones on the stored values as they are.
_NONLINEAR = (_E.abs_p, _E.asin_p, _E.asinh_p, _E.atan_p, _E.atanh_p, _special.bessel_i1e_p, _E.expm1_p,
              _E.log1p_p, _E.sign_p, _E.sin_p, _E.sinh_p, _E.sqrt_p, _E.tan_p, _E.tanh_p, _E.erf_p,
              _E.cbrt_p, _E.erf_inv_p, _E.floor_p, _E.ceil_p, _E.round_p)
_LINEAR = (_E.neg_p, _E.convert_element_type_p, _E.real_p, _E.imag_p, _E.conj_p, _bits.reduce_precision_p)
for _p in _NONLINEAR + _LINEAR:
    sparse_rules[_p] = _unary(_p, _p in _LINEAR)


@_rule(_E.integer_pow_p)
def _integer_pow(x, *, y):
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for integer_pow with non-positive exponent {y} is not implemented "
            "because it would result in dense output. If this is your intent, use "
            "sparse.todense() to convert your argument to a dense array.")
    mat = _unique(x)
    return [_like(mat, mat.data ** y)]


@_rule(_linalg.dot_general_p)
def _dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None,
                 **_):
    return [bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                             preferred_element_type=preferred_element_type)]


@_rule(_S.transpose_p)
def _transpose(x, *, permutation):
    return [bcoo_transpose(x, permutation=permutation)]


@_rule(_S.reshape_p)
def _reshape(x, *, new_sizes, dimensions=None, **_):
    new_sizes = tuple(new_sizes)
    # inserting unit dimensions in front keeps the storage: they become batch dimensions
    k = len(new_sizes) - x.ndim
    if k > 0 and new_sizes[:k] == (1,) * k and new_sizes[k:] == tuple(x.shape):
        return [bcoo_broadcast_in_dim(x, shape=new_sizes,
                                      broadcast_dimensions=tuple(range(k, len(new_sizes))))]
    return [bcoo_reshape(x, new_sizes=new_sizes, dimensions=dimensions)]


@_rule(_S.squeeze_p)
def _squeeze(x, *, dimensions):
    return [bcoo_squeeze(x, dimensions=dimensions)]


@_rule(_S.rev_p)
def _rev(x, *, dimensions):
    return [bcoo_rev(x, dimensions)]


@_rule(_S.slice_p)
def _slice(x, *, start_indices, limit_indices, strides=None):
    return [bcoo_slice(x, start_indices=start_indices, limit_indices=limit_indices,
                       strides=strides)]


@_rule(_indexing.dynamic_slice_p)
def _dynamic_slice(x, *starts, slice_sizes):
    if any(_is_sparse(s) for s in starts):
        _unimplemented("dynamic_slice with sparse start indices")
    return [bcoo_dynamic_slice(x, starts, slice_sizes)]


@_rule(_S.broadcast_in_dim_p)
def _broadcast_in_dim(x, *, shape, broadcast_dimensions, **_):
    return [bcoo_broadcast_in_dim(x, shape=shape, broadcast_dimensions=broadcast_dimensions)]


@_rule(_S.concatenate_p)
def _concatenate(*xs, dimension):
    if not all(_is_sparse(x) for x in xs):
        raise NotImplementedError("sparse rule for concatenate of sparse and dense arrays is not "
                                  "implemented. Convert the dense operands with "
                                  "BCOO.fromdense or the sparse ones with todense().")
    return [bcoo_concatenate(xs, dimension=dimension)]


@_rule(_R.reduce_sum_p)
def _reduce_sum(x, *, axes, **_):
    mat = bcoo_reduce_sum(x, axes=axes)
    if mat.shape == ():
        return [mat.data.sum()]
    return [mat]


@_rule(_E.add_p)
def _add(x, y):
    if _is_sparse(x) and _is_sparse(y):
        if x.shape != y.shape:
            raise NotImplementedError("Addition between sparse matrices of different shapes.")
        if x.indices is y.indices:
            return [_like(x, x.data + y.data)]
        if x.indices.ndim != y.indices.ndim or x.data.ndim != y.data.ndim:
            raise NotImplementedError("Addition between sparse matrices with different "
                                      "batch/dense dimensions.")
        nb = x.n_batch
        bshape = tuple(x.shape[:nb])
        xi, yi = (fnp.broadcast_to(m.indices, bshape + tuple(m.indices.shape[nb:])) for m in (x, y))
        xd, yd = (fnp.broadcast_to(m.data, bshape + tuple(m.data.shape[nb:])) for m in (x, y))
        return [BCOO((fnp.concatenate([xd, yd], axis=nb), fnp.concatenate([xi, yi], axis=nb)),
                     shape=x.shape)]
    sp, de = (x, y) if _is_sparse(x) else (y, x)
    de = fnp.asarray(de)
    if tuple(de.shape) != tuple(np.broadcast_shapes(sp.shape, de.shape)):
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when "
            "the output shape is larger than Y.shape. This is to prevent silent densification "
            "of a large sparse array. If this is your intent, you can explicitly cast the "
            "sparse array to a dense matrix.")
    return [sp.todense() + de if sp is x else de + sp.todense()]


@_rule(_E.sub_p)
def _sub(x, y):
    if _is_sparse(x) and _is_sparse(y):
        return _add(x, _like(y, -y.data))
    raise NotImplementedError("Subtraction between sparse and dense array.")


@_rule(_E.mul_p)
def _mul(x, y):
    if _is_sparse(x) and _is_sparse(y):
        if x.indices is y.indices and x.unique_indices:
            return [_like(x, x.data * y.data)]
        return [bcoo_multiply_sparse(x, y)]
    sp, de = (x, y) if _is_sparse(x) else (y, x)
    return [_like(sp, bcoo_multiply_dense(sp, de))]


@_rule(_E.div_p)
def _div(x, y):
    if _is_sparse(y):
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to a dense array.")
    return [_like(x, bcoo_multiply_dense(x, 1. / fnp.asarray(y)))]


def _call_rule(param):
    def rule(*args, **params):
        closed = params[param]
        return eval_sparse(closed.jaxpr, closed.consts, args)
    return rule


sparse_rules[jit_p] = _call_rule("jaxpr")
sparse_rules[checkpoint_p] = _call_rule("jaxpr")
# a custom_jvp function is evaluated through its body (its values are the same; the
# body's own derivative is used for the sparse values)
sparse_rules[custom_jvp_call_p] = _call_rule("call_jaxpr")
sparse_rules[closed_call_p] = _call_rule("call_jaxpr")


# BCSR: the operations JAX's sparsify has BCSR rules for
bcsr_rules[_linalg.dot_general_p] = lambda lhs, rhs, *, dimension_numbers, preferred_element_type=None, **_: [
    bcsr_dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                     preferred_element_type=preferred_element_type)]
bcsr_rules[_S.broadcast_in_dim_p] = lambda x, *, shape, broadcast_dimensions, **_: [
    bcsr_broadcast_in_dim(x, shape=shape, broadcast_dimensions=broadcast_dimensions)]
bcsr_rules[_S.concatenate_p] = lambda *xs, dimension: [bcsr_concatenate(xs, dimension=dimension)]
for _p in (jit_p, checkpoint_p, closed_call_p, custom_jvp_call_p):
    bcsr_rules[_p] = sparse_rules[_p]


# control flow: the sparsified bodies are traced again by funcad.lax's own cond/while,
# with the BCOO operands as pytrees (so a BCOO carry keeps its nse, as in JAX)
def _cond_rule(index, *ops, branches):
    if _is_sparse(index):
        _unimplemented("cond with a sparse predicate")
    fns = [lambda *xs, br=br: list(eval_sparse(br.jaxpr, br.consts, xs)) for br in branches]
    return switch(index, fns, *ops)


def _while_rule(*ins, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps=None):
    cc, bc = ins[:cond_nconsts], ins[cond_nconsts:cond_nconsts + body_nconsts]
    init = list(ins[cond_nconsts + body_nconsts:])
    cond = lambda carry: eval_sparse(cond_jaxpr.jaxpr, cond_jaxpr.consts, [*cc, *carry])[0]
    body = lambda carry: list(eval_sparse(body_jaxpr.jaxpr, body_jaxpr.consts, [*bc, *carry]))
    return list(while_loop(cond, body, init, max_steps=max_steps))


sparse_rules[cond_p] = _cond_rule
sparse_rules[while_p] = _while_rule
