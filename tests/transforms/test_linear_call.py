"""funcad.custom_derivatives.linear_call against JAX's: values, the user's transpose in
linear_transpose/vjp/grad (also transposed twice and three times), jvp, jit, pytrees, its
errors; and vmap (JAX has no batching rule for it) against a loop."""
from __future__ import annotations

import os
import sys
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import funcad  # noqa: E402
import funcad.numpy as fnp  # noqa: E402
from funcad.core.errors import FuncadTypeError  # noqa: E402

jax.config.update("jax_enable_x64", True)

LIBS = {"funcad": (funcad, funcad.custom_derivatives.linear_call, fnp),
        "jax": (jax, jax.custom_derivatives.linear_call, jnp)}


def _programs(name):
    lib, lc, np_ = LIBS[name]

    def div_add(x, denom):
        return x + lc(lambda r, x: x / r, lambda r, t: t / r, denom, x)

    def transpose(f, x_example):
        return lambda y: lib.linear_transpose(f, x_example)(y)[0]

    def custom_id(x):
        return lc(lambda _, x: x, lambda _, t: 7.0 * t, (), x)

    def scaled(x, r):  # the transpose is deliberately not fun's true transpose
        return np_.sum(lc(lambda r, x: np_.sin(r) * x, lambda r, t: 2.0 * np_.sin(r) * t, r, x) ** 2)

    def tree(p, r):  # pytree residuals and linear args
        out = lc(lambda r, v: {"u": v["a"] * r["s"], "w": v["b"] - v["a"]},
                 lambda r, t: {"a": t["u"] * r["s"] - t["w"], "b": t["w"] * 3.0}, r, p)
        return np_.sum(out["u"] ** 2) + np_.sum(np_.cos(out["w"]))
    return lib, div_add, transpose, custom_id, scaled, tree


def _run(name):
    lib, div_add, transpose, custom_id, scaled, tree = _programs(name)
    x, r = np.linspace(0.1, 1.0, 4), np.linspace(1.0, 2.0, 4)
    p = {"a": np.linspace(0.5, 1.0, 3), "b": np.linspace(-1.0, 0.0, 3)}
    q = {"s": np.float64(1.5)}
    t1 = transpose(custom_id, 1.0)
    out = {
        "div_add": div_add(9.0, 3.0),
        "transpose": transpose(partial(div_add, denom=3.0), 1.0)(18.0),
        "t1": t1(1.0), "t2": transpose(t1, 1.0)(1.0),
        "t3": transpose(transpose(t1, 1.0), 1.0)(1.0),
        "grad_id": lib.grad(custom_id)(1.0),
        "jvp": lib.jvp(custom_id, (1.0,), (2.0,))[1],
        "grad_scaled": lib.grad(scaled)(x, r),
        "jit_grad": lib.jit(lib.grad(scaled))(x, r),
        "vjp": lib.vjp(lambda x: lib.custom_derivatives.linear_call(
            lambda r, x: x * r, lambda r, t: t * r + 1.0, r, x), x)[1](np.ones(4))[0],
        "tree": lib.grad(tree)(p, q),
    }
    return jax.tree_util.tree_map(np.asarray, out)


def test_values_and_transposes_match_jax():
    want = _run("jax")
    got = _run("funcad")
    assert set(got) == set(want)
    for k in want:
        for g, w in zip(jax.tree_util.tree_leaves(got[k]), jax.tree_util.tree_leaves(want[k])):
            np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=k)
    assert float(got["t1"]) == 7.0 and float(got["t2"]) == 1.0 and float(got["t3"]) == 7.0


def test_the_transpose_is_the_users_not_funs():
    _, _, _, _, scaled, _ = _programs("funcad")
    x, r = np.linspace(0.1, 1.0, 4), np.linspace(1.0, 2.0, 4)
    # true gradient 2 sin(r)^2 x; the user's transpose doubles it
    np.testing.assert_allclose(funcad.grad(scaled)(x, r), 4 * np.sin(r) ** 2 * x, rtol=1e-14)
    np.testing.assert_allclose(funcad.jacfwd(lambda x: funcad.grad(scaled)(x, r))(x),
                               np.diag(4 * np.sin(r) ** 2), rtol=1e-14)


def test_vmap_matches_a_loop():
    _, _, _, _, scaled, tree = _programs("funcad")
    xs, r = np.linspace(0.1, 1.0, 8).reshape(2, 4), np.linspace(1.0, 2.0, 4)
    rs = np.stack([r, r + 0.5])
    g = funcad.grad(scaled)
    for in_axes, args in (((0, 0), (xs, rs)), ((0, None), (xs, r)), ((None, 0), (xs[0], rs))):
        got = funcad.vmap(g, in_axes=in_axes)(*args)
        loop = [g(*(a if ax is None else a[i] for a, ax in zip(args, in_axes))) for i in range(2)]
        np.testing.assert_allclose(got, np.stack(loop), rtol=1e-14)
    np.testing.assert_allclose(funcad.vmap(scaled, in_axes=(0, None))(xs, r),
                               [scaled(x, r) for x in xs], rtol=1e-14)
    np.testing.assert_allclose(funcad.hessian(scaled)(xs[0], r), np.diag(4 * np.sin(r) ** 2), rtol=1e-13)


def test_errors():
    lc = funcad.custom_derivatives.linear_call
    with pytest.raises(FuncadTypeError, match="differentiable in its linear_args only"):
        funcad.grad(lambda r: lc(lambda r, x: x * r, lambda r, t: t * r, r, 2.0))(3.0)
    bad = lambda x: lc(lambda r, x: x * 2.0, lambda r, t: (t, t), (), x)  # noqa: E731
    with pytest.raises(FuncadTypeError, match="transpose output pytree structure must match"):
        funcad.grad(bad)(1.0)
    with pytest.raises(TypeError, match="transpose output pytree structure must match"):
        jax.grad(lambda x: jax.custom_derivatives.linear_call(
            lambda r, x: x * 2.0, lambda r, t: (t, t), (), x))(1.0)


def test_staged_as_one_equation():
    lc = funcad.custom_derivatives.linear_call
    jaxpr = funcad.make_jaxpr(lambda x, r: lc(lambda r, x: x * r, lambda r, t: t * r, r, x))(1.0, 2.0)
    assert [e.prim.name for e in jaxpr.eqns] == ["linear_call"]
    opt = funcad.optimize(funcad.make_jaxpr(lambda x, r: lc(lambda r, x: x * r, lambda r, t: t * r, r, x))(
        1.0, 2.0))  # the passes keep the call: its transpose belongs to it
    assert [e.prim.name for e in opt.eqns] == ["linear_call"]
