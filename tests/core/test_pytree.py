"""Pytrees: flatten/unflatten round trips, tree_map, registration, errors."""
from __future__ import annotations

import collections
import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.tree_util import (PyTreeError, register_dataclass, register_pytree_node,
                              register_pytree_node_class, tree_all, tree_flatten, tree_leaves,
                              tree_map, tree_reduce, tree_structure, tree_transpose, tree_unflatten)

Point = namedtuple("Point", "x y")


@register_pytree_node_class
class Box:
    """A registered class with one child and static aux data."""

    def __init__(self, value, label):
        self.value, self.label = value, label

    def tree_flatten(self):
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(children[0], label)

    def __eq__(self, other):
        return type(other) is Box and self.label == other.label and _same(self.value, other.value)


@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = "layer"


register_dataclass(Params, data_fields=["w", "b"], meta_fields=["name"])


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Pair and _same(self.a, other.a) and _same(self.b, other.b)


register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))


def _same(a, b):
    return tree_structure(a) == tree_structure(b) and all(
        np.array_equal(x, y) for x, y in zip(tree_leaves(a), tree_leaves(b)))


TREES = [
    ("leaf", 1.0, 1),
    ("array_leaf", np.ones(3), 1),
    ("none", None, 0),
    ("empty_tuple", (), 0),
    ("tuple", (1, 2.0, np.ones(2)), 3),
    ("list_with_none", [1, None, [2, 3]], 3),
    ("dict", {"b": 1, "a": (2, 3), "c": {}}, 3),
    ("namedtuple", Point(1, (2, 3)), 3),
    ("ordered_dict", collections.OrderedDict([("z", 1), ("a", 2)]), 2),
    ("defaultdict", collections.defaultdict(list, {"k": [1, 2]}), 2),
    ("registered_class", Box(np.arange(2.0), "tag"), 1),
    ("dataclass", Params(np.ones(2), 0.5, "dense"), 2),
    ("register_pytree_node", Pair([1, 2], {"q": 3}), 3),
    ("deep", {"a": [Point(1, None), (2, {"b": [3, (4,)]})]}, 4),
]


@pytest.mark.parametrize("tree,n", [pytest.param(t, n, id=i) for i, t, n in TREES])
def test_flatten_unflatten_round_trip(tree, n):
    leaves, treedef = tree_flatten(tree)
    assert len(leaves) == n == treedef.num_leaves
    back = tree_unflatten(treedef, leaves)
    assert type(back) is type(tree)
    assert _same(back, tree)
    if isinstance(tree, (Params,)):
        assert back.name == tree.name
    assert tree_structure(back) == treedef and hash(tree_structure(back)) == hash(treedef)


def test_dict_leaves_come_in_sorted_key_order_and_ordered_dict_in_insertion_order():
    assert tree_leaves({"b": 1, "a": 2, "c": 3}) == [2, 1, 3]
    assert tree_leaves(collections.OrderedDict([("b", 1), ("a", 2)])) == [1, 2]


def test_treedef_repr():
    _, td = tree_flatten({"a": (1, None), "b": [2, Point(3, 4)]})
    assert repr(td) == "PyTreeDef({'a': (*, None), 'b': [*, CustomNode(namedtuple[Point], [*, *])]})"  # as JAX prints it
    assert repr(tree_structure((1,))) == "PyTreeDef((*,))"
    assert "CustomNode(Box[t], [*])" in repr(tree_structure(Box(1, "t")))


def test_structures_differ_by_container_keys_and_aux():
    assert tree_structure((1, 2)) != tree_structure([1, 2])
    assert tree_structure({"a": 1}) != tree_structure({"b": 1})
    assert tree_structure(Box(1, "x")) != tree_structure(Box(1, "y"))
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))


def test_tree_map_over_several_trees():
    a = {"x": np.ones(2), "y": (1.0, 2.0)}
    b = {"x": np.full(2, 3.0), "y": (10.0, 20.0)}
    out = tree_map(lambda u, v: u * v, a, b)
    np.testing.assert_array_equal(out["x"], [3.0, 3.0])
    assert out["y"] == (10.0, 40.0)


def test_tree_map_leaves_may_be_subtrees_of_the_others():
    out = tree_map(lambda s, t: (s, len(t)), [1, 2], [(9, 9), [8]])
    assert out == [(1, 2), (2, 1)]


def test_tree_map_mismatch_names_the_path():
    with pytest.raises(PyTreeError, match=r"mismatch at \['a'\]\[1\]"):
        tree_map(lambda u, v: u, {"a": (1, [2, 3])}, {"a": (1, 2)})
    with pytest.raises(PyTreeError, match="expected a pytree of structure"):
        tree_map(lambda u, v: u, {"a": 1}, {"b": 1})


def test_unflatten_with_wrong_leaf_count():
    _, td = tree_flatten((1, 2))
    with pytest.raises(PyTreeError, match="needs 2 leaves, got 3"):
        tree_unflatten(td, [1, 2, 3])


def test_is_leaf_stops_descent():
    leaves, td = tree_flatten({"p": Point(1, 2), "q": [3]}, is_leaf=lambda x: isinstance(x, Point))
    assert leaves == [Point(1, 2), 3]
    assert tree_unflatten(td, ["P", 4]) == {"p": "P", "q": [4]}


def test_tree_reduce_all_transpose():
    assert tree_reduce(lambda a, b: a + b, {"a": 1, "b": (2, 3)}) == 6
    assert tree_reduce(lambda a, b: a + b, [], 10) == 10
    assert tree_all([True, (1, {"a": True})]) and not tree_all([True, (0,)])
    outer, inner = tree_structure([0, 0, 0]), tree_structure((0, 0))
    assert tree_transpose(outer, inner, [(1, 2), (3, 4), (5, 6)]) == ([1, 3, 5], [2, 4, 6])


def test_pytrees_pass_through_make_jaxpr_and_grad():
    def loss(p: Params, batch):
        return fnp.sum((batch["x"] @ p.w + p.b - batch["y"]) ** 2)
    p = Params(np.array([1.0, -1.0]), 0.5)
    batch = {"x": np.array([[1.0, 2.0], [3.0, 4.0]]), "y": np.array([0.0, 1.0])}
    closed = funcad.make_jaxpr(loss)(p, batch)
    assert [a.str_short() for a in closed.in_avals] == ["f64[2]", "f64[]", "f64[2,2]", "f64[2]"]
    g = funcad.grad(loss)(p, batch)
    assert type(g) is Params and g.name == "layer"
    r = batch["x"] @ p.w + p.b - batch["y"]  # residuals [-0.5, -2.5]
    np.testing.assert_allclose(g.w, 2 * batch["x"].T @ r)
    np.testing.assert_allclose(g.b, 2 * r.sum())
