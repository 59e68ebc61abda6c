"""funcad.numpy.ufunc / frompyfunc and the built-in ufuncs' methods, checked against JAX:
values eagerly and under jit, derivatives, batching, errors."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

X = np.arange(12.0).reshape(3, 4) - 5.3
B = np.array([[True, False, True, True], [False, False, True, False], [True, True, True, True]])
I = np.array([[7, 3, 12, 5], [6, 1, 9, 14], [2, 11, 4, 8]])


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
    assert np.asarray(a).shape == np.asarray(b).shape


def test_exactly_jax_names_are_ufuncs():
    jax_names = {n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc)}
    ours = {n for n in fnp.__all__ if isinstance(getattr(fnp, n), fnp.ufunc)}
    assert ours == jax_names
    for n in sorted(jax_names):
        f, g = getattr(fnp, n), getattr(jnp, n)
        assert (f.nin, f.nout, f.nargs, f.__name__) == (g.nin, g.nout, g.nargs, g.__name__), n
        assert f.identity == g.identity, n
    assert not isinstance(fnp.sin, fnp.ufunc) and not isinstance(np.add, fnp.ufunc)


def test_builtin_call_is_the_plain_function():
    # No wrapper around the call: the ufunc interface rides on the function itself.
    import types
    assert type(fnp.add) is types.FunctionType
    close(fnp.add(X, 1.0), X + 1.0)


REDUCE = [
    ("add", X, {}), ("add", X, {"axis": 1, "keepdims": True}), ("add", X, {"axis": None}),
    ("add", X, {"axis": (0, 1)}), ("add", X, {"initial": 3.0, "where": X > 0}),
    ("add", I, {"dtype": np.float64}), ("add", B, {"axis": 1}),
    ("multiply", X, {"axis": 1}), ("multiply", X, {"where": X > 0, "initial": 2.0}),
    ("maximum", X, {}), ("maximum", X, {"axis": None, "initial": 100.0, "where": X > 0}),
    ("minimum", X, {"axis": -1, "keepdims": True}),
    ("subtract", X, {"axis": 1}), ("subtract", X, {"axis": None, "keepdims": True}),
    ("bitwise_and", I, {}), ("bitwise_or", I, {"axis": 1}), ("bitwise_xor", I, {"axis": None}),
    ("bitwise_or", B, {"axis": 0}),
    ("logical_and", X > -3, {}), ("logical_or", I, {"axis": 1}), ("logical_xor", B, {"axis": 1}),
    ("logical_xor", B, {"axis": 0, "initial": True}),
    ("logaddexp", X, {"axis": 1}), ("logaddexp", X, {"axis": 0, "initial": 1.0, "where": X > -2}),
    ("logaddexp2", X, {"axis": None}),
]


@pytest.mark.parametrize("name,a,kw", REDUCE, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(REDUCE)])
def test_reduce_matches_jax(name, a, kw):
    want = getattr(jnp, name).reduce(a, **kw)
    close(getattr(fnp, name).reduce(a, **kw), want)
    close(funcad.jit(lambda v: getattr(fnp, name).reduce(v, **kw))(a), want)


ACCUMULATE = [("add", X, 0), ("add", I, 1), ("multiply", X, 1), ("maximum", X, 0), ("minimum", X, 1),
              ("subtract", X, 1), ("logaddexp", X, 1), ("bitwise_xor", I, 0), ("logical_or", B, 1)]


@pytest.mark.parametrize("name,a,axis", ACCUMULATE, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(ACCUMULATE)])
def test_accumulate_matches_jax(name, a, axis):
    want = getattr(jnp, name).accumulate(a, axis=axis)
    close(getattr(fnp, name).accumulate(a, axis=axis), want)
    close(funcad.jit(lambda v: getattr(fnp, name).accumulate(v, axis=axis))(a), want)


AT = [
    ("add", np.zeros(5), np.array([0, 0, 2, -1]), 1.5), ("add", np.zeros((3, 2)), np.array([2, 2]), np.ones(2)),
    ("add", np.array([True, False, False]), np.array([1, 1]), True),
    ("multiply", np.arange(1.0, 6.0), np.array([1, 1, 4]), np.array([2.0, 3.0, 0.5])),
    ("subtract", np.zeros(4), np.array([3, 3, 0]), np.array([1.0, 2.0, 4.0])),
    ("maximum", np.zeros(3), np.array([0, 0, 2]), np.array([3.0, -1.0, 2.0])),
    ("minimum", np.zeros((2, 3)), (np.array([0, 1, 1]), np.array([2, 0, 0])), np.array([-3.0, -1.0, -2.0])),
    ("logaddexp", np.zeros(3), np.array([1, 1]), 0.0),
]


@pytest.mark.parametrize("name,a,idx,b", AT, ids=[f"{n}-{i}" for i, (n, _, _, _) in enumerate(AT)])
def test_at_matches_jax(name, a, idx, b):
    want = getattr(jnp, name).at(a, idx, b, inplace=False)
    close(getattr(fnp, name).at(a, idx, b, inplace=False), want)
    close(funcad.jit(lambda v, w: getattr(fnp, name).at(v, idx, w, inplace=False))(a, b), want)


def test_unary_at_and_outer_and_reduceat():
    close(fnp.negative.at(np.arange(3.0), np.array([0, 0, 2]), inplace=False),
          jnp.negative.at(np.arange(3.0), np.array([0, 0, 2]), inplace=False))
    for name in ("add", "multiply", "maximum", "logaddexp", "subtract", "logical_and"):
        close(getattr(fnp, name).outer(X[0], X[:2]), getattr(jnp, name).outer(X[0], X[:2]))
    idx = np.array([0, 4, 1, 5, 7])
    for name in ("add", "maximum", "multiply"):
        close(getattr(fnp, name).reduceat(np.arange(1.0, 9.0), idx),
              getattr(jnp, name).reduceat(np.arange(1.0, 9.0), idx))
    close(fnp.add.reduceat(X, np.array([0, 2]), axis=1), jnp.add.reduceat(X, np.array([0, 2]), axis=1))


def _jax_and_funcad_frompyfunc():
    return (fnp.frompyfunc(lambda a, b: a * b + 1.0, 2, 1),
            jnp.frompyfunc(lambda a, b: a * b + 1.0, 2, 1))


def test_frompyfunc_methods_match_jax():
    f, g = _jax_and_funcad_frompyfunc()
    assert (f.nin, f.nout, f.nargs, f.identity, f.__name__) == (2, 1, 2, None, "<lambda>")
    a = np.arange(1.0, 5.0)
    close(f(a, 2.0), g(a, 2.0))
    close(f.reduce(a), g.reduce(a))
    close(f.reduce(X, axis=1, keepdims=True), g.reduce(X, axis=1, keepdims=True))
    close(f.reduce(X, axis=0, initial=2.0, where=X > 0), g.reduce(X, axis=0, initial=2.0, where=X > 0))
    close(f.accumulate(X, axis=1), g.accumulate(X, axis=1))
    close(f.outer(a, a[:2]), g.outer(a, a[:2]))
    close(f.at(a, np.array([0, 0, 3]), 2.0, inplace=False), g.at(a, np.array([0, 0, 3]), 2.0, inplace=False))
    close(f.reduceat(a, np.array([0, 2])), g.reduceat(a, np.array([0, 2])))
    h = fnp.frompyfunc(lambda x: 2.0 * x, 1, 1)
    close(h.at(a, np.array([1, 1]), inplace=False), [1.0, 8.0, 3.0, 4.0])
    u = fnp.ufunc(lambda x, y: fnp.maximum(x, y), 2, 1, name="mx", identity=-np.inf)
    assert repr(u) == "<funcad.numpy.ufunc 'mx'>" and u.identity == -np.inf
    close(u.reduce(np.zeros((0, 2))), np.full(2, -np.inf))


def test_ufunc_methods_differentiate_like_jax():
    f, g = _jax_and_funcad_frompyfunc()
    a = np.array([1.0, 3.0, 3.0, 2.0])
    for ours, theirs in [
        (lambda x: fnp.maximum.accumulate(x).sum(), lambda x: jnp.maximum.accumulate(x).sum()),
        (lambda x: fnp.add.reduce(x * x), lambda x: jnp.add.reduce(x * x)),
        (lambda x: fnp.multiply.accumulate(x)[-1], lambda x: jnp.multiply.accumulate(x)[-1]),
        (lambda x: fnp.logaddexp.reduce(x), lambda x: jnp.logaddexp.reduce(x)),
        (lambda x: fnp.subtract.reduce(x), lambda x: jnp.subtract.reduce(x)),
        (lambda x: f.reduce(x), lambda x: g.reduce(x)),
        (lambda x: f.accumulate(x).sum(), lambda x: g.accumulate(x).sum()),
        (lambda x: fnp.add.at(x, np.array([0, 0]), x[1], inplace=False).sum(),
         lambda x: jnp.add.at(x, np.array([0, 0]), x[1], inplace=False).sum()),
        (lambda x: fnp.maximum.at(x, np.array([1, 2]), 2.5, inplace=False).sum(),
         lambda x: jnp.maximum.at(x, np.array([1, 2]), 2.5, inplace=False).sum()),
    ]:
        close(funcad.grad(ours)(a), jax.grad(theirs)(a))
        close(funcad.jit(funcad.grad(ours))(a), jax.grad(theirs)(a))


def test_ufunc_methods_batch():
    f, g = _jax_and_funcad_frompyfunc()
    close(funcad.vmap(fnp.maximum.accumulate)(X), jax.vmap(jnp.maximum.accumulate)(X))
    close(funcad.vmap(f.reduce)(X), jax.vmap(g.reduce)(X))
    close(funcad.vmap(lambda r: fnp.add.at(r, np.array([0, 0]), 1.0, inplace=False))(X),
          jax.vmap(lambda r: jnp.add.at(r, np.array([0, 0]), 1.0, inplace=False))(X))
    close(funcad.vmap(fnp.add.reduce, in_axes=1)(X), jax.vmap(jnp.add.reduce, in_axes=1)(X))


def test_fast_paths_stage_the_reductions():
    # add.reduce is a sum and add.at one scatter, not loops (so they lower and batch cheaply).
    assert "reduce_sum" in str(funcad.make_jaxpr(fnp.add.reduce)(X))
    assert "while" not in str(funcad.make_jaxpr(lambda x: fnp.add.at(x, np.array([0, 0]), 1.0,
                                                                     inplace=False))(np.zeros(3)))
    assert "reduce_max" in str(funcad.make_jaxpr(fnp.maximum.reduce)(X))


def test_errors():
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.add.at(np.zeros(3), 0, 1.0)
    with pytest.raises(ValueError, match="identity"):
        fnp.maximum.reduce(X, where=X > 0)
    with pytest.raises(ValueError, match="dtype=bool"):
        fnp.add.reduce(X, where=np.ones(4))
    with pytest.raises(ValueError, match="binary"):
        fnp.negative.reduce(X)
    with pytest.raises(ValueError, match="no identity"):
        fnp.subtract.reduce(np.zeros((0,)))
    with pytest.raises(ValueError, match="multiple axes"):
        fnp.add.accumulate(X, axis=None)
    with pytest.raises(ValueError, match="out"):
        fnp.add.reduce(X, out=np.zeros(4))
    with pytest.raises(ValueError, match="tuple of axes"):
        fnp.subtract.reduce(X, axis=(0, 1))
    with pytest.raises(TypeError, match="callable"):
        fnp.ufunc(3, 2, 1)


def test_equality_and_hash():
    assert fnp.add == fnp.add._ufunc and fnp.add._ufunc != fnp.multiply._ufunc
    assert len({fnp.add._ufunc, fnp.add._ufunc}) == 1
