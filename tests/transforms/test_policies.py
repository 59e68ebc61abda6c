"""checkpoint policies: what reverse mode saves, and the values it gets, against JAX's."""
from __future__ import annotations

import contextlib
import io
import re

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.ad_checkpoint import Recompute, Saveable, checkpoint_name, print_saved_residuals
from funcad.core.errors import FuncadTypeError, FuncadValueError

jax.config.update("jax_enable_x64", True)

X = np.linspace(0.1, 1.0, 3)
W = np.linspace(-1.0, 1.0, 9).reshape(3, 3)


def make(np_):
    name = funcad.ad_checkpoint.checkpoint_name if np_ is fnp else jax.ad_checkpoint.checkpoint_name

    def f(x, w):
        y = np_.sin(x) @ w
        z = name(np_.sin(y), "z")
        u = name(np_.cos(z), "u")
        return np_.sum(np_.sin(u) * x)
    return f


f_funcad, f_jax = make(fnp), make(jnp)

POLICIES = ["None", "everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
            "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
            "save_only_these_names('z')", "save_only_these_names('z', 'u')",
            "save_any_names_but_these('z')", "save_anything_except_these_names('z')",
            "save_from_both_policies(dots_saveable, save_only_these_names('u'))",
            "save_from_both_policies(nothing_saveable, dots_saveable)"]


def policy(lib, spec: str):
    return None if spec == "None" else eval(spec, vars(lib.checkpoint_policies))


def printed(print_fn, *args) -> list[str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_fn(*args)
    # JAX names the source line of each intermediate; funcad's equations carry none
    return [re.sub(r" from /\S+ \([\w.<>]+\)$", "", line) for line in buf.getvalue().splitlines()]


@pytest.mark.parametrize("spec", POLICIES)
def test_saved_residuals_match_jax(spec):
    ours = printed(print_saved_residuals, funcad.checkpoint(f_funcad, policy=policy(funcad, spec)), X, W)
    theirs = printed(jax.ad_checkpoint.print_saved_residuals,
                     jax.checkpoint(f_jax, policy=policy(jax, spec)), X, W)
    assert ours == theirs


@pytest.mark.parametrize("spec", POLICIES[:4] + POLICIES[7:8])
def test_values_and_gradients_match_jax(spec):
    g = funcad.checkpoint(f_funcad, policy=policy(funcad, spec))
    gj = jax.checkpoint(f_jax, policy=policy(jax, spec))
    want_v, want_g = jax.value_and_grad(gj, argnums=(0, 1))(X, W)
    for vg in (funcad.value_and_grad(g, argnums=(0, 1)), funcad.jit(funcad.value_and_grad(g, argnums=(0, 1)))):
        v, (gx, gw) = vg(X, W)
        np.testing.assert_allclose(v, want_v, rtol=1e-12)
        np.testing.assert_allclose(gx, want_g[0], rtol=1e-12)
        np.testing.assert_allclose(gw, want_g[1], rtol=1e-12)
    # per-example gradients: vmap of grad against a loop
    xs = np.stack([X, 2 * X, -X])
    batched = funcad.vmap(funcad.grad(g), in_axes=(0, None))(xs, W)
    np.testing.assert_allclose(batched, np.stack([funcad.grad(g)(x, W) for x in xs]), rtol=1e-12)
    # second order (forward over reverse) still agrees
    h = funcad.hessian(lambda x: g(x, W))(X)
    np.testing.assert_allclose(h, jax.hessian(lambda x: gj(x, W))(X), rtol=1e-10)


def test_policy_changes_the_linearized_residuals():
    def count(pol):
        _, lin = funcad.linearize(lambda x: funcad.checkpoint(f_funcad, policy=pol)(x, W), X)
        return sorted(c.shape for c in lin.jaxpr.consts)
    P = funcad.checkpoint_policies
    nothing = count(P.nothing_saveable)
    assert nothing == count(None) == [(3,), (3, 3)]  # the inputs: x and the closed-over w
    assert count(P.dots_saveable) == [(3,), (3,), (3, 3)]  # ... and the product
    everything = count(P.everything_saveable)
    assert len(everything) > len(nothing) + 2
    # without checkpoint, the same residuals as saving everything
    _, lin = funcad.linearize(lambda x: f_funcad(x, W), X)
    assert sorted(c.shape for c in lin.jaxpr.consts) == everything


def test_staged_program_recomputes_what_is_not_saved():
    P = funcad.checkpoint_policies
    g = funcad.checkpoint(lambda x: fnp.sum(fnp.sin(fnp.sin(x))), policy=P.everything_saveable)
    text = str(funcad.make_jaxpr(funcad.grad(g))(X))
    assert "optimization_barrier" in text and text.count("sin") == 2  # nothing recomputed
    g = funcad.checkpoint(lambda x: fnp.sum(fnp.sin(fnp.sin(x))), policy=P.nothing_saveable)
    text = str(funcad.make_jaxpr(funcad.grad(g))(X))
    # forward: sin, sin; backward: sin(x) again (cos(sin(x)) needs it; the outer sin is not needed)
    assert text.count("sin ") == 3 and text.count("optimization_barrier a") == 1


def test_policy_inside_scan_matches_jax():
    P = funcad.checkpoint_policies

    def run(lib, np_, pol):
        name = lib.ad_checkpoint.checkpoint_name

        def body(c, w):
            return np_.tanh(name(c @ w, "h")), np_.sum(c)
        step = lib.checkpoint(body, policy=pol)
        return lambda c: np_.sum(lib.lax.scan(step, c, np_.stack([W, W.T, W]))[0])
    ours = funcad.grad(run(funcad, fnp, P.save_only_these_names("h")))(X)
    theirs = jax.grad(run(jax, jnp, jax.checkpoint_policies.save_only_these_names("h")))(X)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    ours_jit = funcad.jit(funcad.grad(run(funcad, fnp, P.dots_saveable)))(X)
    np.testing.assert_allclose(ours_jit, theirs, rtol=1e-12)


def test_custom_policy_gets_prim_avals_and_params_and_may_answer_enums():
    seen = []

    def pol(prim, *avals, **params):
        seen.append((prim.name, tuple(a.shape for a in avals)))
        return Saveable if prim.name == "cos" else Recompute
    g = funcad.checkpoint(lambda x: fnp.sum(fnp.sin(fnp.cos(x))), policy=pol)
    np.testing.assert_allclose(funcad.grad(g)(X), -np.cos(np.cos(X)) * np.sin(X), rtol=1e-12)
    assert ("cos", ((3,),)) in seen
    _, lin = funcad.linearize(g, X)
    assert len(lin.jaxpr.consts) == 2  # x and cos(x)... recomputed sin's input is cos(x)


def test_checkpoint_name_is_the_identity_everywhere():
    x = np.arange(3.0)
    tree = {"a": x, "b": (x, 2.0)}
    out = checkpoint_name(tree, "t")
    np.testing.assert_array_equal(out["a"], x)
    assert "name[name=t]" in str(funcad.make_jaxpr(lambda v: checkpoint_name(v, "t"))(x))
    f = lambda v: fnp.sum(checkpoint_name(v * v, "sq"))  # noqa: E731
    np.testing.assert_allclose(funcad.grad(f)(x), 2 * x)
    np.testing.assert_allclose(funcad.jit(funcad.grad(f))(x), 2 * x)
    np.testing.assert_allclose(funcad.vmap(lambda v: checkpoint_name(v, "b"))(x), x)
    np.testing.assert_allclose(funcad.jvp(f, (x,), (np.ones(3),))[1], 2 * x.sum())
    assert funcad.ad_checkpoint.checkpoint_name_fwd is checkpoint_name
    with pytest.raises(FuncadTypeError, match="str name"):
        checkpoint_name(x, 3)


def test_errors():
    bad = funcad.checkpoint(fnp.sin, policy=lambda *a, **k: "yes")
    with pytest.raises(FuncadTypeError, match="must return a bool"):
        funcad.grad(bad)(1.0)
    with pytest.raises(FuncadTypeError, match="policy must be callable"):
        funcad.checkpoint(fnp.sin, policy="dots")
    with pytest.raises(FuncadValueError, match="out of range"):
        funcad.grad(funcad.checkpoint(lambda x, n: x * n, static_argnums=(3,)))(1.0, 2)
    with pytest.raises(ValueError, match="return a bool"):
        both = funcad.checkpoint_policies.save_from_both_policies(lambda *a, **k: Saveable,
                                                                  lambda *a, **k: False)
        both(None)


def test_static_argnums_and_remat_alias():
    g = funcad.remat(lambda x, n: fnp.sin(x) ** n, static_argnums=1,
                     policy=funcad.checkpoint_policies.dots_saveable)
    np.testing.assert_allclose(funcad.grad(g)(0.5, 3), 3 * np.sin(0.5) ** 2 * np.cos(0.5), rtol=1e-12)
    # decorator form, as JAX's functools.partial(jax.checkpoint, policy=...)
    h = funcad.checkpoint(policy=funcad.checkpoint_policies.everything_saveable)(fnp.sin)
    np.testing.assert_allclose(funcad.grad(h)(0.5), np.cos(0.5))
