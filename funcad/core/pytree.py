"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered types.

A node type's registry entry splits a value into children and aux data
(static data, compared with ==). A PyTreeDef records node types and aux data
with the leaves left out. Aux data need not be hashable (JAX accepts a dict
or a list there): a PyTreeDef hashes the aux data it can and compares all of
it with ==, so structures with equal aux data are equal keys of jit's cache.

Key paths (`tree_flatten_with_path`) name each leaf by the keys that lead to
it: SequenceKey for tuples and lists, DictKey for dicts, GetAttrKey for
namedtuple and dataclass fields, FlattenedIndexKey for nodes registered
without keys.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable, Iterable, NamedTuple

from .errors import FuncadError


class PyTreeError(FuncadError, ValueError):
    """Two pytrees that should match do not."""


# --------------------------------------------------------------------- keys ----

class _Key:
    __slots__ = ()

    def _val(self):
        return getattr(self, self.__slots__[0])

    def __eq__(self, other):
        return type(other) is type(self) and self._val() == other._val()

    def __hash__(self):
        return hash((type(self).__name__, self._val()))

    def __repr__(self):
        return f"{type(self).__name__}({self.__slots__[0]}={self._val()!r})"


class SequenceKey(_Key):
    """The position of a child in a tuple or list: prints as `[0]`."""
    __slots__ = ("idx",)
    __match_args__ = ("idx",)

    def __init__(self, idx: int):
        self.idx = idx

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(_Key):
    """The key of a child in a dict: prints as `['a']`."""
    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(_Key):
    """The attribute of a child (namedtuple or dataclass field): prints as `.name`."""
    __slots__ = ("name",)
    __match_args__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_Key):
    """The position of a child of a node registered without keys."""
    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key: int):
        self.key = key

    def __str__(self):
        return f"[<flat index {self.key}>]"


# ----------------------------------------------------------------- registry ----

class _Node(NamedTuple):
    flatten: Callable          # x -> (children, aux)
    unflatten: Callable        # (aux, children) -> x
    flatten_with_keys: Callable  # x -> ([(key, child)], aux)


_registry: dict[type, _Node] = {}
_namedtuple_nodes: dict[type, _Node] = {}


def _keys_by_index(flatten):
    def flatten_with_keys(x):
        children, aux = flatten(x)
        return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux
    return flatten_with_keys


def _children_of(flatten_with_keys):
    def flatten(x):
        pairs, aux = flatten_with_keys(x)
        return [c for _, c in pairs], aux
    return flatten


def _add(nodetype: type, flatten, unflatten, flatten_with_keys) -> None:
    if not isinstance(nodetype, type):
        raise TypeError(f"pytree registration expects a type, got {nodetype!r}")
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = _Node(flatten, unflatten, flatten_with_keys or _keys_by_index(flatten))


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Teach funcad to look inside `nodetype`.

    `flatten_func(x) -> (children, aux_data)`, `unflatten_func(aux_data, children) -> x`;
    aux_data is static (it keys jit's cache and is compared with ==).

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    >>> tree_leaves(Pair(1, [2, 3]))
    [1, 2, 3]
    """
    _add(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable, unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Like `register_pytree_node`, with `flatten_with_keys(x) -> ([(key, child)], aux)`
    so that key paths name this node's children.

    >>> class Named:
    ...     def __init__(self, w): self.w = w
    >>> register_pytree_with_keys(Named, lambda n: ([(GetAttrKey("w"), n.w)], None),
    ...                           lambda _, c: Named(*c))
    >>> tree_flatten_with_path(Named(1.0))[0]
    [((GetAttrKey(name='w'),), 1.0)]
    """
    _add(nodetype, flatten_func or _children_of(flatten_with_keys), unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
    """Class decorator: `cls.tree_flatten()` and `cls.tree_unflatten(aux, children)`.

    >>> @register_pytree_node_class
    ... class Box:
    ...     def __init__(self, v): self.v = v
    ...     def tree_flatten(self): return (self.v,), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children): return cls(*children)
    >>> tree_leaves([Box(1), Box(2)])
    [1, 2]
    """
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: `cls.tree_flatten_with_keys()` (and optionally
    `cls.tree_flatten()`) and `cls.tree_unflatten(aux, children)`."""
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten, flatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass: `data_fields` are children, `meta_fields` static aux data.

    Without the field lists, every field of a dataclass is data unless marked
    with `funcad.tree.static()` (metadata `static=True`).

    >>> import dataclasses
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: float
    ...     b: float
    >>> tree_leaves(Layer(1.0, 2.0))
    [1.0, 2.0]
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be specified "
                            f"when either is specified. Got {data_fields=} {meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when "
                            f"nodetype is not a dataclass. Got {nodetype=}.")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data, meta = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        if {*data, *meta} != init:
            msg = "data_fields and meta_fields must include all dataclass fields with ``init=True`` and only them."
            if init - {*data, *meta}:
                msg += f" Missing fields: {init - {*data, *meta}}. Add them to drop_fields to suppress this error."
            if {*data, *meta} - init:
                msg += f" Unexpected fields: {({*data, *meta} - init)}."
            raise ValueError(msg)
    if set(data) & set(meta):
        raise ValueError(f"data_fields and meta_fields must not overlap. Overlapping fields: {set(data) & set(meta)}.")

    def flatten(x):
        return tuple(getattr(x, n) for n in data), tuple(getattr(x, n) for n in meta)

    def flatten_with_keys(x):
        return [(GetAttrKey(n), getattr(x, n)) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten(aux, children):
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))

    _add(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def register_static(cls):
    """Register `cls` as a pytree node with no leaves: its instances are static
    (aux data) under jit. They must be hashable.

    >>> @register_static
    ... class Mode(str): pass
    >>> tree_leaves([1, Mode("train")])
    [1]
    """
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def _sorted_keys(d) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError as e:
        raise PyTreeError(f"cannot flatten a dict whose keys cannot be sorted ({e}); pytree dicts "
                          "are flattened in sorted key order, so use keys of one comparable type "
                          "(or an OrderedDict, which keeps insertion order)") from None


def _dict_flatten(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _defaultdict_flatten(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


_add(tuple, lambda x: (x, None), lambda _, c: tuple(c),
     lambda x: ([(SequenceKey(i), c) for i, c in enumerate(x)], None))
_add(list, lambda x: (x, None), lambda _, c: list(c),
     lambda x: ([(SequenceKey(i), c) for i, c in enumerate(x)], None))
_add(type(None), lambda x: ((), None), lambda _, c: None, lambda x: ((), None))
_add(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)),
     lambda x: ([(DictKey(k), x[k]) for k in _sorted_keys(x)], _sorted_keys(x)))
_add(collections.OrderedDict, lambda x: (list(x.values()), tuple(x)),
     lambda keys, c: collections.OrderedDict(zip(keys, c)),
     lambda x: ([(DictKey(k), v) for k, v in x.items()], tuple(x)))
_add(collections.defaultdict, _defaultdict_flatten,
     lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)),
     lambda x: ([(DictKey(k), x[k]) for k in _sorted_keys(x)], (x.default_factory, _sorted_keys(x))))


def _namedtuple_node(t: type) -> _Node:
    node = _namedtuple_nodes.get(t)
    if node is None:
        fields = t._fields
        node = _namedtuple_nodes[t] = _Node(
            lambda x: (tuple(x), None), lambda _, c: t(*c),
            lambda x: ([(GetAttrKey(f), v) for f, v in zip(fields, x)], None))
    return node


def _node_of(t: type) -> _Node | None:
    node = _registry.get(t)
    if node is None and issubclass(t, tuple) and hasattr(t, "_fields"):
        return _namedtuple_node(t)
    return node


def is_tree_node(typ: type) -> bool:
    """Whether `typ` is a pytree node type (built in, registered, or a namedtuple).

    >>> is_tree_node(dict), is_tree_node(int)
    (True, False)
    """
    return isinstance(typ, type) and _node_of(typ) is not None


# ----------------------------------------------------------------- treedefs ----

_UNHASHABLE = 0x5EED  # the hash part of aux data that cannot be hashed


def _aux_hash(aux) -> int:
    try:
        return hash(aux)
    except TypeError:  # a dict or list: compared with == only
        return _UNHASHABLE


def _aux_equal(kind, a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception as e:  # an array: `==` gives no single truth value
        raise PyTreeError(
            f"cannot compare the aux data of two pytree nodes of type {kind.__name__} ({e}). Aux "
            "data is static metadata compared with ==; arrays cannot be aux data: make them "
            "children of the node instead") from None


class PyTreeDef:
    """The structure of a pytree, with leaves left out.

    >>> td = tree_structure({"a": [1, 2], "b": None})
    >>> td, td.num_leaves, td.num_nodes
    (PyTreeDef({'a': [*, *], 'b': None}), 2, 5)
    >>> td.unflatten([10, 20])
    {'a': [10, 20], 'b': None}
    """

    __slots__ = ("kind", "aux", "_kids", "num_leaves", "num_nodes", "_hash")

    def __init__(self, kind, aux, children):
        self.kind, self.aux, self._kids = kind, aux, tuple(children)
        leaves, nodes = (0, 1) if kind is not None else (1, 1)
        for c in self._kids:
            leaves += c.num_leaves
            nodes += c.num_nodes
        self.num_leaves, self.num_nodes = leaves, nodes
        self._hash = None

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if (self.kind is not other.kind or self.num_nodes != other.num_nodes
                or self.num_leaves != other.num_leaves or len(self._kids) != len(other._kids)):
            return False
        if self.aux is not other.aux and not _aux_equal(self.kind, self.aux, other.aux):
            return False
        for a, b in zip(self._kids, other._kids):
            if a is not b and not a == b:
                return False
        return True

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash((self.kind, _aux_hash(self.aux), self._kids))
        return h

    # -- JAX's PyTreeDef methods ---------------------------------------------
    def children(self) -> list:
        """The treedefs of the root's children."""
        return list(self._kids)

    def node_data(self):
        """(node type, aux data) of the root, or None for a leaf."""
        if self.kind is None:
            return None
        return (self.kind, list(self.aux) if self.kind is dict else self.aux)

    @staticmethod
    def from_node_data_and_children(registry, node_data, children: Iterable) -> "PyTreeDef":
        """Rebuild a treedef from `node_data()` and `children()` (registry: `default_registry`)."""
        children = list(children)
        if node_data is None:
            if children:
                raise PyTreeError("a leaf (node_data None) has no children")
            return _LEAF
        kind, aux = node_data
        if kind is dict:
            aux = tuple(aux)
        if _node_of(kind) is None:
            raise PyTreeError(f"{kind} is not a registered pytree node type")
        return PyTreeDef(kind, aux, children)

    def unflatten(self, leaves: Iterable):
        """Rebuild a pytree of this structure from its leaves."""
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of `tree` at this structure's leaves."""
        return flatten_up_to(self, tree, "flatten_up_to")

    def compose(self, inner: "PyTreeDef") -> "PyTreeDef":
        """This structure with every leaf replaced by `inner`."""
        if self.kind is None:
            return inner
        return PyTreeDef(self.kind, self.aux, [c.compose(inner) for c in self._kids])

    def walk(self, f_node: Callable, f_leaf: Callable | None, leaves: Iterable):
        """Fold over the tree: `f_leaf(leaf)` at leaves (None: the leaf itself),
        `f_node(tuple of children's results, aux data)` at nodes."""
        it = iter(leaves)

        def go(td):
            if td.kind is None:
                x = next(it)
                return x if f_leaf is None else f_leaf(x)
            return f_node(tuple(go(c) for c in td._kids), td.node_data()[1])
        return go(self)

    def from_iterable_tree(self, tree):
        """Build a pytree of this structure from nested iterables (one per node)."""
        if self.kind is None:
            return tree
        children = list(tree)
        if len(children) != len(self._kids):
            raise PyTreeError(f"Arity mismatch between trees: {self} has {len(self._kids)} "
                              f"children at its root, the iterable {len(children)}")
        return _node_of(self.kind).unflatten(
            self.aux, [c.from_iterable_tree(x) for c, x in zip(self._kids, children)])

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self):
        if self.kind is None:
            return "*"
        kids = [c._str() for c in self._kids]
        if self.kind is tuple:
            return f"({', '.join(kids)}{',' if len(kids) == 1 else ''})"
        if self.kind is list:
            return f"[{', '.join(kids)}]"
        if self.kind is type(None):
            return "None"
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, kids)) + "}"
        if self.kind not in _registry:  # a namedtuple
            return f"CustomNode(namedtuple[{self.kind.__name__}], [{', '.join(kids)}])"
        return f"CustomNode({self.kind.__name__}[{self.aux}], [{', '.join(kids)}])"


_LEAF = PyTreeDef(None, None, ())


# ---------------------------------------------------------------- flattening ----

def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None):
    """Split a pytree into (leaves, treedef). `is_leaf(x)` true stops the descent at x.

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
    t = type(x)
    node = _registry.get(t)
    if node is None:
        if not (issubclass(t, tuple) and hasattr(t, "_fields")):
            leaves.append(x)
            return _LEAF
        node = _namedtuple_node(t)
    children, aux = node.flatten(x)
    return PyTreeDef(t, aux, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten_with_path(tree, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False):
    """Like `tree_flatten`, with each leaf paired with its key path.

    >>> tree_flatten_with_path({"a": [1, 2]})[0]
    [((DictKey(key='a'), SequenceKey(idx=0)), 1), ((DictKey(key='a'), SequenceKey(idx=1)), 2)]
    """
    if is_leaf is not None and not is_leaf_takes_path:
        leaf_pred = is_leaf
        is_leaf = lambda _, x: leaf_pred(x)  # noqa: E731
    out: list = []
    treedef = _flatten_with_path(tree, is_leaf, (), out)
    return out, treedef


def _flatten_with_path(x, is_leaf, path, out):
    if is_leaf is not None and is_leaf(path, x):
        out.append((path, x))
        return _LEAF
    node = _node_of(type(x))
    if node is None:
        out.append((path, x))
        return _LEAF
    pairs, aux = node.flatten_with_keys(x)
    return PyTreeDef(type(x), aux, [_flatten_with_path(c, is_leaf, path + (k,), out) for k, c in pairs])


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable):
    """Rebuild a pytree of structure `treedef` from its leaves.

    >>> leaves, td = tree_flatten([1, (2, 3)])
    >>> tree_unflatten(td, [4, 5, 6])
    [4, (5, 6)]
    """
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise PyTreeError(f"tree structure {treedef} needs {treedef.num_leaves} leaves, got {len(leaves)}")
    if treedef.kind is None:
        return leaves[0]
    return _unflatten(treedef, iter(leaves))


def _unflatten(td, it):
    if td.kind is None:
        return next(it)
    return _node_of(td.kind).unflatten(td.aux, [_unflatten(c, it) for c in td._kids])


def tree_leaves(tree, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of a pytree, in flattening order.

    >>> tree_leaves({"b": [2, 3], "a": 1, "c": None})
    [1, 2, 3]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_leaves_with_path(tree, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False) -> list:
    """(key path, leaf) pairs of a pytree, in flattening order."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_structure(tree, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The treedef of a pytree.

    >>> tree_structure((1, {"x": 2}))
    PyTreeDef((*, {'x': *}))
    """
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf: Callable[[Any], bool] | None = None):
    """Apply `f` leaf-wise to one or more pytrees of the same structure (the
    others may have subtrees where `tree` has leaves).

    >>> tree_map(lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)})
    {'x': 11, 'y': (22, 33)}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [flatten_up_to(treedef, r, "tree_map") for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


def tree_map_with_path(f: Callable, tree, *rest, is_leaf: Callable | None = None,
                       is_leaf_takes_path: bool = False):
    """`tree_map` where `f(path, *leaves)` also gets each leaf's key path.

    >>> tree_map_with_path(lambda p, x: keystr(p), {"a": [0]})
    {'a': ["['a'][0]"]}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [flatten_up_to(treedef, r, "tree_map_with_path") for r in rest]
    return treedef.unflatten(f(p, x, *xs) for (p, x), *xs in zip(pairs, *others))


def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: `['a'][0].w`, or with `simple=True` just the keys
    (`a/0/w` with `separator="/"`).

    >>> keystr((DictKey("a"), SequenceKey(0), GetAttrKey("w")))
    "['a'][0].w"
    >>> keystr((DictKey("a"), SequenceKey(0), GetAttrKey("w")), simple=True, separator="/")
    'a/0/w'
    """
    return separator.join(map(_simple_str if simple else str, keys))


def _simple_str(key) -> str:
    if isinstance(key, _Key):
        return str(key._val())
    return str(key)


def one_level(tree, with_keys: bool = False):
    """(children, aux data) of a pytree node (children as (key, child) pairs
    `with_keys`), or None for a leaf. A namedtuple's aux data is its type, as in JAX."""
    t = type(tree)
    node = _node_of(t)
    if node is None:
        return None
    children, aux = node.flatten_with_keys(tree) if with_keys else node.flatten(tree)
    return children, (t if t not in _registry else aux)


def flatten_one_level(tree):
    """(children, aux data) of a pytree node; ValueError for a leaf.

    >>> flatten_one_level({"b": [1], "a": 2})
    ([2, [1]], ('a', 'b'))
    """
    out = one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def flatten_one_level_with_keys(tree):
    """([(key, child)], aux data) of a pytree node; ValueError for a leaf."""
    out = one_level(tree, with_keys=True)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def flatten_fun(fun: Callable, in_tree: PyTreeDef) -> tuple[Callable, list]:
    """fun on pytrees -> (fun on flat leaves, store): the flat function unflattens
    its leaves with `in_tree` (a tree of fun's positional arguments), calls fun
    and flattens its output, appending the output's structure to `store`
    (`store[-1]` is the latest call's).

    >>> leaves, in_tree = tree_flatten(((1.0, 2.0), {"k": 3.0}))
    >>> flat, store = flatten_fun(lambda xy, d: {"s": xy[0] + d["k"]}, in_tree)
    >>> flat(*leaves), store[-1]
    ([4.0], PyTreeDef({'s': *}))
    """
    store: list = []

    def flat_fun(*leaves):
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, leaves)))
        store.append(out_tree)
        return out_leaves

    return flat_fun, store


def flatten_up_to(treedef: PyTreeDef, tree, what: str = "argument") -> list:
    """Flatten `tree` down to the structure of `treedef` (its leaves may be subtrees)."""
    out: list = []

    def go(td, x, path):
        if td.kind is None:
            out.append(x)
            return
        t = type(x)
        node = _node_of(t) if t is td.kind else None
        if node is None:
            raise PyTreeError(f"{what}: expected a pytree of structure {treedef}, got {tree_structure(tree)} "
                              f"(mismatch at {path or 'the root'}: expected {td._str()}, got {t.__name__})")
        pairs, aux = node.flatten_with_keys(x)
        if len(pairs) != len(td._kids) or not _aux_equal(t, aux, td.aux):
            raise PyTreeError(f"{what}: expected a pytree of structure {treedef}, got {tree_structure(tree)} "
                              f"(mismatch at {path or 'the root'})")
        for (k, c), ctd in zip(pairs, td._kids):
            go(ctd, c, f"{path}{k}")

    go(treedef, tree, "")
    return out


def treedef_children(treedef: PyTreeDef) -> list:
    """The treedefs of `treedef`'s children.

    >>> treedef_children(tree_structure([(1, 2), 3]))
    [PyTreeDef((*, *)), PyTreeDef(*)]
    """
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether `treedef` is a single node (a leaf, or a node without children such as None).

    >>> treedef_is_leaf(tree_structure(1)), treedef_is_leaf(tree_structure([1]))
    (True, False)
    """
    return treedef.num_nodes == 1


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple of trees with these structures.

    >>> treedef_tuple([tree_structure(1), tree_structure([2, 3])])
    PyTreeDef((*, [*, *]))
    """
    return PyTreeDef(tuple, None, list(treedefs))
