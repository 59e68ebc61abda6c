"""funcad.numpy takes every parameter jax.numpy's functions take, and each does what
JAX's does: values, dtypes and shapes against jax.numpy, eagerly, under jit, and
(for float cases) under grad and vmap; JAX's errors for what JAX refuses.

tests/test_signatures.py checks the parameter lists themselves."""
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
    (lambda m: m.var(X, axis=1, mean=np.zeros(3)), TypeError, ""),
])
def test_refusals_are_jaxs(call, error, match):
    with pytest.raises(error, match=match):
        call(jnp)
    with pytest.raises(error, match=match):
        call(fnp)
