"""funcad.numpy takes every parameter jax.numpy's functions take, and each does what
JAX's does: values, dtypes and shapes against jax.numpy, eagerly, under jit, and
(for float cases) under grad and vmap; JAX's errors for what JAX refuses.

tests/api/test_signatures.py checks the parameter lists themselves."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp

X = np.array([[1.5, -2.0, 0.25, 3.0], [0.5, 4.0, -1.0, 2.0], [2.5, 0.0, 1.0, -3.5]])
I = np.array([[1, 5, 2], [7, -3, 4]], np.int8)
W = np.array([True, False, True, True])  # broadcasts over X's rows
B = np.array([[True, False, True], [False, True, True]])

# (function name, positional args, keyword args)
CASES = [
    ("sum", (X,), dict(where=W)),
    ("sum", (X,), dict(axis=1, where=W, initial=1.5)),
    ("sum", (X,), dict(axis=0, keepdims=True, initial=-2.0)),
    ("sum", (I,), dict(promote_integers=False)),
    ("sum", (I,), dict(axis=1, where=B)),
    ("sum", (B,), dict(promote_integers=False)),
    ("prod", (X,), dict(axis=1, where=W, initial=2.0)),
    ("prod", (I,), dict(promote_integers=False, axis=0)),
    ("max", (X,), dict(axis=1, where=W, initial=-10.0)),
    ("max", (X,), dict(initial=10.0)),
    ("min", (I,), dict(axis=1, where=B, initial=3)),
    ("amax", (X,), dict(axis=0, where=W, initial=0.0)),
    ("amin", (X,), dict(axis=(0, 1), where=W, initial=0.0)),
    ("all", (I,), dict(axis=1, where=B)),
    ("any", (X > 2,), dict(axis=0, where=W)),
    ("mean", (X,), dict(axis=1, where=W)),
    ("mean", (X,), dict(where=W, keepdims=True)),
    ("mean", (I,), dict(axis=0, where=B)),
    ("var", (X,), dict(axis=1, where=W)),
    ("var", (X,), dict(axis=1, correction=1)),
    ("var", (X,), dict(axis=0, where=W, correction=1.5, keepdims=True)),
    ("var", (X,), dict(axis=1, keepdims=True, mean=np.array([[0.5], [1.0], [-0.5]]))),
    ("std", (X,), dict(axis=0, correction=1)),
    ("std", (X,), dict(mean=1.0, correction=1)),
    ("std", (X,), dict(axis=1, where=W, ddof=1)),
    ("argmax", (X,), dict(axis=1, out=None, keepdims=None)),
    ("argmin", (X,), dict(axis=0, keepdims=True)),
    ("cumsum", (X,), dict(axis=1, out=None)),
    ("cumprod", (I,), dict(axis=0, dtype=np.int32, out=None)),
]


def _ids(cases):
    return [f"{n}-{i}" for i, (n, _, _) in enumerate(cases)]


def _check(got, want, x64):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    tol = 1e-12 if x64 else 1e-6
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


@pytest.fixture(params=[True, False], ids=["x64", "x32"])
def x64(request):
    with funcad.enable_x64(request.param), jax.enable_x64(request.param):
        yield request.param


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=_ids(CASES))
def test_matches_jax_eagerly_and_under_jit(name, args, kwargs, x64):
    want = getattr(jnp, name)(*args, **kwargs)
    _check(getattr(fnp, name)(*args, **kwargs), want, x64)
    arrays = {k: v for k, v in kwargs.items() if isinstance(v, np.ndarray)}
    static = {k: v for k, v in kwargs.items() if k not in arrays}
    got = funcad.jit(lambda a, kw: getattr(fnp, name)(a, *args[1:], **kw, **static))(args[0], arrays)
    _check(got, want, x64)


FLOAT = [c for c in CASES if c[1][0] is X and c[0] not in ("argmax", "argmin")]


@pytest.mark.parametrize("name,args,kwargs", FLOAT, ids=_ids(FLOAT))
def test_grad_and_vmap_match_jax(name, args, kwargs):
    with funcad.enable_x64(True), jax.enable_x64(True):
        f = lambda lib: lambda a: lib.sum(getattr(lib, name)(a, **kwargs) ** 2)  # noqa: E731
        np.testing.assert_allclose(funcad.grad(f(fnp))(X), jax.grad(f(jnp))(X), rtol=1e-12, atol=1e-12)
        stack = np.stack([X, 2 * X - 1])
        np.testing.assert_allclose(funcad.vmap(f(fnp))(stack), jax.vmap(f(jnp))(stack), rtol=1e-12)


@pytest.mark.parametrize("call,error,match", [
    (lambda m: m.sum(X, out=np.zeros(())), NotImplementedError, "The 'out' argument to jnp.sum is not supported"),
    (lambda m: m.max(X, where=W), ValueError, "max does not have an identity"),
    (lambda m: m.sum(X, initial=np.ones(2)), ValueError, "initial value must be a scalar"),
    (lambda m: m.var(X, ddof=1, correction=1), ValueError, "ddof and correction can't be provided"),
    (lambda m: m.argmax(X, out=np.zeros(())), NotImplementedError, "The 'out' argument to jnp.argmax"),
    (lambda m: m.var(X, axis=1, mean=np.zeros(3)), TypeError, "dimensions|keepdims=True"),
])
def test_refusals_are_jaxs(call, error, match):
    with pytest.raises(error, match=match):
        call(jnp)
    with pytest.raises(error, match=match):
        call(fnp)


V = np.array([3.0, 1.0, 2.0, 1.0, -0.5])
M = np.array([[3, 1, 2], [1, 1, 0]], np.int32)

SHAPE_CASES = [
    ("sort", (V,), dict(descending=True)),
    ("sort", (M,), dict(axis=None, descending=True, stable=False)),
    ("argsort", (V,), dict(descending=True)),
    ("argsort", (V,), dict(descending=True, stable=False)),
    ("argsort", (M,), dict(axis=0, descending=True)),
    ("argsort", (V,), dict(dtype=np.int16)),
    ("repeat", (V, np.array([1, 0, 2, 1, 1])), dict(total_repeat_length=7)),
    ("repeat", (V, np.array([1, 0, 2, 1, 1])), dict(total_repeat_length=3)),
    ("repeat", (M, 2), dict(axis=1, total_repeat_length=5)),
    ("repeat", (M, np.array([2, 1])), dict(axis=0, total_repeat_length=2)),
    ("reshape", (M,), dict(shape=(3, 2), copy=False)),
    ("stack", ([V, V],), dict(dtype=np.float32)),
    ("concatenate", ([M, M],), dict(axis=1, dtype=np.float32)),
    ("hstack", ((M, M),), dict(dtype=np.int8)),
    ("vstack", ((V, V),), dict(dtype=np.int32)),
    ("trace", (np.eye(3, dtype=np.int8),), dict(dtype=np.float32)),
    ("array", ([1.5, 2.0],), dict(ndmin=3)),
    ("asarray", (V,), dict(copy=True, dtype=np.float32)),
    ("linspace", (0.0, 1.0, 5), dict(retstep=True)),
    ("linspace", (0.0, 2.0, 4), dict(endpoint=False, retstep=True)),
    ("mean", (M,), dict(axis=1)),
]


@pytest.mark.parametrize("name,args,kwargs", SHAPE_CASES, ids=_ids(SHAPE_CASES))
def test_shape_and_creation_parameters_match_jax(name, args, kwargs, x64):
    want = getattr(jnp, name)(*args, **kwargs)
    got = getattr(fnp, name)(*args, **kwargs)
    for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
        _check(g, w, x64)


def test_size_takes_axes_and_positional_names_still_work():
    assert fnp.size(M, axis=1) == jnp.size(M, axis=1) == 3
    assert fnp.size(M, axis=(0, 1)) == 6
    assert fnp.reshape(M, (3, 2)).shape == (3, 2)
    np.testing.assert_array_equal(fnp.flip(m=M, axis=0), np.flip(M, 0))
    np.testing.assert_array_equal(fnp.tile(A=M, reps=2), np.tile(M, 2))


def test_repeat_with_traced_repeats_under_jit_grad_and_vmap():
    r = np.array([1, 0, 2, 1, 1])
    f = lambda lib: lambda v, r: lib.sum(lib.repeat(v, r, total_repeat_length=6) ** 2)  # noqa: E731
    with funcad.enable_x64(True), jax.enable_x64(True):
        np.testing.assert_allclose(funcad.jit(f(fnp))(V, r), jax.jit(f(jnp))(V, r))
        np.testing.assert_allclose(funcad.jit(funcad.grad(f(fnp)))(V, r), jax.grad(f(jnp))(V, r))
        rs = np.array([r, r[::-1]])
        np.testing.assert_allclose(funcad.vmap(f(fnp), (None, 0))(V, rs), jax.vmap(f(jnp), (None, 0))(V, rs))
    with pytest.raises(funcad.errors.ConcretizationTypeError, match="total_repeat_length"):
        funcad.jit(lambda v, r: fnp.repeat(v, r))(V, r)


def test_sort_refusals_are_jaxs():
    for lib in (jnp, fnp):
        with pytest.raises(TypeError, match="'kind' argument to sort is not supported"):
            lib.sort(V, kind="quicksort")
        with pytest.raises(TypeError, match="'order' argument to argsort is not supported"):
            lib.argsort(V, order="a")


def test_device_and_out_sharding_place_the_result():
    from funcad.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding
    dev = funcad.devices()[0]
    for make in (lambda **k: fnp.zeros(3, **k), lambda **k: fnp.full((2,), 1.5, **k),
                 lambda **k: fnp.arange(4.0, **k), lambda **k: fnp.asarray(V, **k),
                 lambda **k: fnp.ones_like(V, **k)):
        x = make(device=dev)
        assert isinstance(x, funcad.Array) and x.devices() == {dev}
        mesh = funcad.make_mesh((1,), ("x",), devices=[dev])
        y = make(out_sharding=NamedSharding(mesh, P("x")))
        assert y.sharding == NamedSharding(mesh, P("x"))
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    s = SingleDeviceSharding(dev)
    np.testing.assert_array_equal(funcad.jit(lambda v: fnp.reshape(v, (5, 1), out_sharding=s))(V), V[:, None])
    with pytest.raises(ValueError, match="only one of `device` and `out_sharding`"):
        fnp.zeros(2, device=dev, out_sharding=s)
    with pytest.raises(TypeError, match="`device` must be a Device"):
        fnp.ones(2, device="gpu0")


@pytest.mark.usefixtures("x64")
def test_scalar_types_convert_traced_values_and_stand_for_numpys():
    for name in ("float32", "int32", "bool_", "bfloat16", "complex64", "uint8"):
        ours, theirs = getattr(fnp, name), getattr(jnp, name)
        assert ours == getattr(np, name, None) or np.dtype(ours) == np.dtype(theirs)
        got = funcad.jit(lambda x: ours(x) * 2)(np.float32(1.7))
        want = jax.jit(lambda x: theirs(x) * 2)(np.float32(1.7))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got).astype(np.float64), np.asarray(want).astype(np.float64))
    assert isinstance(np.float32(1), fnp.float32) and np.zeros(2, fnp.float32).dtype == np.float32
    assert {np.float32: "x"}[fnp.float32] == "x"
    for a, b in [(fnp.float16, fnp.float16), (fnp.float16, np.float16), (fnp.float32, fnp.float16),
                 (fnp.float32, np.float64), (fnp.int32, "int32")]:
        ja, jb = [getattr(jnp, t.__name__) if isinstance(t, type) else t for t in (a, b)]
        assert (a != b, a == b) == (ja != jb, ja == jb), (a, b)
    np.testing.assert_allclose(funcad.grad(lambda x: fnp.float64(x) ** 2)(3.0), 6.0)


def test_einsum_follows_the_optimize_path_and_takes_dot_general():
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(2, 3)), rng.normal(size=(3, 40)), rng.normal(size=(40, 5))
    with funcad.enable_x64(True), jax.enable_x64(True):
        for opt in ("auto", False, True, "greedy"):
            np.testing.assert_allclose(fnp.einsum("ij,jk,kl->il", a, b, c, optimize=opt),
                                       jnp.einsum("ij,jk,kl->il", a, b, c, optimize=opt), rtol=1e-12)
        path, _ = fnp.einsum_path("ij,jk,kl", a, b, c, optimize="optimal")
        np.testing.assert_allclose(fnp.einsum("ij,jk,kl", a, b, c, optimize=path), a @ b @ c, rtol=1e-12)
        calls = []

        def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
            calls.append(dimension_numbers)
            return funcad.lax.dot_general(lhs, rhs, dimension_numbers, precision=precision,
                                          preferred_element_type=preferred_element_type)
        np.testing.assert_allclose(fnp.einsum("ij,jk->ik", a, b, _dot_general=dot_general), a @ b, rtol=1e-12)
        assert calls == [(((1,), (0,)), ((), ()))]
        np.testing.assert_allclose(funcad.grad(lambda x: fnp.einsum("ij,jk,kl->", x, b, c))(a),
                                   jax.grad(lambda x: jnp.einsum("ij,jk,kl->", x, b, c))(a), rtol=1e-12)


def test_remaining_parameters_match_jax():
    with funcad.enable_x64(True), jax.enable_x64(True):
        idx = (np.array([1, 2]), np.array([2, 0]))
        for kw in ({}, {"dtype": np.int16}):
            _check(fnp.ravel_multi_index(idx, (3, 4), **kw), jnp.ravel_multi_index(idx, (3, 4), **kw), True)
        keys = [np.array([1, 0, 1]), np.array([0, 1, 0])]
        _check(fnp.lexsort(keys, batch_size=1), jnp.lexsort(keys, batch_size=1), True)
        assert [int(i) for i in fnp.unravel_index(5, shape=(2, 3))] == [int(i) for i in jnp.unravel_index(5, shape=(2, 3))]
        _check(fnp.fromfunction(lambda i, j: i + j, shape=(2, 3)), jnp.fromfunction(lambda i, j: i + j, shape=(2, 3)), True)
        _check(fnp.linalg.matmul(X, X.T, precision="highest"), jnp.linalg.matmul(X, X.T, precision="highest"), True)
    for lib in (jnp, fnp):
        with pytest.raises(ValueError, match="full_matrices and subset_by_index cannot both be set"):
            lib.linalg.svd(X, subset_by_index=(0, 1))
        with pytest.raises(NotImplementedError, match="subset_by_index not implemented for CPU"):
            lib.linalg.svd(X, full_matrices=False, subset_by_index=(0, 1))
    import funcad.scipy.linalg as fsl
    import jax.scipy.linalg as jsl
    sym = X[:3, :3] + X[:3, :3].T
    with funcad.enable_x64(True), jax.enable_x64(True):
        _check(fsl.eigh(sym, turbo=False, eigvals_only=True), jsl.eigh(sym, turbo=False, eigvals_only=True), True)
    with pytest.raises(NotImplementedError, match="Only the eigvals=None case"):
        fsl.eigh(sym, eigvals=(0, 0))


def test_edges_of_the_reduction_parameters_are_jaxs():
    with funcad.enable_x64(True), jax.enable_x64(True):
        for lib in (jnp, fnp):
            with pytest.raises(ValueError, match="where must be None or a boolean array"):
                lib.sum(X, where=np.array([1, 0, 1, 1]))
            with pytest.raises(NotImplementedError, match="Only implemented for order='K'"):
                lib.array([1.0], order="C")
        for f in (lambda m: m.max(np.zeros(0), initial=2.0),
                  lambda m: m.min(np.zeros((2, 0)), axis=1, initial=-1.0, keepdims=True),
                  lambda m: m.var(np.arange(3.0), ddof=3), lambda m: m.std(np.arange(3.0), ddof=4)):
            _check(f(fnp), f(jnp), True)
        _check(funcad.jit(lambda x: fnp.max(x, initial=1.0))(np.zeros(0)), jnp.max(np.zeros(0), initial=1.0), True)


def test_like_functions_take_a_shape_dtype_struct():
    for name, extra in [("zeros_like", ()), ("ones_like", ()), ("full_like", (3,)), ("empty_like", ())]:
        for dtype, kw in [(jnp.bfloat16, {}), (np.int32, dict(dtype=np.float32)), (np.float32, dict(shape=(3,)))]:
            want = getattr(jnp, name)(jax.ShapeDtypeStruct((2,), dtype), *extra, **kw)
            got = getattr(fnp, name)(funcad.ShapeDtypeStruct((2,), dtype), *extra, **kw)
            jitted = funcad.jit(lambda: getattr(fnp, name)(funcad.ShapeDtypeStruct((2,), dtype), *extra, **kw))()
            for g in (got, jitted):
                assert g.dtype == want.dtype and g.shape == want.shape
                if name != "empty_like":
                    np.testing.assert_array_equal(np.asarray(g, np.float32), np.asarray(want, np.float32))
