"""Higher-order differentiation: nested grad to order 6 against JAX and closed
forms, and every nesting of forward and reverse mode agreeing."""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
from funcad.test_util import check_grads
from tests.op_table import OPS

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

FUNS = {
    "tanh": (fnp.tanh, lambda x: jnp.tanh(x)),
    "sin": (fnp.sin, lambda x: jnp.sin(x)),
    "exp_sin": (lambda x: fnp.exp(x) * fnp.sin(x), lambda x: jnp.exp(x) * jnp.sin(x)),
    "logistic": (lax.logistic, lambda x: jax.lax.logistic(x)),
}


def _nested(grad, f, n):
    out = [f]
    for _ in range(n):
        out.append(grad(out[-1]))
    return out[1:]


@pytest.mark.parametrize("name", sorted(FUNS))
def test_nested_grad_to_order_6_matches_jax(name):
    f, jf = FUNS[name]
    xs = np.array([0.3, -1.1, 2.5])
    ours = [[g(x) for g in _nested(funcad.grad, f, 6)] for x in xs]
    theirs = jax.jit(jax.vmap(lambda x: jnp.stack([g(x) for g in _nested(jax.grad, jf, 6)])))(xs)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("x", [0.3, 2.0])
def test_nested_grad_closed_forms(x):
    sin_derivs = [g(x) for g in _nested(funcad.grad, fnp.sin, 6)]
    np.testing.assert_allclose(sin_derivs, [math.sin(x + n * math.pi / 2) for n in range(1, 7)], rtol=1e-12)
    # d^n/dx^n e^x sin x = 2^(n/2) e^x sin(x + n pi/4)
    es = [g(x) for g in _nested(funcad.grad, FUNS["exp_sin"][0], 6)]
    np.testing.assert_allclose(es, [2 ** (n / 2) * math.exp(x) * math.sin(x + n * math.pi / 4)
                                    for n in range(1, 7)], rtol=1e-12)
    # jvp nested six times gives the same numbers in forward mode.
    f = fnp.sin
    for _ in range(6):
        f = (lambda g: lambda x: funcad.jvp(g, (x,), (1.0,))[1])(f)
    assert f(x) == pytest.approx(math.sin(x + 3 * math.pi), rel=1e-12)


def test_nested_grad_on_arrays_and_mixed_partials():
    x = np.array([0.2, -0.4, 0.9])
    g3 = funcad.grad(lambda x: fnp.sum(funcad.grad(lambda x: fnp.sum(funcad.grad(
        lambda x: fnp.sum(fnp.tanh(x) ** 2))(x) ** 2))(x)))
    jg3 = jax.grad(lambda x: jnp.sum(jax.grad(lambda x: jnp.sum(jax.grad(
        lambda x: jnp.sum(jnp.tanh(x) ** 2))(x) ** 2))(x)))
    np.testing.assert_allclose(g3(x), jg3(x), rtol=1e-12)
    # d²/dxdy sin(x y) = cos(xy) - xy sin(xy)
    fxy = funcad.grad(funcad.grad(lambda x, y: fnp.sin(x * y), 0), 1)(0.7, 1.3)
    assert fxy == pytest.approx(math.cos(0.91) - 0.91 * math.sin(0.91), rel=1e-13)


def _f(x):
    return fnp.sum(fnp.sin(x) * fnp.exp(x[::-1]) + fnp.tanh(x) ** 3) + fnp.prod(x)


def _jf(x):
    return jnp.sum(jnp.sin(x) * jnp.exp(x[::-1]) + jnp.tanh(x) ** 3) + jnp.prod(x)


def test_hessian_vector_products_agree_across_nestings():
    x = np.array([0.3, -0.8, 1.2, 0.5])
    v = np.array([1.0, -2.0, 0.5, 0.25])
    want = jax.jit(lambda x: jax.jvp(jax.grad(_jf), (x,), (v,))[1])(x)
    fwd_over_rev = funcad.jvp(funcad.grad(_f), (x,), (v,))[1]
    rev_over_fwd = funcad.grad(lambda x: funcad.jvp(_f, (x,), (v,))[1])(x)
    rev_over_rev = funcad.grad(lambda x: fnp.sum(funcad.vjp(_f, x)[1](1.0)[0] * v))(x)
    lin_of_grad = funcad.linearize(funcad.grad(_f), x)[1](v)
    for got in (fwd_over_rev, rev_over_fwd, rev_over_rev, lin_of_grad):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_third_order_mixed_nestings_agree():
    # Every one of these is the third derivative D³f[v, v, ·] (a vector).
    x, v = np.array([0.3, -0.8, 1.2]), np.array([1.0, 0.5, -1.5])

    def dd(f, x):  # D²f(x)[v, v] by forward over forward
        return funcad.jvp(lambda x: funcad.jvp(f, (x,), (v,))[1], (x,), (v,))[1]

    want = jax.jit(lambda x: jax.jvp(lambda x: jax.jvp(jax.grad(_jf), (x,), (v,))[1], (x,), (v,))[1])(x)
    a = dd(funcad.grad(_f), x)                                                   # fwd, fwd, rev
    b = funcad.grad(lambda x: dd(_f, x))(x)                                       # rev, fwd, fwd
    c = funcad.jvp(funcad.grad(lambda x: funcad.jvp(_f, (x,), (v,))[1]), (x,), (v,))[1]  # fwd, rev, fwd
    d = funcad.grad(lambda x: fnp.sum(funcad.jvp(funcad.grad(_f), (x,), (v,))[1] * v))(x)  # rev, fwd, rev
    e = funcad.grad(lambda x: fnp.sum(funcad.grad(lambda x: fnp.sum(funcad.grad(_f)(x) * v))(x) * v))(x)
    for got in (a, b, c, d, e):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_grad_of_vjp_with_traced_cotangent():
    # The cotangent is itself a function of x: reverse over reverse with a traced seed.
    f = lambda x: fnp.sin(x) * x  # noqa: E731
    g = lambda x: fnp.sum(funcad.vjp(f, x)[1](fnp.cos(x))[0])  # noqa: E731
    jg = lambda x: jnp.sum(jax.vjp(lambda x: jnp.sin(x) * x, x)[1](jnp.cos(x))[0])  # noqa: E731
    x = np.array([0.1, 0.6, -1.3])
    np.testing.assert_allclose(funcad.grad(g)(x), jax.grad(jg)(x), rtol=1e-12)
    w = np.array([1.0, -1.0, 2.0])
    np.testing.assert_allclose(funcad.grad(lambda x: fnp.sum(funcad.grad(lambda x: g(x) * x[0])(x) * w))(x),
                               jax.grad(lambda x: jnp.sum(jax.grad(lambda x: jg(x) * x[0])(x) * w))(x),
                               rtol=1e-12)


def test_closure_at_several_levels():
    # The innermost function closes over values traced by two outer transformations.
    def f(x):
        def g(y):
            return funcad.grad(lambda z: fnp.sin(x * y * z))(1.0)
        return funcad.jvp(g, (x,), (1.0,))[1]

    def jf(x):
        def g(y):
            return jax.grad(lambda z: jnp.sin(x * y * z))(1.0)
        return jax.jvp(g, (x,), (1.0,))[1]

    np.testing.assert_allclose(funcad.grad(f)(0.4), jax.grad(jf)(0.4), rtol=1e-12)


_ORDER3 = ["lax_tan", "lax_logistic", "lax_erf", "lax_pow", "lax_atan2", "lax_rsqrt", "lax_reduce_prod",
           "lax_cumprod", "lax_dot_general_batch", "softmax", "mlp_layer", "norm_p3"]


@pytest.mark.parametrize("spec", [s for s in OPS if s.name in _ORDER3], ids=lambda s: s.name)
def test_check_grads_order3(spec):
    args = spec.args(np.random.default_rng(0), np.float64)
    check_grads(spec.fun, args, order=3)


@pytest.mark.slow
@pytest.mark.parametrize("spec", [s for s in OPS if s.diff and s.name.startswith("lax_")
                                  and np.float64 in s.dtypes and s.name not in _ORDER3],
                         ids=lambda s: s.name)
def test_check_grads_order3_all_lax_rows(spec):
    args = spec.args(np.random.default_rng(0), np.float64)
    fpos = [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]

    def f(*xs):
        full = list(args)
        for i, x in zip(fpos, xs):
            full[i] = x
        return spec.fun(*full)
    xs = [args[i] for i in fpos]
    outs = f(*xs)
    if any(np.asarray(o).dtype == np.float32 for o in (outs if isinstance(outs, tuple) else [outs])):
        check_grads(f, xs, order=3, atol=5e-3, rtol=5e-3, eps=1e-3)  # float32 inside
    else:
        check_grads(f, xs, order=3)
