"""Sparse Jacobians and Hessians: the pattern read from the jaxpr, products compressed
by colouring.

`sparse_jacfwd(f)(x)` traces `f` at the shape of `x`, reads which outputs depend on
which inputs (`_interp.propagate` with the rules of `rules.py`), colours the
columns of that pattern so that columns of one colour share no row, pushes one
tangent per colour through `vmap(jvp(f))` and reads each Jacobian entry from the
compressed product. `sparse_jacrev` does the same with rows and `vjp`;
`sparse_hessian` uses a star colouring of the symmetric Hessian pattern and
Hessian-vector products (forward over reverse). The pattern depends only on
shapes (and on constants), so under `jit` it is found once per shape, at trace
time, and only the compressed products are compiled.

The Jacobian of f: R^(shape of x) -> R^(shape of y) is the (y.size, x.size) matrix
of the flattened (C order) input and output.
"""
from __future__ import annotations

from functools import wraps
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ...core.avals import ShapedArray, aval_of, tangent_dtype
from ...core.errors import FuncadTypeError
from ...core.pytree import tree_flatten
from ...core.staging import trace_to_jaxpr
from ...core.trace import Tracer
from ...primitives._base import zeros_tangent
from ...primitives.indexing import gather
from ...primitives.structural import reshape
from ..api import _check_diff_inputs, grad
from ..jvp import jvp_flat
from ..linearize import linearize_flat
from ..transpose import backward_pass
from ..vmap import vmap_flat
from . import rules as _rules  # noqa: F401  (fills the rule table)
from ._interp import Val, empty, identity, propagate
from .colouring import column_colouring, row_colouring, seed_matrix, star_colouring, star_sources
from .container import SparseMatrix

# ------------------------------------------------------------------ set-up ----


def _one_array_fun(fun, argnums, args, kwargs, name):
    """(x, f): the argument differentiated and `fun` as a function of it alone."""
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise FuncadTypeError(f"{name} takes one argument to differentiate (an int argnums), got "
                              f"argnums={argnums!r}; for several arrays, concatenate them into one")
    if not -len(args) <= argnums < len(args):
        raise FuncadTypeError(f"{name}: argnums={argnums} but the function was called with "
                              f"{len(args)} positional argument{'s' if len(args) != 1 else ''}")
    i = argnums % len(args)
    x = args[i]
    leaves, tree = tree_flatten(x)
    if len(leaves) != 1 or leaves[0] is not x:
        raise FuncadTypeError(f"{name} differentiates with respect to one array, but argument {i} is a "
                              f"{type(x).__name__} pytree; pass one array (concatenate its leaves) or use "
                              "funcad.jacfwd/jacrev for pytrees")
    _check_diff_inputs([x], name, False, False)

    def f(x_):
        full = list(args)
        full[i] = x_
        return fun(*full, **kwargs)

    return x, f


def _single_output(f, name):
    def flat_fun(x_):
        out = f(x_)
        leaves, _ = tree_flatten(out)
        if len(leaves) != 1 or leaves[0] is not out:
            raise FuncadTypeError(f"{name} needs a function returning one array, got a "
                                  f"{type(out).__name__} pytree; return one array (concatenate the "
                                  "outputs) or use funcad.jacfwd/jacrev for pytree outputs")
        return [out]
    return flat_fun


def _dependencies(flat_fun, x):
    """The (out.size, x.size) dependency pattern of flat_fun's one output on x, and its aval."""
    a = aval_of(x)
    closed = trace_to_jaxpr(flat_fun, [ShapedArray(a.shape, a.dtype, a.weak_type)], name="sparsity")
    n = a.size
    out, = propagate(closed.jaxpr, closed.consts, [Val(identity(n))], n)
    out_aval = closed.out_avals[0]
    pattern = empty(out_aval.size, n) if out.deps is None else sp.csr_array(out.deps, dtype=bool)
    pattern.sum_duplicates()
    pattern.sort_indices()
    return pattern, out_aval


# ---------------------------------------------------------------- patterns ----


def jacobian_sparsity(fun: Callable, argnums: int = 0) -> Callable:
    """The sparsity pattern of fun's Jacobian, read from its jaxpr: a boolean
    `scipy.sparse.csr_array` of shape (output size, input size), True wherever an
    output entry may depend on an input entry (for any input values).

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> P = funcad.jacobian_sparsity(lambda x: x[1:] - x[:-1])(np.zeros(4))
    >>> P.toarray().astype(int).tolist()
    [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]
    """
    @wraps(fun)
    def pattern(*args, **kwargs):
        x, f = _one_array_fun(fun, argnums, args, kwargs, "jacobian_sparsity")
        return _dependencies(_single_output(f, "jacobian_sparsity"), x)[0]
    return pattern


def _hessian_pattern(f, x):
    """Which input pairs interact nonlinearly: the dependency pattern of the gradient
    on the input, made symmetric."""
    g = grad(f)
    pattern, _ = _dependencies(lambda x_: [g(x_)], x)
    pattern = sp.csr_array(pattern + pattern.T, dtype=bool)
    pattern.sort_indices()
    return pattern


def hessian_sparsity(fun: Callable, argnums: int = 0) -> Callable:
    """The sparsity pattern of the Hessian of a scalar function: a symmetric boolean
    `scipy.sparse.csr_array` of shape (input size, input size), True wherever the
    second derivative may be nonzero (the pattern of the gradient's Jacobian).

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> P = funcad.hessian_sparsity(lambda x: fnp.sum(x[1:] * x[:-1]) + x[0] ** 3)(np.ones(3))
    >>> P.toarray().astype(int).tolist()
    [[1, 1, 0], [1, 0, 1], [0, 1, 0]]
    """
    @wraps(fun)
    def pattern(*args, **kwargs):
        x, f = _one_array_fun(fun, argnums, args, kwargs, "hessian_sparsity")
        return _hessian_pattern(f, x)
    return pattern


# --------------------------------------------------- compressed evaluation ----


def _entries(pattern):
    rows = np.repeat(np.arange(pattern.shape[0], dtype=np.int64), np.diff(pattern.indptr))
    return rows, pattern.indices.astype(np.int64)


def _seeds(colours, shape, dtype):
    """One seed per colour, shaped like the value it is pushed through: (colours, *shape)."""
    s = seed_matrix(colours).T
    return s.reshape((s.shape[0],) + tuple(shape)).astype(dtype)


def _result(x, data, rows, cols, shape):
    """A SparseMatrix when the input is traced (so also an empty one under jit), else scipy."""
    if isinstance(x, Tracer) or isinstance(data, Tracer):
        return SparseMatrix(data, rows, cols, shape)
    return sp.csr_array((np.asarray(data), (rows, cols)), shape=shape)


def _read(compressed, index, count, dtype):
    """Entries `index` of the flattened compressed product."""
    if not index.size:
        return np.zeros(0, dtype)
    flat = reshape(compressed, (count,))
    return gather(flat, index[:, None])


def _forward(flat_fun, x, pattern, colours, out_aval):
    m, n = pattern.shape
    rows, cols = _entries(pattern)
    k = int(colours.max()) + 1 if colours.size and rows.size else 0
    if k == 0:
        return _result(x, np.zeros(0, tangent_dtype(out_aval.dtype)), rows, cols, (m, n))

    def push(t):
        return jvp_flat(flat_fun, [x], [t])[1]

    seeds = _seeds(colours, aval_of(x).shape, tangent_dtype(aval_of(x).dtype))
    b, = vmap_flat(push, [seeds], [0], k)                    # (k, *y): J @ seed, one per colour
    return _result(x, _read(b, colours[cols] * m + rows, k * m, out_aval.dtype), rows, cols, (m, n))


def _reverse(flat_fun, x, pattern, colours, out_aval):
    m, n = pattern.shape
    rows, cols = _entries(pattern)
    k = int(colours.max()) + 1 if colours.size and rows.size else 0
    if k == 0:
        return _result(x, np.zeros(0, tangent_dtype(out_aval.dtype)), rows, cols, (m, n))
    _, linear = linearize_flat(flat_fun, [x])

    def pull(ct):
        r, = backward_pass(linear.jaxpr, linear.consts, [ct])
        return [zeros_tangent(x) if r is None else r]

    seeds = _seeds(colours, out_aval.shape, tangent_dtype(out_aval.dtype))
    c, = vmap_flat(pull, [seeds], [0], k)                    # (k, *x): seed @ J, one per colour
    return _result(x, _read(c, colours[rows] * n + cols, k * n, aval_of(x).dtype), rows, cols, (m, n))


# -------------------------------------------------------------------- API ----


def sparse_jacfwd(fun: Callable, argnums: int = 0) -> Callable:
    """The Jacobian of `fun` as a sparse matrix, by forward mode: one jvp per colour
    of a column colouring of its sparsity pattern (see jacobian_sparsity). The same
    values as `funcad.jacfwd`, reshaped to (output size, input size): a
    `scipy.sparse.csr_array` eagerly, a `funcad.SparseMatrix` under jit/vmap/grad.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> J = funcad.sparse_jacfwd(lambda x: x[1:] * x[:-1])(np.array([1.0, 2.0, 3.0]))
    >>> J.toarray().tolist()
    [[2.0, 1.0, 0.0], [0.0, 3.0, 2.0]]
    """
    @wraps(fun)
    def jac(*args, **kwargs):
        x, f = _one_array_fun(fun, argnums, args, kwargs, "sparse_jacfwd")
        flat_fun = _single_output(f, "sparse_jacfwd")
        pattern, out_aval = _dependencies(flat_fun, x)
        return _forward(flat_fun, x, pattern, column_colouring(pattern), out_aval)
    return jac


def sparse_jacrev(fun: Callable, argnums: int = 0) -> Callable:
    """The Jacobian of `fun` as a sparse matrix, by reverse mode: one vjp per colour
    of a row colouring of its sparsity pattern. Same values and result types as
    sparse_jacfwd.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> J = funcad.sparse_jacrev(lambda x: fnp.cumsum(x ** 2))(np.array([1.0, 2.0]))
    >>> J.toarray().tolist()
    [[2.0, 0.0], [2.0, 4.0]]
    """
    @wraps(fun)
    def jac(*args, **kwargs):
        x, f = _one_array_fun(fun, argnums, args, kwargs, "sparse_jacrev")
        flat_fun = _single_output(f, "sparse_jacrev")
        pattern, out_aval = _dependencies(flat_fun, x)
        return _reverse(flat_fun, x, pattern, row_colouring(pattern), out_aval)
    return jac


def sparse_jacobian(fun: Callable, argnums: int = 0, mode: str | None = None) -> Callable:
    """The sparse Jacobian of `fun`, by forward (`mode="fwd"`) or reverse (`"rev"`)
    mode; by default whichever needs fewer products (colours), forward on a tie.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> J = funcad.sparse_jacobian(lambda x: fnp.sum(x ** 2, keepdims=True))(np.ones(3))
    >>> J.toarray().tolist()   # one row: one vjp instead of three jvps
    [[2.0, 2.0, 2.0]]
    """
    if mode not in (None, "fwd", "rev"):
        raise FuncadTypeError(f"sparse_jacobian: mode must be 'fwd', 'rev' or None (choose by the "
                              f"number of colours), got {mode!r}")

    @wraps(fun)
    def jac(*args, **kwargs):
        x, f = _one_array_fun(fun, argnums, args, kwargs, "sparse_jacobian")
        flat_fun = _single_output(f, "sparse_jacobian")
        pattern, out_aval = _dependencies(flat_fun, x)
        fwd = column_colouring(pattern) if mode in (None, "fwd") else None
        rev = row_colouring(pattern) if mode in (None, "rev") else None
        if rev is None or (fwd is not None and _count(fwd) <= _count(rev)):
            return _forward(flat_fun, x, pattern, fwd, out_aval)
        return _reverse(flat_fun, x, pattern, rev, out_aval)
    return jac


def _count(colours) -> int:
    return int(colours.max()) + 1 if colours.size else 0


def sparse_hessian(fun: Callable, argnums: int = 0) -> Callable:
    """The Hessian of a scalar function as a sparse matrix of shape (x.size, x.size):
    one Hessian-vector product (forward over reverse) per colour of a star colouring
    of its symmetric sparsity pattern (see hessian_sparsity). The same values as
    `funcad.hessian`; a `scipy.sparse.csr_array` eagerly, a `funcad.SparseMatrix`
    under jit/vmap/grad.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> H = funcad.sparse_hessian(lambda x: fnp.sum(x[1:] * x[:-1] ** 2))(np.array([1.0, 2.0, 3.0]))
    >>> H.toarray().tolist()
    [[4.0, 2.0, 0.0], [2.0, 6.0, 4.0], [0.0, 4.0, 0.0]]
    """
    @wraps(fun)
    def hess(*args, **kwargs):
        x, f = _one_array_fun(fun, argnums, args, kwargs, "sparse_hessian")
        pattern = _hessian_pattern(f, x)
        colours = star_colouring(pattern)
        n = pattern.shape[0]
        rows, cols = _entries(pattern)
        dtype = tangent_dtype(aval_of(x).dtype)
        if not rows.size:
            return _result(x, np.zeros(0, dtype), rows, cols, (n, n))
        g = grad(f)

        def hvp(t):
            return jvp_flat(lambda x_: [g(x_)], [x], [t])[1]

        k = _count(colours)
        b, = vmap_flat(hvp, [_seeds(colours, aval_of(x).shape, dtype)], [0], k)  # (k, *x): (H @ seed).T
        src_row, src_colour = star_sources(pattern, colours)
        return _result(x, _read(b, src_colour * n + src_row, k * n, dtype), rows, cols, (n, n))
    return hess


def check_pattern(pattern, dense) -> tuple[int, int]:
    """Compare a sparsity pattern with a dense matrix computed at some input: returns
    (entries nonzero in `dense` but missing from the pattern, which must be 0; pattern
    entries that are numerically zero in `dense`)."""
    p = sp.csr_array(pattern, dtype=bool).toarray()
    nz = np.asarray(dense).reshape(p.shape) != 0
    return int(np.sum(nz & ~p)), int(np.sum(p & ~nz))
