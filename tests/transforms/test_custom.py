"""custom_jvp and custom_vjp: rules are used by every differentiation mode, at
higher order, with pytrees and nondiff_argnums, and agree with JAX's."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.avals import float0
from funcad.core.errors import FuncadTypeError
from funcad.test_util import check_grads
from funcad.transforms.custom import SymbolicZero

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


# ------------------------------------------------------- shared definitions ----
# The same functions in funcad and in JAX, with deliberately unusual rules so
# that using the rule and differentiating the body give different numbers.

def _defs(np_, custom_jvp, custom_vjp):
    @custom_jvp
    def f(x):
        return np_.sin(x) * x

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # The rule calls f itself, so higher derivatives go through the rule again.
        return f(x), (2.0 * np_.cos(x) + f(x)) * t

    @custom_vjp
    def g(x, y):
        return np_.tanh(x) * y

    def g_fwd(x, y):
        t = np_.tanh(x)
        return t * y, (t, y)

    def g_bwd(res, ct):
        t, y = res
        return (3.0 * (1.0 - t * t) * y * ct, t * ct * t)

    g.defvjp(g_fwd, g_bwd)
    return f, g


F, G = _defs(fnp, funcad.custom_jvp, funcad.custom_vjp)
JF, JG = _defs(jnp, jax.custom_jvp, jax.custom_vjp)


def _close(a, b, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-14)


# -------------------------------------------------------------- custom_jvp ----

def test_custom_jvp_value_is_the_body_and_rule_is_used():
    assert F(0.5) == pytest.approx(np.sin(0.5) * 0.5)
    _close(funcad.grad(F)(0.5), 2 * np.cos(0.5) + np.sin(0.5) * 0.5)
    y, t = funcad.jvp(F, (0.5,), (3.0,))
    _close(t, 3 * (2 * np.cos(0.5) + np.sin(0.5) * 0.5))
    _, f_jvp = funcad.linearize(F, 0.5)
    _close(f_jvp(3.0), t)
    _, pullback = funcad.vjp(F, np.array([0.5, 1.0]))
    _close(pullback(np.ones(2))[0], jax.vjp(JF, jnp.array([0.5, 1.0]))[1](jnp.ones(2))[0])


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_custom_jvp_higher_order_matches_jax(order):
    g, jg = F, JF
    for _ in range(order):
        g, jg = funcad.grad(g), jax.grad(jg)
    _close(g(0.7), jg(0.7))


def test_custom_jvp_mixed_nesting_matches_jax():
    x = 0.7
    _close(funcad.jvp(funcad.grad(F), (x,), (1.0,))[1], jax.jvp(jax.grad(JF), (x,), (1.0,))[1])
    _close(funcad.grad(lambda x: funcad.jvp(F, (x,), (2.0,))[1])(x),
           jax.grad(lambda x: jax.jvp(JF, (x,), (2.0,))[1])(x))
    # An inner transformation that does not touch x: the outer grad must still use the rule.
    h = lambda x: funcad.grad(lambda y: F(x) * y)(1.0)  # noqa: E731
    jh = lambda x: jax.grad(lambda y: JF(x) * y)(1.0)  # noqa: E731
    _close(funcad.grad(h)(x), jax.grad(jh)(x))
    _close(funcad.grad(funcad.grad(h))(x), jax.grad(jax.grad(jh))(x))


def test_custom_jvp_numerically_stable_rule():
    @funcad.custom_jvp
    def log1pexp(x):
        return fnp.log1p(fnp.exp(x))

    @log1pexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * funcad.lax.logistic(x)

    with np.errstate(over="ignore"):
        assert funcad.grad(log1pexp)(1000.0) == 1.0  # the body alone gives inf/inf = nan
        assert funcad.grad(funcad.grad(log1pexp))(1000.0) == 0.0
    check_grads(log1pexp, (np.array([-1.0, 0.5, 3.0]),), order=3)


def test_custom_jvp_pytrees_kwargs_and_defjvps():
    @funcad.custom_jvp
    def f(d, scale=2.0):
        return {"s": d["a"] * d["b"] * scale, "d": d["a"] - d["b"]}

    @f.defjvp
    def f_jvp(primals, tangents):
        (d, scale), (td, tscale) = primals, tangents
        out = f(d, scale)
        return out, {"s": (td["a"] * d["b"] + d["a"] * td["b"]) * scale + d["a"] * d["b"] * tscale,
                     "d": td["a"] - td["b"]}

    d = {"a": 3.0, "b": 4.0}
    g = funcad.grad(lambda d: f(d, scale=0.5)["s"] + f(d)["d"])(d)
    assert g == {"a": pytest.approx(4.0 * 0.5 + 1.0), "b": pytest.approx(3.0 * 0.5 - 1.0)}

    h = funcad.custom_jvp(lambda x, y: x * y)
    h.defjvps(lambda t, ans, x, y: 10.0 * t * y, None)   # ignores y's tangent on purpose
    assert funcad.grad(h, argnums=(0, 1))(2.0, 3.0) == (30.0, 0.0)
    assert funcad.jvp(h, (2.0, 3.0), (1.0, 1.0))[1] == 30.0


def test_custom_jvp_nondiff_argnums():
    @partial(funcad.custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    @apply.defjvp
    def apply_jvp(fn, primals, tangents):
        (x,), (t,) = primals, tangents
        return apply(fn, x), 5.0 * t       # a recognisable constant derivative

    assert funcad.grad(lambda x: apply(fnp.sin, x))(0.3) == 5.0
    assert funcad.grad(funcad.grad(lambda x: apply(fnp.sin, x) * x))(0.3) == 10.0

    # A traced array in a nondiff position is used as a constant (stop_gradient), as JAX does.
    @partial(funcad.custom_jvp, nondiff_argnums=(1,))
    def scaled(x, s):
        return x * s

    scaled.defjvp(lambda s, primals, tangents: (scaled(primals[0], s), tangents[0] * s))
    assert funcad.grad(lambda x: scaled(x, x))(3.0) == 3.0


def test_custom_jvp_symbolic_zeros():
    seen = []

    @funcad.custom_jvp
    def f(x, y):
        return x * y

    def rule(primals, tangents):
        seen.append(tuple(type(t) is SymbolicZero for t in tangents))
        (x, y), (tx, ty) = primals, tangents
        t = 0.0
        if type(tx) is not SymbolicZero:
            t = t + tx * y
        if type(ty) is not SymbolicZero:
            t = t + x * ty
        return f(x, y), t

    f.defjvp(rule, symbolic_zeros=True)
    assert funcad.grad(f)(2.0, 3.0) == 3.0
    assert seen[-1] == (False, True)
    assert funcad.grad(f, 1)(2.0, 3.0) == 2.0
    assert seen[-1] == (True, False)


def test_custom_jvp_under_make_jaxpr_is_staged_and_grad_uses_rule():
    jaxpr = funcad.make_jaxpr(F)(0.5)
    assert [e.prim.name for e in jaxpr.eqns] == ["custom_jvp_call"]
    assert [e.prim.name for e in jaxpr.eqns[0].params["call_jaxpr"].eqns] == ["sin", "mul"]
    jaxpr = funcad.make_jaxpr(funcad.grad(F))(0.5)
    assert "cos" in [e.prim.name for e in jaxpr.eqns]  # from the rule, not from the body
    _close(funcad.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, 0.5)[0], funcad.grad(F)(0.5))


def test_custom_jvp_with_vmap():
    xs = np.array([0.1, 0.5, 0.9])
    _close(funcad.vmap(funcad.grad(F))(xs), jax.vmap(jax.grad(JF))(xs))
    _close(funcad.grad(lambda x: funcad.vmap(F)(x).sum())(xs), jax.grad(lambda x: jax.vmap(JF)(x).sum())(xs))


def test_custom_jvp_under_vmap_keeps_unbatched_inputs_unbatched():
    # equinox's error_if: a custom_jvp whose body calls back to Python (no vmap_method)
    # under a cond on an unbatched flag (equinox reduces it over the batch first).
    def define(m, np_, lax):
        @m.custom_jvp
        def f(x, code):
            def fire():
                c = m.pure_callback(lambda i: np.asarray(i * 10, np.float64),
                                    m.ShapeDtypeStruct((), np.float64), code)
                return c + 0.0 * x
            return lax.cond(code > 2, fire, lambda: x)
        f.defjvp(lambda ps, ts: (f(*ps), ts[0] * 2.0))
        return f
    f, jf = define(funcad, fnp, funcad.lax), define(jax, jnp, jax.lax)
    xs, code = np.array([0.1, 0.7, 0.9]), np.int64(3)
    _close(funcad.vmap(f, in_axes=(0, None))(xs, code), jax.vmap(jf, in_axes=(0, None))(xs, code))
    _close(funcad.jit(funcad.vmap(funcad.grad(f), in_axes=(0, None)))(xs, code),
           jax.jit(jax.vmap(jax.grad(jf), in_axes=(0, None)))(xs, code))


def test_custom_jvp_errors():
    f = funcad.custom_jvp(fnp.sin)
    with pytest.raises(FuncadTypeError, match="no JVP rule"):
        funcad.grad(f)(1.0)
    f.defjvp(lambda p, t: (fnp.sin(p[0]), (t[0], t[0])))
    with pytest.raises(FuncadTypeError, match="structure"):
        funcad.jvp(f, (1.0,), (1.0,))
    f.defjvp(lambda p, t: (fnp.sin(p[0]), fnp.ones(3)))
    with pytest.raises(FuncadTypeError, match=r"f64\[\].*f64\[3\]"):
        funcad.jvp(f, (1.0,), (1.0,))
    f.defjvp(lambda p, t: fnp.sin(p[0]))
    with pytest.raises(FuncadTypeError, match="pair"):
        funcad.jvp(f, (1.0,), (1.0,))


# -------------------------------------------------------------- custom_vjp ----

def test_custom_vjp_rule_is_used_and_matches_jax():
    x, y = 0.4, 1.5
    _close(G(x, y), JG(x, y))
    _close(funcad.grad(G, (0, 1))(x, y), jax.grad(JG, (0, 1))(x, y))
    xs, ys = np.array([0.1, -0.5, 0.9]), np.array([2.0, 1.0, -1.0])
    out, pullback = funcad.vjp(G, xs, ys)
    jout, jpullback = jax.vjp(JG, xs, ys)
    for a, b in zip(pullback(np.arange(3.0)), jpullback(jnp.arange(3.0))):
        _close(a, b)


@pytest.mark.parametrize("order", [2, 3])
def test_custom_vjp_higher_order_matches_jax(order):
    g, jg = G, JG
    for _ in range(order):
        g, jg = funcad.grad(g), jax.grad(jg)
    _close(g(0.4, 1.5), jg(0.4, 1.5))


def test_custom_vjp_mixed_nesting_matches_jax():
    x, y = 0.4, 1.5
    # forward-over-reverse: jvp of grad differentiates bwd in forward mode.
    _close(funcad.jvp(lambda x: funcad.grad(G)(x, y), (x,), (1.0,))[1],
           jax.jvp(lambda x: jax.grad(JG)(x, y), (x,), (1.0,))[1])
    _close(funcad.grad(lambda x: funcad.grad(G, 1)(x, x))(x), jax.grad(lambda x: jax.grad(JG, 1)(x, x))(x))
    h = lambda x: funcad.grad(lambda z: G(x, y) * z)(1.0)  # noqa: E731
    jh = lambda x: jax.grad(lambda z: JG(x, y) * z)(1.0)  # noqa: E731
    _close(funcad.grad(h)(x), jax.grad(jh)(x))


def test_custom_vjp_forward_mode_is_an_error():
    with pytest.raises(FuncadTypeError, match="forward-mode.*custom_vjp function `g`"):
        funcad.jvp(lambda x: G(x, 2.0), (0.5,), (1.0,))
    with pytest.raises(FuncadTypeError, match="forward-mode"):
        funcad.grad(lambda x: funcad.jvp(lambda z: G(z, 2.0), (x,), (1.0,))[1])(0.5)
    # Staging the jvp records a custom_lin (grad of jit transposes it); running it is forward mode.
    staged = funcad.make_jaxpr(lambda x: funcad.jvp(lambda z: G(z, 2.0), (x,), (1.0,)))(0.5)
    with pytest.raises(FuncadTypeError, match="forward-mode"):
        staged(0.5)
    with pytest.raises(FuncadTypeError, match="forward-mode"):
        funcad.jit(lambda x: funcad.jvp(lambda z: G(z, 2.0), (x,), (1.0,)))(0.5)
    # Without a tangent flowing in, the function is just evaluated.
    assert funcad.jvp(lambda x: G(0.5, 2.0) * x, (1.0,), (1.0,))[1] == pytest.approx(np.tanh(0.5) * 2)


def test_custom_vjp_linearize_stages_one_custom_lin():
    _, f_jvp = funcad.linearize(lambda x: G(x, 2.0), 0.5)
    assert [e.prim.name for e in f_jvp.jaxpr.eqns] == ["custom_lin"]
    assert "custom_lin" in str(f_jvp.jaxpr) and "g_bwd" in str(f_jvp.jaxpr)
    with pytest.raises(FuncadTypeError, match="forward-mode"):
        f_jvp(1.0)


def test_custom_vjp_clip_gradient_pytrees_and_none_cotangents():
    @funcad.custom_vjp
    def clip_gradient(lo, hi, x):
        return x

    clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
                         lambda res, g: (None, None, fnp.clip(g, res[0], res[1])))
    f = lambda x: fnp.sum(clip_gradient(-1.0, 1.0, x) * np.array([0.5, 3.0, -4.0]))  # noqa: E731
    _close(funcad.grad(f)(np.zeros(3)), [0.5, 1.0, -1.0])

    @funcad.custom_vjp
    def split(d):
        return d["a"] * 2.0, [d["b"], d["a"]]

    split.defvjp(lambda d: (split(d), None),
                 lambda _, ct: ({"a": ct[0] * 20.0 + ct[1][1], "b": ct[1][0] * 10.0},))
    g = funcad.grad(lambda d: split(d)[0] + split(d)[1][0] * 1.0)({"a": 1.0, "b": 2.0})
    assert g == {"a": 20.0, "b": 10.0}


def test_custom_vjp_nondiff_argnums():
    @partial(funcad.custom_vjp, nondiff_argnums=(0, 2))
    def apply(fn, x, k):
        return fn(x) * k

    apply.defvjp(lambda fn, x, k: (apply(fn, x, k), x), lambda fn, k, x, g: (fn(x) * g * k * 100.0,))
    assert funcad.grad(lambda x: apply(fnp.cos, x, 2.0))(0.0) == 200.0
    with pytest.raises(FuncadTypeError, match="nondiff_argnums"):
        funcad.grad(lambda x: apply(fnp.cos, x, x))(0.0)


def test_custom_vjp_integer_inputs_and_outputs():
    @funcad.custom_vjp
    def f(x, n):
        return x * n, n + 1

    f.defvjp(lambda x, n: (f(x, n), n), lambda n, ct: (ct[0] * n * 10.0, None))
    assert funcad.grad(lambda x: f(x, np.int64(3))[0])(1.0) == 30.0
    _, pullback = funcad.vjp(f, 2.0, np.int64(3))
    gx, gn = pullback((1.0, np.zeros((), float0)))
    assert gx == 30.0 and gn.dtype == float0


def test_custom_vjp_check_grads_reverse_mode():
    @funcad.custom_vjp
    def softplus(x):
        return fnp.logaddexp(x, 0.0)

    softplus.defvjp(lambda x: (softplus(x), x), lambda x, g: (g * funcad.lax.logistic(x),))
    check_grads(softplus, (np.array([-2.0, 0.1, 3.0]),), order=2, modes=("rev",))


def test_custom_vjp_with_vmap():
    xs = np.array([0.1, 0.5, 0.9])
    _close(funcad.vmap(funcad.grad(G))(xs, xs), jax.vmap(jax.grad(JG))(xs, xs))
    _close(funcad.grad(lambda x: funcad.vmap(G)(x, x).sum())(xs),
           jax.grad(lambda x: jax.vmap(JG)(x, x).sum())(xs))


def test_custom_vjp_errors():
    f = funcad.custom_vjp(fnp.sin)
    with pytest.raises(FuncadTypeError, match="no VJP rule"):
        funcad.grad(f)(1.0)
    f.defvjp(lambda x: (fnp.sin(x), x), lambda x, g: g)   # not a tuple
    with pytest.raises(FuncadTypeError, match="one cotangent per differentiable argument"):
        funcad.grad(f)(1.0)
    f.defvjp(lambda x: (fnp.sin(x), x), lambda x, g: (fnp.ones(3),))
    with pytest.raises(FuncadTypeError, match=r"f64\[3\].*f64\[\]"):
        funcad.grad(f)(1.0)
    f.defvjp(lambda x: fnp.sin(x), lambda x, g: (g,))
    with pytest.raises(FuncadTypeError, match="pair"):
        funcad.grad(f)(1.0)


def test_custom_rules_under_jit_of_grad():
    x = 0.7
    _close(funcad.jit(funcad.grad(F))(x), jax.grad(JF)(x))
    _close(funcad.jit(funcad.grad(G))(x, 1.5), jax.grad(JG)(x, 1.5))


def test_custom_rules_under_grad_of_jit():
    x = 0.7
    _close(funcad.grad(funcad.jit(F))(x), jax.grad(JF)(x))
    _close(funcad.grad(funcad.jit(G))(x, 1.5), jax.grad(JG)(x, 1.5))
    _close(funcad.jit(funcad.grad(funcad.jit(F)))(x), jax.grad(JF)(x))
    _close(funcad.vmap(funcad.grad(funcad.jit(G)), in_axes=(0, None))(np.array([0.3, 0.7]), 1.5),
           jax.vmap(jax.grad(JG), in_axes=(0, None))(np.array([0.3, 0.7]), 1.5))
    _close(funcad.hessian(funcad.jit(F))(x), jax.hessian(JF)(x))


def test_custom_vjp_constant_residual_reaches_bwd_as_a_value():
    # equinox's filter_custom_vjp returns Python flags as residuals and branches on them
    # in bwd; JAX passes a constant residual on as a literal, also under jit.
    def define(m, np_):
        @m.custom_vjp
        def f(x):
            return np_.sin(x)

        def fwd(x):
            return np_.sin(x), (np_.cos(x), True, 2)

        def bwd(res, ct):
            c, flag, k = res
            return ((k * c * ct) if flag else ct,)
        f.defvjp(fwd, bwd)
        return f
    f, jf = define(funcad, fnp), define(jax, jnp)
    x = 0.7
    _close(funcad.grad(f)(x), jax.grad(jf)(x))
    _close(funcad.grad(funcad.jit(f))(x), jax.grad(jax.jit(jf))(x))
    _close(funcad.jit(funcad.grad(f))(x), jax.jit(jax.grad(jf))(x))
    _close(funcad.jit(funcad.grad(funcad.jit(f)))(x), jax.jit(jax.grad(jax.jit(jf)))(x))


@pytest.mark.skipif(jax.__version_info__ < (0, 12), reason="older JAX casts the cotangent to the input's dtype; funcad follows JAX 0.12")
def test_custom_vjp_float_cotangent_of_another_float_dtype_passes_as_jax():
    # flax's fp8 rules return float32 cotangents for float8 inputs; JAX lets them pass
    def define(m):
        @m.custom_vjp
        def f(x):
            return x * 2
        f.defvjp(lambda x: (x * 2, None), lambda r, g: (g.astype(np.float32) * 3,))
        return f
    f, jf = define(funcad), define(jax)
    for g in (lambda m, h: lambda x: h(x).astype(np.float32).sum(),
              lambda m, h: lambda x: h(x.astype(np.float16)).astype(np.float32).sum()):
        for x in (np.ones(3, np.float16), np.ones(3, np.float32)):
            got, want = funcad.grad(g(funcad, f))(x), jax.grad(g(jax, jf))(x)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    with pytest.raises(FuncadTypeError, match="cotangent of type"):
        bad = funcad.custom_vjp(lambda x: x)
        bad.defvjp(lambda x: (x, None), lambda r, g: (np.ones(2),))
        funcad.grad(lambda x: bad(x).sum())(np.ones(3))


def test_custom_call_is_one_staged_equation():
    for f, args in ((F, (0.7,)), (G, (0.7, 1.5))):
        closed = funcad.make_jaxpr(f)(*args)
        assert [e.prim.name for e in closed.eqns] in (["custom_jvp_call"], ["custom_vjp_call"])
        np.testing.assert_allclose(funcad.eval_jaxpr(closed.jaxpr, closed.consts, *args)[0], f(*args))
        np.testing.assert_allclose(funcad.optimize(closed)(*args)[0], f(*args))


def test_custom_jvp_closing_over_differentiated_value_is_refused():
    def outer(x):
        @funcad.custom_jvp
        def g(y):
            return y * x

        @g.defjvp
        def g_jvp(primals, tangents):
            return g(primals[0]), tangents[0] * x

        return g(2.0)

    with pytest.raises(funcad.FuncadTypeError, match="closes over a value that is being differentiated"):
        funcad.grad(funcad.jit(outer))(1.0)


def test_closure_convert_hoists_traced_values():
    def outer(w):
        f = lambda x: fnp.sin(w * x)  # noqa: E731
        g, consts = funcad.closure_convert(f, 1.0)
        assert len(consts) == 1
        return g(2.0, *consts)
    np.testing.assert_allclose(funcad.grad(outer)(0.5), 2 * np.cos(1.0), rtol=1e-14)
    g, consts = funcad.closure_convert(lambda x: {"y": x * 2}, np.ones(2))
    assert consts == [] and g(np.ones(2))["y"].tolist() == [2.0, 2.0]


def test_custom_gradient_matches_jax():
    @funcad.custom_gradient
    def f(x, y):
        return x * y, lambda g: (g * y * 10, g * x)

    @jax.custom_gradient
    def jf(x, y):
        return x * y, lambda g: (g * y * 10, g * x)
    assert float(f(3.0, 4.0)) == 12.0
    for got, want in zip(funcad.grad(f, (0, 1))(3.0, 4.0), jax.grad(jf, (0, 1))(3.0, 4.0)):
        assert float(got) == float(want)
    np.testing.assert_array_equal(funcad.jit(funcad.vmap(funcad.grad(f)))(np.ones(2), np.full(2, 2.0)), [20.0, 20.0])
