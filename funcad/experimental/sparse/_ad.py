"""Sparse-aware grad, value_and_grad, jacfwd, jacrev: derivatives with respect to a BCOO
argument are taken in the subspace of its stored entries (its `data`) and returned as BCOO
arrays with the argument's indices, as JAX's `jax.experimental.sparse.grad` does."""
from __future__ import annotations

import functools
import operator
from typing import Callable, Sequence

from ...core.pytree import tree_flatten, tree_leaves, tree_unflatten
from ...core.traceback_util import boundary_transform
from ...transforms.api import grad as _grad, value_and_grad as _value_and_grad
from ...transforms.jacobians import jacfwd as _jacfwd, jacrev as _jacrev
from ...transforms.vmap import vmap
from ._base import JAXSparse

__all__ = ["grad", "value_and_grad", "jacfwd", "jacrev", "jacobian"]


def _is_sparse(x) -> bool:
    return isinstance(x, JAXSparse)


def _argnums_tuple(argnums) -> tuple:
    if isinstance(argnums, int) or hasattr(argnums, "__index__"):
        return (operator.index(argnums),)
    return tuple(operator.index(a) for a in argnums)


def _flatten_for_sparse_ad(fun, argnums, args):
    """(flat function of buffers, flat argnums (data buffer only for sparse args),
    flat buffers, function mapping the flat gradients back to sparse/dense gradients)."""
    nums = _argnums_tuple(argnums)
    for a in nums:
        if not 0 <= a < len(args):
            raise ValueError(f"argnums {nums} out of range for {len(args)} positional arguments.")
    per_arg = [tree_flatten(a, is_leaf=_is_sparse) for a in args]
    leaves1, tree1 = tree_flatten(args, is_leaf=_is_sparse)
    start, nums1 = 0, []
    for i, (lv, _) in enumerate(per_arg):
        if i in nums:
            nums1 += list(range(start, start + len(lv)))
        start += len(lv)
    args_flat, tree2 = tree_flatten(leaves1)
    nums2, pos = [], 0
    for i, leaf in enumerate(leaves1):
        n = len(tree_leaves(leaf))
        if i in nums1:
            nums2 += [pos] if _is_sparse(leaf) else list(range(pos, pos + n))
        pos += n

    def fun_flat(*flat, **kwargs):
        return fun(*tree_unflatten(tree1, tree_unflatten(tree2, list(flat))), **kwargs)

    def reconstruct(i, g):
        bufs, tree = tree_flatten(leaves1[i])
        f = lambda d: tree_unflatten(tree, [d, *bufs[1:]])
        for _ in range(g.ndim - bufs[0].ndim):
            f = vmap(f)
        return f(g)

    def post(grads):
        out = [None] * len(leaves1)
        for i, g in zip(nums1, grads):
            out[i] = reconstruct(i, g)
        tree = tree_unflatten(tree1, out)
        tree = tuple(t for t in tree if tree_leaves(t))
        return tree[0] if len(tree) == 1 else tree

    return fun_flat, tuple(nums2), args_flat, post


def _make(transform, name):
    def wrapper(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                **kwargs) -> Callable:
        @functools.wraps(fun)
        def wrapped(*args, **kw):
            fun_flat, nums, flat, post = _flatten_for_sparse_ad(fun, argnums, args)
            out = transform(functools.partial(fun_flat, **kw), argnums=nums, has_aux=has_aux,
                            **kwargs)(*flat)
            if name == "value_and_grad":
                (val, g) = out
                return val, post(g)
            if has_aux:
                return post(out[0]), out[1]
            return post(out)
        return wrapped
    wrapper.__name__ = name
    return wrapper


grad = _make(boundary_transform(_grad), "grad")
grad.__doc__ = """Sparse-aware `funcad.grad`: the gradient with respect to a BCOO argument is
a BCOO array with the argument's indices (the derivative in its stored entries).

>>> import numpy as np
>>> from funcad.experimental import sparse
>>> X = sparse.BCOO.fromdense(np.arange(6.))
>>> g = sparse.grad(lambda X, y: X @ y)(X, np.ones(6))
>>> g, g.data.tolist()
(BCOO(float64[6], nse=5), [1.0, 1.0, 1.0, 1.0, 1.0])
"""
value_and_grad = _make(boundary_transform(_value_and_grad), "value_and_grad")
value_and_grad.__doc__ = """Sparse-aware `funcad.value_and_grad` (see `grad`).

>>> import numpy as np
>>> from funcad.experimental import sparse
>>> X = sparse.BCOO.fromdense(np.arange(3.))
>>> v, g = sparse.value_and_grad(lambda X: (X * X).sum())(X)
>>> float(v), g.data.tolist()
(5.0, [2.0, 4.0])
"""
jacfwd = _make(boundary_transform(_jacfwd), "jacfwd")
jacfwd.__doc__ = """Sparse-aware `funcad.jacfwd` (dense outputs): the Jacobian with respect to
a BCOO argument is a BCOO array whose leading batch dimensions are the output's.

>>> import numpy as np
>>> from funcad.experimental import sparse
>>> X = sparse.BCOO.fromdense(np.array([1., 0., 2.]))
>>> sparse.jacfwd(lambda X: X @ np.ones(3) * np.ones(2))(X).shape
(2, 3)
"""
jacrev = _make(boundary_transform(_jacrev), "jacrev")
jacrev.__doc__ = """Sparse-aware `funcad.jacrev` (dense outputs); see `jacfwd`.

>>> import numpy as np
>>> from funcad.experimental import sparse
>>> X = sparse.BCOO.fromdense(np.array([1., 0., 2.]))
>>> sparse.jacrev(lambda X: X @ np.ones(3) * np.ones(2))(X).data.tolist()
[[1.0, 1.0], [1.0, 1.0]]
"""
jacobian = jacrev
