"""funcad.experimental.jet against JAX's jax.experimental.jet and against repeated jvp.

Each case is written once over a (lax, numpy) pair so the same code builds the
funcad function and the JAX one. For every primitive with a jet rule, the
series (orders 1..4, random input terms) equal JAX's; with the input path
x + t v they are the derivatives d^k/dt^k f(x + t v) from nested funcad.jvp.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.jet import jet as jax_jet

import funcad
import funcad.lax as flax
import funcad.numpy as fnp
from funcad.core.errors import MissingRuleError
from funcad.experimental.jet import jet, jet2

jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(0)


def _u(lo, hi, shape=(3,)):
    return lambda: rng.uniform(lo, hi, shape)


POS, SIGNED = _u(0.3, 0.9), _u(-0.9, 0.9)
AWAY = lambda: rng.choice([-1.0, 1.0], 3) * rng.uniform(0.3, 0.9, 3)  # noqa: E731

# name -> (f(lax, np) -> function, input makers). One rule (or group) each.
CASES = {
    "exp": (lambda L, N: L.exp, [SIGNED]),
    "log": (lambda L, N: L.log, [POS]),
    "sin": (lambda L, N: L.sin, [SIGNED]),
    "cos": (lambda L, N: L.cos, [SIGNED]),
    "sinh": (lambda L, N: L.sinh, [SIGNED]),
    "cosh": (lambda L, N: L.cosh, [SIGNED]),
    "tanh": (lambda L, N: L.tanh, [SIGNED]),
    "logistic": (lambda L, N: L.logistic, [SIGNED]),
    "sqrt": (lambda L, N: L.sqrt, [POS]),
    "rsqrt": (lambda L, N: L.rsqrt, [POS]),
    "erf": (lambda L, N: L.erf, [SIGNED]),
    "erfc": (lambda L, N: L.erfc, [SIGNED]),
    "erf_inv": (lambda L, N: L.erf_inv, [_u(-0.7, 0.7)]),
    "exp2": (lambda L, N: L.exp2, [SIGNED]),
    "expm1": (lambda L, N: L.expm1, [SIGNED]),
    "log1p": (lambda L, N: L.log1p, [POS]),
    "asinh": (lambda L, N: L.asinh, [SIGNED]),
    "acosh": (lambda L, N: L.acosh, [_u(1.2, 2.0)]),
    "atanh": (lambda L, N: L.atanh, [_u(-0.6, 0.6)]),
    "abs": (lambda L, N: L.abs, [AWAY]),
    "integer_pow": (lambda L, N: lambda x: L.integer_pow(x, 3) + L.integer_pow(x, -2)
                    + L.integer_pow(x, 1) + L.integer_pow(x, 0), [POS]),
    "pow": (lambda L, N: L.pow, [POS, SIGNED]),
    "mul_div": (lambda L, N: lambda x, y: L.div(L.mul(x, y), y + 2.0) - x * 0.5, [SIGNED, POS]),
    "atan2": (lambda L, N: L.atan2, [SIGNED, POS]),
    "max_min": (lambda L, N: lambda x, y: L.max(x, y) + 2 * L.min(x, y), [SIGNED, SIGNED]),
    "rem": (lambda L, N: L.rem, [_u(2.0, 3.0), _u(0.7, 0.9)]),
    "clamp": (lambda L, N: lambda x: L.clamp(-0.5, x, 0.5), [SIGNED]),
    "select_n": (lambda L, N: lambda x, y: N.where(x > 0, x * y, y), [SIGNED, SIGNED]),
    "zero_series": (lambda L, N: lambda x: L.floor(3 * x) * x + L.sign(x) * x + (x > 0) * x
                    + L.round(x) + L.stop_gradient(x) * x + L.ceil(x) * L.is_finite(x), [AWAY]),
    "dot_general": (lambda L, N: lambda a, b: N.dot(a, b), [_u(-1, 1, (2, 3)), _u(-1, 1, (3, 2))]),
    "conv": (lambda L, N: lambda x, w: L.conv_general_dilated(x, w, (1,), "SAME"),
             [_u(-1, 1, (1, 2, 5)), _u(-1, 1, (3, 2, 2))]),
    "structural": (lambda L, N: lambda x: N.concatenate([N.transpose(N.reshape(x, (3, 2))), x[::-1][None]
                                                         .reshape(2, 3)[:1]]).sum(0)
                   + L.pad(x, 0.0, [(1, 1, 0)])[1:4] + N.broadcast_to(x[:, None], (6, 2))[:3, 1],
                   [_u(-1, 1, (6,))]),
    "reductions": (lambda L, N: lambda x: N.sum(x, 0) * N.max(x, 1) + N.min(x, 1) ** 2,
                   [_u(-1, 1, (3, 3))]),
    "reduce_max_ties": (lambda L, N: lambda x: N.max(N.concatenate([x, x])) * x, [SIGNED]),
    "cumulative": (lambda L, N: lambda x: L.cumsum(x) + L.cumprod(x, reverse=True) + L.cummax(x)
                   - L.cummin(x), [_u(0.5, 1.5, (5,))]),
    "indexing": (lambda L, N: lambda x, y: x[N.array([2, 0])] * x.at[N.array([1, 1])].add(y[:2])[:2],
                 [SIGNED, SIGNED]),
    "dynamic_slice": (lambda L, N: lambda x, y: L.dynamic_slice(L.dynamic_update_slice(x, y[:2], (1,)),
                                                                (1,), (2,)), [SIGNED, SIGNED]),
    "complex_fft": (lambda L, N: lambda x, y: N.real(N.fft.fft(L.complex(x, y)) * L.conj(L.complex(y, x)))
                    + L.imag(L.complex(x, y) ** 2), [SIGNED, SIGNED]),
    "convert": (lambda L, N: lambda x: L.convert_element_type(x, np.float32).astype(np.float64) * x,
                [SIGNED]),
}

NAMES = sorted(CASES)


def _inputs(name):
    return [make() for make in CASES[name][1]]


def _series(xs, order):
    return [[rng.normal(size=np.shape(x)) for _ in range(order)] for x in xs]


@pytest.mark.parametrize("name", NAMES)
def test_series_match_jax(name):
    # orders 1..4 at once (term k does not depend on the truncation order); order 1 alone
    # must give the first of them.
    make, _ = CASES[name]
    xs = _inputs(name)
    series = _series(xs, 4)
    p, s = jet(make(flax, fnp), tuple(xs), tuple(series))
    jp, js = jax_jet(make(jax.lax, jnp), tuple(xs), tuple(series))
    rtol = 1e-4 if name == "convert" else 1e-9
    np.testing.assert_allclose(np.asarray(p), np.asarray(jp), rtol=rtol, atol=1e-12)
    assert len(s) == 4
    for k in range(4):
        np.testing.assert_allclose(np.asarray(s[k]), np.asarray(js[k]), rtol=rtol, atol=1e-9,
                                   err_msg=f"term {k + 1}")
    _, (s1,) = jet(make(flax, fnp), tuple(xs), tuple(t[:1] for t in series))
    np.testing.assert_allclose(np.asarray(s1), np.asarray(s[0]), rtol=1e-12, atol=1e-14)


def _nested_jvp(g, k):
    """t -> g^{(k)}(t) by k nested funcad.jvp."""
    for _ in range(k):
        g = (lambda h: lambda t: funcad.jvp(h, (t,), (1.0,))[1])(g)
    return g


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("zero_series", "reduce_max_ties",
                                                                "max_min", "clamp")])
def test_series_are_derivatives_along_a_line(name):
    # x(t) = x + t v: the k-th output term is d^k/dt^k f(x + t v) at t = 0.
    make, _ = CASES[name]
    f = make(flax, fnp)
    xs = _inputs(name)
    vs = [rng.normal(size=np.shape(x)) for x in xs]
    order = 3
    _, s = jet(f, tuple(xs), tuple([v] + [np.zeros_like(v)] * (order - 1) for v in vs))
    g = lambda t: f(*[x + t * v for x, v in zip(xs, vs)])  # noqa: E731
    for k in range(1, order + 1):
        np.testing.assert_allclose(np.asarray(s[k - 1]), np.asarray(_nested_jvp(g, k)(0.0)),
                                   rtol=1e-8, atol=1e-9, err_msg=f"order {k}")


@pytest.mark.parametrize("name", ["tan", "atan", "asin", "acos"])
def test_rules_beyond_jax_are_derivatives(name):
    # JAX's jet has no rule for these; funcad's series are the derivatives along x + t v.
    f, x, v = getattr(flax, name), rng.uniform(-0.8, 0.8, 3), rng.normal(size=3)
    _, s = jet(f, (x,), ((v, np.zeros(3), np.zeros(3)),))
    for k in range(1, 4):
        np.testing.assert_allclose(np.asarray(s[k - 1]), np.asarray(_nested_jvp(lambda t: f(x + t * v), k)(0.0)),
                                   rtol=1e-9, atol=1e-10, err_msg=f"order {k}")


def test_the_example_of_the_docstring():
    h0, h1, h2 = 0.5 ** 3, 3 * 0.5 ** 2, 6 * 0.5
    f0, (f1, f2) = jet(fnp.sin, (h0,), ((h1, h2),))
    assert math.isclose(float(f0), math.sin(h0))
    assert math.isclose(float(f1), math.cos(h0) * h1)
    assert math.isclose(float(f2), -math.sin(h0) * h1 ** 2 + math.cos(h0) * h2)


def test_unscaled_series_are_taylor_coefficients():
    # exp(x0 + t) = e^x0 (1 + t + t^2/2 + t^3/6): jet2 and factorial_scaled=False agree.
    _, s = jet2(fnp.exp, (0.5,), ((1.0, 0.0, 0.0),))
    np.testing.assert_allclose(np.asarray(s), math.exp(0.5) * np.array([1, 1 / 2, 1 / 6]), rtol=1e-14)
    _, s2 = jet(fnp.exp, (0.5,), ((1.0, 0.0, 0.0),), factorial_scaled=False)
    np.testing.assert_allclose(np.asarray(s2), np.asarray(s), rtol=0)
    _, js = jax_jet(jnp.exp, (0.5,), ((1.0, 0.0, 0.0),), factorial_scaled=False)
    np.testing.assert_allclose(np.asarray(s), np.asarray(js), rtol=1e-14)


def f_tree(x, y):
    return {"a": fnp.sin(x) * y, "b": (fnp.exp(y), fnp.ones(2))}


def jf_tree(x, y):
    return {"a": jnp.sin(x) * y, "b": (jnp.exp(y), jnp.ones(2))}


def test_pytree_outputs_and_constant_outputs():
    x, y = rng.normal(size=2), rng.normal(size=2)
    series = ([np.ones(2), np.ones(2)], [np.ones(2), np.zeros(2)])
    p, s = jet(f_tree, (x, y), series)
    jp, js = jax_jet(jf_tree, (x, y), series)
    assert funcad.tree.structure(s) == funcad.tree.structure(jax.tree.map(np.asarray, js))
    for a, b in zip(funcad.tree.leaves((p, s)), jax.tree.leaves((jp, js))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    # an output that does not depend on the inputs gets zero terms
    np.testing.assert_array_equal(np.asarray(s["b"][1][1]), np.zeros(2))


def _f(x):
    return fnp.tanh(x) * fnp.exp(fnp.sin(x)) / (1 + x * x)


def _jf(x):
    return jnp.tanh(x) * jnp.exp(jnp.sin(x)) / (1 + x * x)


def test_compositions_jit_vmap_grad():
    x = rng.normal(size=3)
    terms = tuple(rng.normal(size=3) for _ in range(3))
    want_p, want_s = jax_jet(_jf, (x,), (terms,))

    def close(got):
        np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want_p), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want_s), rtol=1e-10)

    # jet of a jitted function: one jitted call (its jet) in the program
    close(jet(funcad.jit(_f), (x,), (terms,)))
    staged = funcad.make_jaxpr(lambda x, a, b, c: jet(funcad.jit(_f), (x,), ((a, b, c),)))(x, *terms)
    assert [e.prim.name for e in staged.jaxpr.eqns].count("jit") == 1
    # jit of jet
    close(funcad.jit(lambda x, t: jet(_f, (x,), (tuple(t),)))(x, terms))
    # vmap of jet (over the primal and the terms)
    xs, vs = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    got = funcad.vmap(lambda x, v: jet(_f, (x,), ((v, v),))[1][1])(xs, vs)
    want = jax.vmap(lambda x, v: jax_jet(_jf, (x,), ((v, v),))[1][1])(xs, vs)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10)
    # jet inside grad: the gradient of a second directional derivative
    g = funcad.grad(lambda x: fnp.sum(jet(_f, (x,), ((fnp.ones(3), fnp.zeros(3)),))[1][1]))(x)
    jg = jax.grad(lambda x: jnp.sum(jax_jet(_jf, (x,), ((jnp.ones(3), jnp.zeros(3)),))[1][1]))(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-10)
    # a jet of a jet: series of series
    inner = lambda x: jet(_f, (x,), ((fnp.ones(3),),))[1][0]  # noqa: E731
    jinner = lambda x: jax_jet(_jf, (x,), ((jnp.ones(3),),))[1][0]  # noqa: E731
    np.testing.assert_allclose(np.asarray(jet(inner, (x,), (terms[:2],))[1]),
                               np.asarray(jax_jet(jinner, (x,), (terms[:2],))[1]), rtol=1e-10)


def test_custom_derivative_functions_are_jetted_through_their_bodies():
    @funcad.custom_jvp
    def f(x):
        return fnp.sin(x) * x

    f.defjvp(lambda p, t: (f(p[0]), 100.0 * t[0]))  # a wrong rule: jet must not use it (as JAX)
    x = np.array([0.3, 0.7])
    _, s = jet(f, (x,), ((np.ones(2), np.zeros(2)),))
    _, js = jax_jet(lambda x: jnp.sin(x) * x, (x,), ((np.ones(2), np.zeros(2)),))
    np.testing.assert_allclose(np.asarray(s), np.asarray(js), rtol=1e-12)
    # logaddexp is a custom_jvp function in funcad.numpy, staged under jit. (JAX 0.12's
    # jet fails on jnp.logaddexp, so the reference is the plain formula.)
    y = np.array([0.1, -0.4])
    _, js = jax_jet(lambda x: jnp.log(jnp.exp(x) + jnp.exp(y)), (x,), ((np.ones(2), np.ones(2)),))
    for fn in (lambda x: fnp.logaddexp(x, y), funcad.jit(lambda x: fnp.logaddexp(x, y))):
        _, s = jet(fn, (x,), ((np.ones(2), np.ones(2)),))
        np.testing.assert_allclose(np.asarray(s), np.asarray(js), rtol=1e-10)


def test_missing_rule_names_the_primitive():
    with pytest.raises(MissingRuleError, match="lgamma") as info:
        jet(flax.lgamma, (0.5,), ((1.0,),))
    assert isinstance(info.value, KeyError)  # JAX's jet raises KeyError
    with pytest.raises(KeyError):
        jax_jet(jax.lax.lgamma, (0.5,), ((1.0,),))
    # without a series through it, a primitive needs no rule
    p, s = jet(lambda x: x * flax.lgamma(0.5), (2.0,), ((1.0, 1.0),))
    np.testing.assert_allclose(np.asarray(s), [math.lgamma(0.5)] * 2)


def test_bad_arguments_are_explained():
    with pytest.raises(ValueError, match="inconsistent lengths"):
        jet(fnp.sin, (1.0, 2.0), ((1.0,), (1.0, 2.0)))
    with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
        jet(fnp.sin, ((1.0, 2.0),), ((1.0,),))
    with pytest.raises(ValueError, match="term 1 for argument 0 is not an array"):
        jet(fnp.sin, (1.0,), ((1.0, [1.0, 2.0]),))


def test_funcad_is_right_where_jax_rules_lose_the_primal():
    # tanh of a tiny value (JAX computes 2 logistic(2x) - 1) and rem of mixed signs
    # (JAX's rule is a floor-modulo): funcad returns the primitive's own value.
    p, s = jet(flax.tanh, (np.array([1e-12]),), ((np.ones(1),),))
    np.testing.assert_allclose(np.asarray(p), [1e-12], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(s[0]), [1.0], rtol=1e-12)
    x, y = np.array([-2.5, 2.5]), np.array([2.0, -2.0])
    p, s = jet(flax.rem, (x, y), ((np.ones(2),), (np.ones(2),)))
    np.testing.assert_array_equal(np.asarray(p), np.fmod(x, y))
    np.testing.assert_allclose(np.asarray(s[0]), 1 - np.trunc(x / y))  # d/dt fmod(x+t, y+t)


def _closed_call(f, *args):
    """Bind closed_call_p (JAX's extend.core.primitives.closed_call_p) on f's body."""
    from funcad.core.avals import aval_of
    from funcad.core.staging import trace_to_jaxpr
    from funcad.transforms.closed_call import closed_call_p
    closed = trace_to_jaxpr(lambda *a: [f(*a)], [aval_of(fnp.asarray(a)) for a in args], name="cc")
    return closed_call_p.bind(*args, call_jaxpr=closed)[0]


def test_closed_call_pushes_the_series_through_its_body():
    terms = [1.0, 0.5, 0.2]
    p, s = jet(lambda x: _closed_call(lambda y: fnp.sin(y) * y, x), (0.3,), (terms,))
    jp, js = jax_jet(lambda y: jnp.sin(y) * y, (0.3,), (terms,))
    np.testing.assert_allclose(p, jp, rtol=1e-12)
    np.testing.assert_allclose(s, js, rtol=1e-12)
