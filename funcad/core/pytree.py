"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered types."""
from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable, Iterable

from .errors import FuncadError


class PyTreeError(FuncadError, ValueError):
    """Two pytrees that should match do not."""


# type -> (flatten(x) -> (children, aux), unflatten(aux, children) -> x)
_registry: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Teach funcad to look inside `cls`.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    """
    _registry[cls] = (flatten, unflatten)


def register_pytree_node_class(cls):
    """Class decorator: `cls.tree_flatten()` and `cls.tree_unflatten(aux, children)`."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(cls, data_fields=None, meta_fields=None):
    """Register a dataclass: `data_fields` are children, `meta_fields` static aux data."""
    fields = [f.name for f in dataclasses.fields(cls)]
    data = list(data_fields) if data_fields is not None else [f for f in fields if f not in (meta_fields or ())]
    meta = list(meta_fields or [f for f in fields if f not in data])

    def flatten(x):
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten(aux, children):
        return cls(**dict(zip(data, children)), **dict(zip(meta, aux)))

    register_pytree_node(cls, flatten, unflatten)
    return cls


register_pytree_node(tuple, lambda x: (x, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda x: (x, None), lambda _, c: list(c))
register_pytree_node(type(None), lambda x: ((), None), lambda _, c: None)
register_pytree_node(dict, lambda x: ([x[k] for k in sorted(x)], tuple(sorted(x))),
                     lambda keys, c: dict(zip(keys, c)))
register_pytree_node(collections.OrderedDict, lambda x: (list(x.values()), tuple(x)),
                     lambda keys, c: collections.OrderedDict(zip(keys, c)))
register_pytree_node(collections.defaultdict,
                     lambda x: ([x[k] for k in sorted(x)], (x.default_factory, tuple(sorted(x)))),
                     lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)))


def _node_kind(x):
    t = type(x)
    if t in _registry:
        return t
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return "namedtuple"
    return None


class PyTreeDef:
    """The structure of a pytree, with leaves left out."""

    __slots__ = ("kind", "aux", "children", "num_leaves")

    def __init__(self, kind, aux, children):
        self.kind, self.aux, self.children = kind, aux, tuple(children)
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in self.children)

    def _key(self):
        return (self.kind, self.aux, self.children)

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self):
        return hash((self.kind, self.aux, self.children))

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self):
        if self.kind is None:
            return "*"
        kids = [c._str() for c in self.children]
        if self.kind is tuple:
            return f"({', '.join(kids)}{',' if len(kids) == 1 else ''})"
        if self.kind is list:
            return f"[{', '.join(kids)}]"
        if self.kind is type(None):
            return "None"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, kids)) + "}"
        if self.kind == "namedtuple":
            return f"{self.aux.__name__}({', '.join(f'{f}={v}' for f, v in zip(self.aux._fields, kids))})"
        name = getattr(self.kind, "__name__", str(self.kind))
        return f"CustomNode({name}[{self.aux!r}], [{', '.join(kids)}])"


_LEAF = PyTreeDef(None, None, ())


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None):
    """Split a pytree into (leaves, treedef).

    >>> tree_flatten({"b": 2, "a": (1, None)})
    ([1, 2], PyTreeDef({'a': (*, None), 'b': *}))
    """
    leaves: list = []
    treedef = _flatten(tree, is_leaf, leaves)
    return leaves, treedef


def _flatten(x, is_leaf, leaves):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    kind = _node_kind(x)
    if kind is None:
        leaves.append(x)
        return _LEAF
    if kind == "namedtuple":
        children, aux = list(x), type(x)
    else:
        children, aux = _registry[kind][0](x)
    return PyTreeDef(kind, aux, [_flatten(c, is_leaf, leaves) for c in children])


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable):
    """Rebuild a pytree of structure `treedef` from its leaves."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise PyTreeError(f"tree structure {treedef} needs {treedef.num_leaves} leaves, got {len(leaves)}")
    it = iter(leaves)
    return _unflatten(treedef, it)


def _unflatten(td, it):
    if td.kind is None:
        return next(it)
    children = [_unflatten(c, it) for c in td.children]
    if td.kind == "namedtuple":
        return td.aux(*children)
    return _registry[td.kind][1](td.aux, children)


def tree_leaves(tree, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf=None):
    """Apply `f` leaf-wise to one or more pytrees of the same structure.

    >>> tree_map(lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)})
    {'x': 11, 'y': (22, 33)}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [flatten_up_to(treedef, r, "tree_map") for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


def flatten_up_to(treedef: PyTreeDef, tree, what: str = "argument") -> list:
    """Flatten `tree` down to the structure of `treedef` (its leaves may be subtrees)."""
    out: list = []

    def go(td, x, path):
        if td.kind is None:
            out.append(x)
            return
        kind = _node_kind(x)
        if kind != td.kind:
            raise PyTreeError(f"{what}: expected a pytree of structure {treedef}, got {tree_structure(tree)} "
                              f"(mismatch at {path or 'the root'}: expected {td._str()}, got {type(x).__name__})")
        children, aux = (list(x), type(x)) if kind == "namedtuple" else _registry[kind][0](x)
        if aux != td.aux or len(children) != len(td.children):
            raise PyTreeError(f"{what}: expected a pytree of structure {treedef}, got {tree_structure(tree)} "
                              f"(mismatch at {path or 'the root'})")
        for i, (c, ctd) in enumerate(zip(children, td.children)):
            key = td.aux[i] if td.kind is dict else i
            go(ctd, c, f"{path}[{key!r}]")

    go(treedef, tree, "")
    return out


def tree_all(tree) -> bool:
    return all(tree_leaves(tree))


def tree_reduce(f: Callable, tree, *initial):
    import functools
    return functools.reduce(f, tree_leaves(tree), *initial)


def tree_transpose(outer: PyTreeDef, inner: PyTreeDef, tree):
    """Turn a pytree of structure outer-of-inner into inner-of-outer."""
    flat = flatten_up_to(outer, tree, "tree_transpose")
    cols = [flatten_up_to(inner, x, "tree_transpose") for x in flat]
    return inner.unflatten(outer.unflatten(col) for col in zip(*cols))
