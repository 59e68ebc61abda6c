"""funcad.tree and funcad.tree_util against jax.tree and jax.tree_util, on one
corpus of pytrees: leaves, structures (their printed form too), key paths and
keystr, maps, reductions, transposes, broadcasts, treedef methods, errors,
and pytrees with unhashable aux data under jit."""
from __future__ import annotations

import collections
import dataclasses
import functools
import operator

import jax
import jax.tree_util as jtu
import numpy as np
import pytest

import funcad
import funcad.tree as ftree
import funcad.tree_util as ftu

LIBS = [(jtu, jax.tree), (ftu, ftree)]

Point = collections.namedtuple("Point", "x y")


def _register_both(fn):
    for tu, _ in LIBS:
        fn(tu)


class Box:
    """register_pytree_node_class, hashable aux data."""

    def __init__(self, value, label):
        self.value, self.label = value, label

    def tree_flatten(self):
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(children[0], label)


class Pair:
    """register_pytree_node without keys: FlattenedIndexKey paths."""

    def __init__(self, a, b):
        self.a, self.b = a, b


class Named:
    """register_pytree_with_keys: GetAttrKey paths."""

    def __init__(self, w, b):
        self.w, self.b = w, b


class Meta:
    """Unhashable aux data (a dict and a list), as JAX accepts."""

    def __init__(self, x, meta):
        self.x, self.meta = x, meta


@dataclasses.dataclass
class Layer:
    w: object
    b: object
    act: str = dataclasses.field(default="relu", metadata={"static": True})


class Mode(str):
    pass


for _tu, _ in LIBS:
    _tu.register_pytree_node_class(Box)
    _tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    _tu.register_pytree_with_keys(
        Named, functools.partial(lambda tu, n: ([(tu.GetAttrKey("w"), n.w), (tu.GetAttrKey("b"), n.b)], None), _tu),
        lambda _, c: Named(*c))
    _tu.register_pytree_node(Meta, lambda m: ((m.x,), m.meta), lambda meta, c: Meta(c[0], meta))
    _tu.register_dataclass(Layer)
    _tu.register_static(Mode)


def corpus(tu):
    """(name, tree) pairs; built per library because Partial is each library's own."""
    return [
        ("leaf", 1.5),
        ("array", np.arange(3.0)),
        ("none", None),
        ("empty_containers", [(), [], {}, None]),
        ("tuple", (1, 2.0, "s")),
        ("nested", {"b": [1, (2, None)], "a": {"z": 3, "y": (4,)}}),
        ("namedtuple", Point(1, Point(2, (3, 4)))),
        ("ordered_dict", collections.OrderedDict([("q", 1), ("p", [2, 3])])),
        ("defaultdict", collections.defaultdict(list, {"k": 1, "j": (2, 3)})),
        ("int_keys", {3: "c", 1: "a", 2: ["b", "bb"]}),
        ("registered_class", [Box(1, "t"), Box((2, 3), "u")]),
        ("no_keys_node", Pair(1, {"q": [2, 3]})),
        ("keys_node", Named(1, [2, 3])),
        ("unhashable_aux", Meta((1, 2), {"scale": [1, 2]})),
        ("dataclass", Layer([1, 2], 3, "tanh")),
        ("static", (1, Mode("train"), 2)),
        ("partial", tu.Partial(operator.add, 1, b=2)),
        ("deep", {"a": [Point(1, None), (2, {"b": [3, (4,)]})], "c": Layer(5, Box(6, 7))}),
    ]


IDS = [name for name, _ in corpus(ftu)]


def both(i):
    """(jax tree, funcad tree) number i of the corpus."""
    return corpus(jtu)[i][1], corpus(ftu)[i][1]


def _same_leaves(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert type(x) is type(y)
        np.testing.assert_array_equal(x, y)


def _outcome(f, *args):
    """f's result, or the type of error it raised (an array's truth value is ambiguous)."""
    try:
        return f(*args)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__


def _paths(pairs):
    return [tuple(repr(k) for k in p) for p, _ in pairs]


@pytest.mark.parametrize("i", range(len(IDS)), ids=IDS)
def test_flatten_structure_and_printed_form_match_jax(i):
    jt, ft = both(i)
    jl, jtd = jtu.tree_flatten(jt)
    fl, ftd = ftu.tree_flatten(ft)
    _same_leaves(jl, fl)
    assert repr(ftd) == repr(jtd) and str(ftd) == str(jtd)
    assert (ftd.num_leaves, ftd.num_nodes) == (jtd.num_leaves, jtd.num_nodes)
    assert [repr(c) for c in ftd.children()] == [repr(c) for c in jtd.children()]
    assert [repr(c) for c in ftu.treedef_children(ftd)] == [repr(c) for c in jtu.treedef_children(jtd)]
    assert ftu.treedef_is_leaf(ftd) == jtu.treedef_is_leaf(jtd)
    jnd, fnd = jtd.node_data(), ftd.node_data()
    assert (jnd is None) == (fnd is None)
    if jnd is not None:
        assert fnd[0].__name__ == jnd[0].__name__ and repr(fnd[1]) == repr(jnd[1])
    back = ftu.tree_unflatten(ftd, fl)
    assert type(back) is type(ft) and ftu.tree_structure(back) == ftd
    assert repr(ftree.structure(ft)) == repr(jax.tree.structure(jt))
    _same_leaves(ftree.leaves(ft), jax.tree.leaves(jt))


@pytest.mark.parametrize("i", range(len(IDS)), ids=IDS)
def test_paths_and_keystr_match_jax(i):
    jt, ft = both(i)
    jp, jtd = jtu.tree_flatten_with_path(jt)
    fp, ftd = ftu.tree_flatten_with_path(ft)
    assert _paths(fp) == _paths(jp) and repr(ftd) == repr(jtd)
    _same_leaves([x for _, x in jp], [x for _, x in fp])
    for (p, _), (q, _) in zip(fp, jp):
        assert ftu.keystr(p) == jtu.keystr(q)
        assert ftu.keystr(p, simple=True, separator="/") == jtu.keystr(q, simple=True, separator="/")
    assert _paths(ftu.tree_leaves_with_path(ft)) == _paths(jtu.tree_leaves_with_path(jt))
    assert _paths(ftree.leaves_with_path(ft)) == _paths(jax.tree.leaves_with_path(jt))
    assert _paths(ftree.flatten_with_path(ft)[0]) == _paths(jax.tree.flatten_with_path(jt)[0])
    fm = ftu.tree_map_with_path(lambda p, x: ftu.keystr(p), ft)
    jm = jtu.tree_map_with_path(lambda p, x: jtu.keystr(p), jt)
    assert ftu.tree_leaves(fm) == jtu.tree_leaves(jm)


@pytest.mark.parametrize("i", range(len(IDS)), ids=IDS)
def test_map_reduce_all_broadcast_match_jax(i):
    jt, ft = both(i)
    f = lambda x: (x, "seen")  # noqa: E731  (output leaves become tuples)
    jm, fm = jtu.tree_map(f, jt), ftu.tree_map(f, ft)
    assert repr(ftu.tree_structure(fm)) == repr(jtu.tree_structure(jm))
    assert repr(ftree.structure(ftree.map(f, ft))) == repr(jtu.tree_structure(jm))
    assert ftu.tree_reduce(lambda a, b: a + 1, ft, 0) == jtu.tree_reduce(lambda a, b: a + 1, jt, 0)
    assert ftree.reduce(lambda a, b: a + 1, ft, 0) == jax.tree.reduce(lambda a, b: a + 1, jt, 0)
    assert _outcome(ftu.tree_all, ft) == _outcome(jtu.tree_all, jt)
    assert _outcome(ftree.all, ft) == _outcome(jax.tree.all, jt)
    jb = jtu.tree_broadcast(7, jt)
    fb = ftu.tree_broadcast(7, ft)
    assert repr(ftu.tree_structure(fb)) == repr(jtu.tree_structure(jb))
    assert ftu.tree_leaves(fb) == jtu.tree_leaves(jb)
    two = lambda tu, t: tu.tree_map(lambda x: [x, x], t)  # noqa: E731
    assert repr(ftu.tree_structure(ftu.tree_map(lambda a, b: (a, b), ft, two(ftu, ft)))) == repr(
        jtu.tree_structure(jtu.tree_map(lambda a, b: (a, b), jt, two(jtu, jt))))


@pytest.mark.parametrize("i", range(len(IDS)), ids=IDS)
def test_flatten_one_level_and_treedef_methods_match_jax(i):
    jt, ft = both(i)
    jtd, ftd = jtu.tree_structure(jt), ftu.tree_structure(ft)
    if jtd.num_nodes == 1 and jtd.num_leaves == 1:
        with pytest.raises(ValueError, match="can't tree-flatten"):
            ftu.flatten_one_level(ft)
    else:
        jc, ja = jtu.flatten_one_level(jt)
        fc, fa = ftu.flatten_one_level(ft)
        assert [repr(ftu.tree_structure(c)) for c in fc] == [repr(jtu.tree_structure(c)) for c in jc]
        assert repr(fa).replace("funcad.tree_util", "jax.tree_util") == repr(ja)
        jk, _ = jtu.flatten_one_level_with_keys(jt)
        fk, _ = ftu.flatten_one_level_with_keys(ft)
        assert [repr(k) for k, _ in fk] == [repr(k) for k, _ in jk]
    assert ftu.is_tree_node(type(ft)) == jtu.is_tree_node(type(jt))
    # compose, flatten_up_to, walk, from_iterable_tree, from_node_data_and_children
    inner_j, inner_f = jtu.tree_structure((1, [2])), ftu.tree_structure((1, [2]))
    assert repr(ftd.compose(inner_f)) == repr(jtd.compose(inner_j))
    assert [repr(ftu.tree_structure(x)) for x in ftd.flatten_up_to(ft)] == [
        repr(jtu.tree_structure(x)) for x in jtd.flatten_up_to(jt)]
    count = lambda kids, aux: 1 + sum(kids)  # noqa: E731
    assert ftd.walk(count, lambda x: 0, range(ftd.num_leaves)) == jtd.walk(count, lambda x: 0, range(jtd.num_leaves))
    rebuilt = ftu.PyTreeDef.from_node_data_and_children(ftu.default_registry, ftd.node_data(), ftd.children())
    assert rebuilt == ftd and hash(rebuilt) == hash(ftd)
    jtup, ftup = jtu.treedef_tuple([jtd, jtd]), ftu.treedef_tuple([ftd, ftd])
    assert repr(ftup) == repr(jtup) and ftup == ftu.tree_structure((ft, ft))


def test_is_leaf_everywhere():
    for tu, tr in LIBS:
        t = {"p": Point(1, 2), "q": [Point(3, (4, 5)), 6], "r": None}
        is_pt = lambda x: isinstance(x, Point)  # noqa: E731
        assert tu.tree_leaves(t, is_leaf=is_pt) == [Point(1, 2), Point(3, (4, 5)), 6]
        assert tu.tree_structure(t, is_leaf=is_pt).num_leaves == 3
        assert tu.tree_map(lambda x: 0, t, is_leaf=is_pt) == {"p": 0, "q": [0, 0], "r": None}
        assert len(tu.tree_flatten_with_path(t, is_leaf=is_pt)[0]) == 3
        assert tu.tree_reduce(lambda a, b: a + 1, t, 0, is_leaf=is_pt) == 3
    # the answers must agree between the libraries, including None as a leaf
    t = {"p": Point(1, 2), "q": [None, 0], "r": (None,)}
    for is_leaf in (None, lambda x: x is None, lambda x: isinstance(x, Point)):
        assert ftu.tree_all(t, is_leaf=is_leaf) == jtu.tree_all(t, is_leaf=is_leaf)
        assert repr(ftu.tree_flatten(t, is_leaf)) == repr(jtu.tree_flatten(t, is_leaf))
        assert repr(ftree.map_with_path(lambda p, x: len(p), t, is_leaf=is_leaf)) == repr(
            jax.tree.map_with_path(lambda p, x: len(p), t, is_leaf=is_leaf))
        assert ftu.all_leaves([1, None, Point(1, 2)], is_leaf) == jtu.all_leaves([1, None, Point(1, 2)], is_leaf)
    by_path = lambda p, x: len(p) == 1  # noqa: E731  (stop one level down)
    assert _paths(ftu.tree_flatten_with_path(t, by_path, is_leaf_takes_path=True)[0]) == _paths(
        jtu.tree_flatten_with_path(t, by_path, is_leaf_takes_path=True)[0])
    assert repr(ftu.tree_broadcast([1, 2], [[3, 4], (5, None)], is_leaf=lambda x: x == 2)) == repr(
        jtu.tree_broadcast([1, 2], [[3, 4], (5, None)], is_leaf=lambda x: x == 2))


def test_all_leaves_and_none_as_an_empty_node():
    for tu, _ in LIBS:
        assert tu.all_leaves([1, 2.0, np.ones(2)])
        assert not tu.all_leaves([1, (2,)]) and not tu.all_leaves([None])
        assert tu.tree_leaves(None) == [] and tu.tree_leaves([None, None]) == []
        assert tu.tree_structure(None).num_nodes == 1 and tu.treedef_is_leaf(tu.tree_structure(None))
        assert tu.tree_map(lambda x: x + 1, [1, None]) == [2, None]


def test_dict_keys_sorted_ordered_dict_kept_and_unsortable_keys_refused():
    for tu, _ in LIBS:
        assert tu.tree_leaves({"b": 1, "a": 2, "c": 3}) == [2, 1, 3]
        assert tu.tree_leaves(collections.OrderedDict([("b", 1), ("a", 2)])) == [1, 2]
        d = collections.defaultdict(int, {"b": 1, "a": 2})
        back = tu.tree_map(lambda x: x * 10, d)
        assert type(back) is collections.defaultdict and back.default_factory is int and back == {"a": 20, "b": 10}
        with pytest.raises(ValueError):
            tu.tree_flatten({1: "a", "b": 2})
    with pytest.raises(ftu.PyTreeError, match="sorted"):
        ftu.tree_flatten({1: "a", "b": 2})


def test_treedef_equality_and_hash():
    for tu, _ in LIBS:
        s = tu.tree_structure
        assert s((1, 2)) != s([1, 2]) and s({"a": 1}) != s({"b": 1})
        assert s(Point(1, 2)) != s((1, 2)) and s(Box(1, "x")) != s(Box(1, "y"))
        assert s({"a": [1, (2, 3)]}) == s({"a": [4, (5, 6)]})
        assert hash(s({"a": [1, (2, 3)]})) == hash(s({"a": [4, (5, 6)]}))
        m1, m2 = s(Meta(1, {"k": [1]})), s(Meta(2, {"k": [1]}))
        assert m1 == m2 and hash(m1) == hash(m2)  # unhashable aux data: hashable treedef
        assert m1 != s(Meta(1, {"k": [2]}))
        assert len({m1, m2, s(Meta(1, [1, 2]))}) == 2
    # aux data that == cannot compare (an array) fails loudly, as in JAX
    for tu, _ in LIBS:
        with pytest.raises(ValueError):
            _ = tu.tree_structure(Meta(1, np.ones(2))) == tu.tree_structure(Meta(1, np.ones(2)))


def test_transpose_and_reduce_associative():
    for tu, tr in LIBS:
        outer, inner = tu.tree_structure([0, 0, 0]), tu.tree_structure((0, {"a": 0}))
        t = [(1, {"a": 2}), (3, {"a": 4}), (5, {"a": 6})]
        assert tu.tree_transpose(outer, inner, t) == ([1, 3, 5], {"a": [2, 4, 6]})
        assert tr.transpose(outer, None, t) == ([1, 3, 5], {"a": [2, 4, 6]})
        assert tu.tree_reduce_associative(lambda a, b: f"({a}{b})", list("abcde")) == "((ab)(c(de)))"
        assert tr.reduce_associative(operator.add, [], identity=0) == 0
        with pytest.raises(TypeError, match="identity"):
            tu.tree_reduce_associative(operator.add, [])


def test_errors_are_value_errors_as_in_jax():
    for tu, _ in LIBS:
        td = tu.tree_structure((1, 2))
        with pytest.raises(ValueError):
            tu.tree_unflatten(td, [1, 2, 3])
        with pytest.raises(ValueError):
            tu.tree_map(lambda a, b: a, (1, 2), (1, 2, 3))
        with pytest.raises(ValueError):
            tu.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})
        with pytest.raises(ValueError):
            td.flatten_up_to([1, 2])
        with pytest.raises(ValueError, match="Duplicate"):
            tu.register_pytree_node(Pair, lambda p: ((), None), lambda *_: None)

        @dataclasses.dataclass
        class Bad:
            a: int

        with pytest.raises(ValueError, match="Unexpected fields"):
            tu.register_dataclass(Bad, data_fields=["a", "b"], meta_fields=[])
        with pytest.raises(TypeError, match="both be specified"):
            tu.register_dataclass(Bad, data_fields=["a"])


def test_register_pytree_with_keys_class_dataclass_static_and_tree_static():
    for tu, tr in LIBS:
        @tu.register_pytree_with_keys_class
        class Special:
            def __init__(self, x, y):
                self.x, self.y = x, y

            def tree_flatten_with_keys(self):
                return ((tu.GetAttrKey("x"), self.x), (tu.GetAttrKey("y"), self.y)), None

            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children)

        assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Special(1, [2]))] == [".x", ".y[0]"]

        @tu.register_dataclass
        @dataclasses.dataclass
        class Opt:
            lr: float
            momentum: float
            name: str = tr.static(default="sgd")
            extra: int = dataclasses.field(default=0)

        o = Opt(0.1, 0.9, "adam", 3)
        assert tu.tree_leaves(o) == [0.1, 0.9, 3]
        assert tu.tree_map(lambda x: x * 2, o) == Opt(0.2, 1.8, "adam", 6)
        assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(o)] == [".lr", ".momentum", ".extra"]

        @functools.partial(tu.register_dataclass, data_fields=["a"], meta_fields=["tag"], drop_fields=["c"])
        @dataclasses.dataclass
        class Dropped:
            a: float
            tag: str
            c: int = 0

        assert tu.tree_leaves(Dropped(1.0, "t", 5)) == [1.0]
        assert tu.tree_leaves([Mode("eval"), 1]) == [1]


def test_partial_is_a_pytree_with_its_function_static():
    for tu, _ in LIBS:
        p = tu.Partial(operator.mul, 3)
        assert p(4) == 12 and tu.tree_leaves(p) == [3]
        nested = tu.Partial(functools.partial(operator.add, 1))  # args of the inner partial are not leaves
        assert tu.tree_leaves(nested) == [] and nested(2) == 3
        doubled = tu.tree_map(lambda x: x * 2, tu.Partial(operator.add, 1, 2))
        assert doubled() == 6 and type(doubled) is tu.Partial
    add_one = ftu.Partial(funcad.numpy.add, 1.0)
    call = funcad.jit(lambda f, x: f(x))
    assert float(call(add_one, 2.0)) == 3.0
    g = funcad.grad(lambda f: f(2.0))(ftu.Partial(funcad.numpy.multiply, 3.0))
    assert type(g) is ftu.Partial and float(g.args[0]) == 2.0  # bound arguments are differentiated


def test_unhashable_aux_data_under_jit_hits_the_cache_on_equal_aux():
    traces = []

    @funcad.jit
    def f(m):
        traces.append(1)
        return m.x * m.meta["scale"][0]

    assert float(f(Meta(np.float64(2.0), {"scale": [3]}))) == 6.0
    assert float(f(Meta(np.float64(5.0), {"scale": [3]}))) == 15.0  # equal aux: no new trace
    assert len(traces) == 1
    assert float(f(Meta(np.float64(5.0), {"scale": [4]}))) == 20.0  # other aux: traced again
    assert len(traces) == 2 and f._cache_size() == 2
    # and through grad and vmap, as in JAX
    g = funcad.grad(lambda m: m.x * m.meta["scale"][0])(Meta(2.0, {"scale": [3.0]}))
    assert type(g) is Meta and g.meta == {"scale": [3.0]} and float(g.x) == 3.0
    np.testing.assert_allclose(funcad.vmap(lambda m: m.x * 2)(Meta(np.arange(3.0), [1])), [0, 2, 4])
    jf = jax.jit(lambda m: m.x * m.meta["scale"][0])
    np.testing.assert_allclose(jf(Meta(2.0, {"scale": [3]})), f(Meta(np.float64(2.0), {"scale": [3]})))


def test_names_cover_jax():
    for jmod, fmod in ((jtu, ftu), (jax.tree, ftree)):
        names = sorted(n for n in dir(jmod) if not n.startswith("_") and n != "annotations")
        missing = [n for n in names if not hasattr(fmod, n)]
        assert not missing, f"{fmod.__name__} lacks {missing}"
        assert set(names) <= set(fmod.__all__)
