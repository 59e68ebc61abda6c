"""custom_vmap, sequential_vmap, fwd_and_bwd and funcad.custom_derivatives against JAX."""
from __future__ import annotations

import jax
import jax.custom_batching
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.errors import FuncadTypeError, FuncadValueError
from funcad.custom_batching import custom_vmap, sequential_vmap

jax.config.update("jax_enable_x64", True)

XS = np.linspace(0.0, 2.0, 3)
YS = np.linspace(1.0, 2.0, 3)


def make(lib, np_, calls):
    @lib.custom_batching.custom_vmap
    def f(x, y):
        return np_.sin(x) * y

    # deliberately not f's batch: the rule's output shows where it was used
    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        calls.append((axis_size, list(in_batched)))
        return np_.sin(xs) * ys + 1.0, True
    return f


CASES = {
    "vmap": lambda L, f: L.vmap(f)(XS, YS),
    "vmap_one_unbatched": lambda L, f: L.vmap(f, in_axes=(0, None))(XS, 2.0),
    "vmap_vmap": lambda L, f: L.vmap(L.vmap(f))(np.stack([XS, YS]), np.stack([YS, XS])),
    "jit_vmap": lambda L, f: L.jit(L.vmap(f))(XS, YS),
    "vmap_jit": lambda L, f: L.vmap(L.jit(f))(XS, YS),
    "jvp": lambda L, f: L.jvp(f, (1.0, 2.0), (1.0, 0.5)),
    "jvp_vmap": lambda L, f: L.jvp(L.vmap(f), (XS, YS), (np.ones(3), np.ones(3))),
    "vmap_jvp_extra_primal": lambda L, f: L.vmap(lambda x: L.jvp(f, (x, 2.0), (1.0, 0.0)))(XS),
    "vmap_jvp_mutual": lambda L, f: L.vmap(lambda x, t: L.jvp(f, (x, 2.0), (t, 0.0)))(XS, YS),
    "jacfwd": lambda L, f: L.jacfwd(L.vmap(f))(XS, YS),
    "unbatched": lambda L, f: f(1.0, 2.0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_custom_vmap_matches_jax(case):
    ours_calls, their_calls = [], []
    ours = CASES[case](funcad, make(funcad, fnp, ours_calls))
    theirs = CASES[case](jax, make(jax, jnp, their_calls))
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    assert ours_calls == their_calls  # the rule ran as often, with the same flags


def test_reverse_mode_raises_and_custom_vjp_outside_works():
    f = make(funcad, fnp, [])
    for diff in (funcad.grad, lambda g: funcad.jit(funcad.grad(g)), funcad.jacrev):
        with pytest.raises(FuncadValueError, match="reverse mode.*custom_vjp"):
            diff(f)(1.0, 2.0)

    @funcad.custom_vjp
    def g(x, y):
        return f(x, y)
    g.defvjp(lambda x, y: (g(x, y), (fnp.cos(x), fnp.sin(x), y)),
             lambda res, ct: (res[0] * ct * res[2], res[1] * ct))
    np.testing.assert_allclose(funcad.grad(g)(0.5, 2.0), np.cos(0.5) * 2.0)
    np.testing.assert_allclose(funcad.vmap(g)(XS, YS), np.sin(XS) * YS + 1.0)


def test_pytrees_and_rule_errors():
    @custom_vmap
    def f(d):
        return {"s": d["a"] + d["b"], "p": d["a"] * d["b"]}

    @f.def_vmap
    def rule(axis_size, in_batched, d):
        assert in_batched == [{"a": True, "b": False}]
        return {"s": d["a"] + d["b"], "p": d["a"] * d["b"]}, {"s": True, "p": True}
    out = funcad.vmap(f, in_axes=({"a": 0, "b": None},))({"a": XS, "b": 2.0})
    np.testing.assert_allclose(out["p"], 2 * XS)

    @custom_vmap
    def h(x):
        return x

    h.def_vmap(lambda n, b, x: (x, (True,)))
    with pytest.raises(FuncadValueError, match="do not match"):
        funcad.vmap(h)(XS)
    h.def_vmap(lambda n, b, x: (x[0], True))
    with pytest.raises(FuncadTypeError, match="must be \\(3,\\)"):
        funcad.vmap(h)(XS)
    with pytest.raises(AttributeError, match="No batching rule"):
        funcad.vmap(custom_vmap(lambda x: x))(XS)


def test_sequential_vmap_loops_and_matches_jax():
    def body(np_):
        return lambda x, y: {"a": np_.sum(x) * y["b"]}
    ours = funcad.vmap(sequential_vmap(body(fnp)), in_axes=(0, {"b": None}))(np.stack([XS, YS]), {"b": 2.0})
    theirs = jax.vmap(jax.custom_batching.sequential_vmap(body(jnp)), in_axes=(0, {"b": None}))(
        np.stack([XS, YS]), {"b": 2.0})
    np.testing.assert_allclose(ours["a"], theirs["a"], rtol=1e-12)
    g = sequential_vmap(lambda x: fnp.sin(x))
    assert "scan" in str(funcad.make_jaxpr(funcad.vmap(g))(XS))  # a loop, not a batched sin
    np.testing.assert_allclose(funcad.jit(funcad.vmap(funcad.vmap(g)))(np.stack([XS, YS])),
                               np.sin(np.stack([XS, YS])), rtol=1e-12)


def test_fwd_and_bwd_matches_jax_and_compiles_once():
    def f(x, w):
        return jnp.sin(x @ w) if isinstance(x, jax.Array) else fnp.sin(x @ w)
    x, w = np.ones((3, 3)), np.linspace(0, 1, 9).reshape(3, 3)
    ct = np.linspace(-1, 1, 9).reshape(3, 3)
    fwd, bwd = funcad.fwd_and_bwd(f, argnums=(0, 1))
    jfwd, jbwd = jax.fwd_and_bwd(f, argnums=(0, 1))
    statics = set()
    for i in range(3):
        y, res = fwd(x, w * i)
        statics.add(id(res.static))  # one trace of fwd, so bwd's jit cache key stays the same
        gx, gw = bwd(res, ct)
        jy, jres = jfwd(jnp.asarray(x), jnp.asarray(w * i))
        jgx, jgw = jbwd(jres, jnp.asarray(ct))
        np.testing.assert_allclose(y, jy, rtol=1e-12)
        np.testing.assert_allclose(gx, jgx, rtol=1e-12)
        np.testing.assert_allclose(gw, jgw, rtol=1e-12)
    assert len(statics) == 1
    fwd1, bwd1 = funcad.fwd_and_bwd(lambda x, w: (fnp.sum(x * w), x), argnums=1, has_aux=True, jitted=False)
    y, res, aux = fwd1(XS, YS)
    np.testing.assert_allclose(aux, XS)
    np.testing.assert_allclose(bwd1(res, 1.0), XS)  # one argnum: the cotangent itself, not a tuple
    with pytest.raises(FuncadTypeError, match="residuals that fwd returned"):
        bwd1(None, 1.0)


def test_custom_derivatives_module():
    from funcad import custom_derivatives as cd
    assert cd.custom_jvp is funcad.custom_jvp and cd.custom_vjp is funcad.custom_vjp
    assert cd.closure_convert is funcad.closure_convert
    z = cd.zero_from_primal({"a": np.ones(2), "b": np.int32(3)}, symbolic_zeros=True)
    assert isinstance(z["a"], cd.SymbolicZero) and z["a"].shape == (2,)
    np.testing.assert_array_equal(cd.zero_from_primal(np.ones(2)), np.zeros(2))
    assert cd.zero_from_primal(np.int32(3)).dtype == jax.dtypes.float0


def test_custom_vjp_forwards_attributes_to_a_custom_vmap():
    """JAX's docstring pattern: custom_vjp(custom_vmap(f)), then f.def_vmap on the outer one."""
    from funcad.custom_batching import custom_vmap

    @funcad.custom_vjp
    @custom_vmap
    def f(x):
        return fnp.sin(x)

    @f.def_vmap
    def rule(axis_size, in_batched, x):
        return fnp.sin(x) * 2.0, in_batched[0]  # marks that the rule ran

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g * fnp.cos(x),))
    np.testing.assert_allclose(funcad.vmap(f)(np.arange(3.0)), 2 * np.sin(np.arange(3.0)))
    np.testing.assert_allclose(funcad.grad(f)(1.0), np.cos(1.0))
    with pytest.raises(AttributeError):
        f.no_such_attribute
