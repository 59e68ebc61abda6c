"""The pytree functions built on core/pytree.py's registry: folds, transposes,
broadcasts, `Partial` and the registry object (`funcad.tree_util`, `funcad.tree`).

>>> tree_reduce(lambda a, b: a + b, {"a": 1, "b": (2, 3)})
6
"""
import dataclasses as _dataclasses
import functools as _functools
from typing import Any as _Any, Callable as _Callable, Iterable as _Iterable, TypeVar as _TypeVar

from .pytree import (PyTreeDef, PyTreeError, _node_of, flatten_up_to as _flatten_up_to,
                     is_tree_node, one_level as _one_level, register_dataclass, register_pytree_node,
                     tree_flatten, tree_flatten_with_path, tree_leaves, tree_structure)

__all__ = ["KeyEntry", "KeyPath", "Partial", "all_leaves", "default_registry", "static", "tree_all",
           "tree_broadcast", "tree_reduce", "tree_reduce_associative", "tree_transpose"]

KeyEntry = _TypeVar("KeyEntry", bound=_Any)
KeyPath = tuple[KeyEntry, ...]


class _Unspecified:
    def __repr__(self):
        return "<unspecified>"


_UNSPECIFIED = _Unspecified()


def tree_reduce(function: _Callable, tree, initializer=_UNSPECIFIED,
                is_leaf: _Callable[[_Any], bool] | None = None):
    """Fold `function` over the leaves from left to right (as functools.reduce).

    >>> tree_reduce(lambda a, b: a + b, {"a": 1, "b": (2, 3)}, 10)
    16
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _UNSPECIFIED:
        return _functools.reduce(function, leaves)
    return _functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation: _Callable, tree, *, identity=_UNSPECIFIED,
                            is_leaf: _Callable[[_Any], bool] | None = None):
    """Reduce the leaves with an associative `operation` as a balanced binary tree
    (halves first, as JAX does); `identity` is the result for no leaves.

    >>> tree_reduce_associative(lambda a, b: a + b, [1, 2, 3, 4])
    10
    """
    def reduce(xs):
        if len(xs) == 1:
            return xs[0]
        mid = len(xs) // 2
        return operation(reduce(xs[:mid]), reduce(xs[mid:]))

    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _UNSPECIFIED:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return reduce(leaves)


def tree_all(tree, *, is_leaf: _Callable[[_Any], bool] | None = None) -> bool:
    """Whether every leaf is truthy.

    >>> tree_all([True, (1, {"a": True})]), tree_all([True, (0,)])
    (True, False)
    """
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose):
    """Turn a pytree of structure outer-of-inner into inner-of-outer
    (`inner_treedef` None: the structure of the first outer leaf).

    >>> outer, inner = tree_structure([0, 0]), tree_structure((0, 0))
    >>> tree_transpose(outer, inner, [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    flat = _flatten_up_to(outer_treedef, pytree_to_transpose, "tree_transpose")
    if inner_treedef is None:
        if not flat:
            raise PyTreeError("tree_transpose: cannot infer inner_treedef from an outer tree "
                              "without leaves; pass inner_treedef")
        inner_treedef = tree_structure(flat[0])
    cols = [_flatten_up_to(inner_treedef, x, "tree_transpose") for x in flat]
    if not cols:
        cols_t = [[] for _ in range(inner_treedef.num_leaves)]
    else:
        cols_t = list(zip(*cols))
    return inner_treedef.unflatten(outer_treedef.unflatten(col) for col in cols_t)


def tree_broadcast(prefix_tree, full_tree, is_leaf: _Callable[[_Any], bool] | None = None):
    """Repeat each leaf of `prefix_tree` over the matching subtree of `full_tree`.

    >>> tree_broadcast([1, {"a": 2}], [[3, 4], {"a": (5, 6)}])
    [[1, 1], {'a': (2, 2)}]
    """
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = _flatten_up_to(treedef, full_tree, "tree_broadcast (prefix_tree must be a prefix "
                                                 "of full_tree)")
    out: list = []
    for x, sub in zip(leaves, subtrees):
        out.extend([x] * tree_structure(sub).num_leaves)
    return tree_structure(full_tree).unflatten(out)


def all_leaves(iterable: _Iterable, is_leaf: _Callable[[_Any], bool] | None = None) -> bool:
    """Whether every element is a leaf (not a pytree node; None is a node).

    >>> all_leaves([1, 2.0]), all_leaves([1, (2,)]), all_leaves([None])
    (True, False, False)
    """
    items = list(iterable)
    if is_leaf is None:
        return all(_node_of(type(x)) is None for x in items)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


class _CallableShim:
    """Wraps a functools.partial given to Partial, so that functools does not
    merge its arguments into the Partial's (they are not pytree children)."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        return self.fun == (other.fun if isinstance(other, _CallableShim) else other)

    def __repr__(self):
        return f"_CallableShim({self.fun!r})"


class Partial(_functools.partial):
    """functools.partial as a pytree: the bound arguments are children (traced
    under transformations), the function is static aux data.

    >>> import funcad, funcad.numpy as fnp
    >>> add_one = Partial(fnp.add, 1.0)
    >>> funcad.jit(lambda f, x: f(x))(add_one, 2.0)
    Array(3., dtype=float64)
    """

    def __new__(cls, func, *args, **kwargs):
        if isinstance(func, _functools.partial):
            shim = _CallableShim(func)
            out = super().__new__(cls, shim, *args, **kwargs)
            shim.func, shim.args, shim.keywords = func.func, func.args, func.keywords
            return out
        return super().__new__(cls, func, *args, **kwargs)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, c: Partial(func, *c[0], **c[1]))


class _PyTreeRegistry:
    """The pytree node registry (`default_registry`), with JAX's methods."""

    def flatten(self, tree, leaf_predicate: _Callable | None = None):
        return tree_flatten(tree, leaf_predicate)

    def flatten_with_path(self, tree, leaf_predicate: _Callable | None = None):
        """`leaf_predicate(path, x)` stops the descent where it is true."""
        return tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

    def flatten_one_level(self, tree):
        """(children, aux data), or None for a leaf."""
        return _one_level(tree)

    def flatten_one_level_with_keys(self, tree):
        return _one_level(tree, with_keys=True)

    def is_node(self, type: type) -> bool:  # noqa: A002 (JAX's parameter name)
        return is_tree_node(type)

    def register_node(self, type, to_iterable, from_iterable, to_iterable_with_keys=None):  # noqa: A002
        register_pytree_node(type, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, type, data_fields, meta_fields):  # noqa: A002
        register_dataclass(type, data_fields, meta_fields)

    def __repr__(self):
        return "<funcad pytree registry>"


default_registry = _PyTreeRegistry()


def static(**kwargs):
    """A dataclass field marked static for `register_dataclass` (arguments as
    `dataclasses.field`): it becomes aux data, not a leaf.

    >>> import dataclasses, funcad
    >>> @funcad.tree_util.register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: float
    ...     act: str = funcad.tree.static(default="relu")
    >>> funcad.tree.leaves(Layer(1.0))
    [1.0]
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return _dataclasses.field(metadata=metadata, **kwargs)
