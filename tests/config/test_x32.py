"""32-bit mode (`enable_x64` off): funcad against JAX with its default x64 off.

Each test runs with both libraries in 32-bit mode and restores the flags after,
so the rest of the suite keeps funcad's 64-bit default and JAX's x64 on.
"""
import os
import subprocess
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import lax as flax
from funcad import random as frandom


def _jax_x64(flag):
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(flag)
    from jax import experimental  # jax < 0.7 keeps the switch there
    return experimental.enable_x64() if flag else experimental.disable_x64()


@pytest.fixture
def x32():
    """Both libraries in 32-bit mode for one test, then back."""
    with _jax_x64(False), funcad.enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # overflow in exp(100.) is the point
        yield
    assert funcad.config.enable_x64 is True


def same(a, b, rtol=0.0):
    """Equal dtypes, shapes and values (exactly, or to rtol) for every leaf."""
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype, (x.dtype, y.dtype)
        assert x.shape == y.shape
        if rtol:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol)
        else:
            np.testing.assert_array_equal(x, y)


# ------------------------------------------------------------- the switch ----

def test_config_switch_and_alias_restore():
    assert funcad.config.enable_x64 is True and funcad.enable_x64.value is True
    funcad.config.update("jax_enable_x64", False)
    try:
        assert funcad.config.read("enable_x64") is False
        assert funcad.config.jax_enable_x64 is False
        assert fnp.ones(2).dtype == np.float32
    finally:
        funcad.config.update("enable_x64", True)
    assert fnp.ones(2).dtype == np.float64
    with funcad.config.override(enable_x64=False):
        assert fnp.arange(3).dtype == np.int32
    assert fnp.arange(3).dtype == np.int64


def test_bad_value_is_explained():
    with pytest.raises(funcad.FuncadTypeError, match="enable_x64 takes True or False"):
        funcad.config.update("enable_x64", "maybe")


@pytest.mark.parametrize("var", ["FUNCAD_ENABLE_X64", "JAX_ENABLE_X64"])
def test_environment_variable(var):
    env = {k: v for k, v in os.environ.items() if k not in ("FUNCAD_ENABLE_X64", "JAX_ENABLE_X64")}
    env[var] = "0"
    out = subprocess.run([sys.executable, "-c", "import funcad.numpy as f; print(f.ones(1).dtype)"],
                         env=env, capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.stdout.strip() == "float32", out.stderr


def test_explicit_64_bit_request_is_truncated_with_jax_warning(x32):
    with pytest.warns(UserWarning, match="float64 requested in zeros is not available.*float32") as rec:
        z = fnp.zeros(2, np.float64)
    assert z.dtype == np.float32
    assert rec[0].filename == __file__  # the warning points at the user's line
    with pytest.warns(UserWarning, match="int64"):
        assert fnp.astype(np.ones(2), np.int64).dtype == np.int32


def test_python_type_dtypes_are_the_default_width_silently(x32):
    # JAX: dtype=int/float/complex name the default types, no warning (blackjax's
    # `jnp.zeros_like(x, dtype=int)` under pytest's filterwarnings=error)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fnp.zeros_like(np.ones(2), dtype=int).dtype == np.int32
        assert fnp.astype(np.ones(2), float).dtype == np.float32
        assert fnp.zeros(2, complex).dtype == np.complex64
        assert fnp.arange(3, dtype=int).dtype == np.int32
    with pytest.warns(UserWarning, match="int64"):
        assert fnp.zeros(2, "int").dtype == np.int32  # a string names NumPy's int64, as in JAX


def test_jit_cache_follows_the_mode():
    f = funcad.jit(lambda x: x * 2)
    x = np.ones(3)
    assert f(x).dtype == np.float64
    with funcad.enable_x64(False):
        assert f(x).dtype == np.float32
        assert f(1.5).dtype == np.float32
    assert f(x).dtype == np.float64 and f(1.5).dtype == np.float64


# --------------------------------------------------------- realistic programs ----

def test_softplus_gradient_overflows_as_in_jax(x32):
    def f(np_):
        return lambda x: np_.log(1 + np_.exp(x))
    for t in (lambda g: g, lambda g: funcad.jit(g)):
        same(t(funcad.grad(f(fnp)))(100.), jax.grad(f(jnp))(100.))
    assert np.isnan(funcad.grad(f(fnp))(100.))
    with funcad.enable_x64(True):
        assert funcad.grad(f(fnp))(100.) == 1.0


def test_dtypes_of_creation_and_python_scalars(x32):
    cases = [
        lambda m: m.ones(3), lambda m: m.zeros((2, 2)), lambda m: m.eye(3), lambda m: m.full((2,), 3),
        lambda m: m.full((2,), 0.1), lambda m: m.array([1.0, 2.0]), lambda m: m.array([1, 2]),
        lambda m: m.asarray(np.arange(3.0)), lambda m: m.arange(5), lambda m: m.arange(0, 1, 0.1),
        lambda m: m.arange(1.5, 7), lambda m: m.linspace(0.0, 1.0, 7), lambda m: m.zeros_like(np.ones(2)),
        lambda m: m.add(1, 2.5), lambda m: m.multiply(np.ones(2, np.float32), 2.0),
        lambda m: m.add(np.arange(3), 1), lambda m: m.add(np.arange(3), 1.5),
        lambda m: m.tri(3), lambda m: m.triu_indices(3), lambda m: m.nonzero(np.array([0, 2, 3])),
    ]
    for c in cases:
        same(c(fnp), c(jnp))
    # XLA fuses linspace's multiply-adds, NumPy does not: equal to an ulp.
    for c in (lambda m: m.linspace(-3, 2, 11), lambda m: m.linspace(0.0, 1.0, 4, endpoint=False),
              lambda m: m.linspace(-1.7, 3.3, 50), lambda m: m.linspace(np.zeros(2), np.ones(2), 5, axis=1)):
        same(c(fnp), c(jnp), rtol=3e-7)


def test_reductions_with_int_inputs(x32):
    a = np.arange(12).reshape(3, 4)
    for f in (lambda m: m.sum(a), lambda m: m.sum(a, axis=0), lambda m: m.mean(a),
              lambda m: m.prod(a, axis=1), lambda m: m.cumsum(a, axis=1), lambda m: m.argmax(a, axis=1),
              lambda m: m.max(a), lambda m: m.var(a)):
        same(f(fnp), f(jnp), rtol=1e-7)
        same(funcad.jit(lambda: f(fnp))(), jax.jit(lambda: f(jnp))())


def test_mlp_training_step(x32):
    rng = np.random.default_rng(0)
    # Plain NumPy arrays' operators are NumPy's, so eager values enter through asarray.
    params = {"w1": rng.normal(size=(4, 8)), "b1": np.zeros(8),
              "w2": rng.normal(size=(8, 1)), "b2": np.zeros(1)}
    params = {k: fnp.asarray(v) for k, v in params.items()}
    x, y = fnp.asarray(rng.normal(size=(16, 4))), fnp.asarray(rng.normal(size=(16, 1)))

    def make(np_, tr):
        def loss(p, x, y):
            h = np_.tanh(x @ p["w1"] + p["b1"])
            return np_.mean((h @ p["w2"] + p["b2"] - y) ** 2)

        def step(p, x, y):
            g = tr.grad(loss)(p, x, y)
            return tr.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), loss(p, x, y)
        return step

    fs, js = make(fnp, funcad), make(jnp, jax)
    pf, pj = params, params
    for _ in range(3):
        pf, lf = fs(pf, x, y)
        pj, lj = js(pj, x, y)
    same((pf, lf), (pj, lj), rtol=2e-5)
    same(funcad.jit(fs)(params, x, y), jax.jit(js)(params, x, y), rtol=2e-6)
    # per-example gradients
    g = funcad.vmap(funcad.grad(lambda w, xi: fnp.sum(fnp.tanh(xi @ w))), (None, 0))(params["w1"], x)
    gj = jax.vmap(jax.grad(lambda w, xi: jnp.sum(jnp.tanh(xi @ w))), (None, 0))(params["w1"], x)
    same(g, gj, rtol=2e-6)


def test_scan_simulation(x32):
    def make(np_, lax_):
        def sim(x0, v0):
            def body(c, _):
                x, v = c
                a = -np_.sin(x) - 0.1 * v
                return (x + 0.01 * v, v + 0.01 * a), x
            return lax_.scan(body, (x0, v0), None, length=200)
        return sim
    x0 = np.linspace(0.1, 1.0, 4)
    out_f = funcad.jit(make(fnp, flax))(x0, np.zeros(4))
    out_j = jax.jit(make(jnp, jax.lax))(x0, np.zeros(4))
    same(out_f, out_j, rtol=1e-6)
    same(make(fnp, flax)(x0, np.zeros(4)), out_j, rtol=1e-5)


def test_random_init(x32):
    kf, kj = frandom.PRNGKey(42), jax.random.PRNGKey(42)
    same(kf, kj)
    for f in (lambda r, k: r.normal(k, (3, 4)), lambda r, k: r.uniform(k, (5,), minval=-1.0),
              lambda r, k: r.randint(k, (6,), 0, 10), lambda r, k: r.split(k, 3),
              lambda r, k: r.bernoulli(k, 0.3, (5,)),
              lambda r, k: r.truncated_normal(k, -2.0, 2.0, (4,)),
              lambda r, k: r.permutation(k, 6)):
        same(f(frandom, kf), f(jax.random, kj))
        same(funcad.jit(lambda k: f(frandom, k))(kf), jax.jit(lambda k: f(jax.random, k))(kj))


def test_softmax_logsumexp(x32):
    x = np.linspace(-3.0, 5.0, 12).reshape(3, 4)
    for f, g in ((funcad.nn.softmax, jax.nn.softmax), (funcad.nn.logsumexp, jax.nn.logsumexp),
                 (funcad.nn.log_softmax, jax.nn.log_softmax)):
        same(funcad.jit(f)(x), jax.jit(g)(x), rtol=1e-6)
        same(f(x), g(x), rtol=1e-6)
        same(funcad.grad(lambda v: fnp.sum(f(v) ** 2))(x), jax.grad(lambda v: jnp.sum(g(v) ** 2))(x),
             rtol=2e-6)


def test_linear_solve(x32):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 4)) + 4 * np.eye(4)
    b = rng.normal(size=(4,))
    same(fnp.linalg.solve(a, b), jnp.linalg.solve(a, b), rtol=1e-6)
    same(funcad.jit(fnp.linalg.solve)(a, b), jax.jit(jnp.linalg.solve)(a, b), rtol=1e-6)
    gf = funcad.grad(lambda a: fnp.sum(fnp.linalg.solve(a, b)))(a)
    gj = jax.grad(lambda a: jnp.sum(jnp.linalg.solve(a, b)))(a)
    same(gf, gj, rtol=1e-5)


def test_mixed_python_scalars_stay_weak(x32):
    def f(np_):
        return lambda x, n: (x * 2 + 1, x / 3, np_.add(np_.multiply(np_.arange(4), 1.5), n),
                             np_.add(np_.int32(3), n), np_.multiply(n, 0.5), np_.true_divide(n, 2))
    x = np.ones(3, np.float32)
    same(f(fnp)(x, 2), f(jnp)(x, 2))
    same(funcad.jit(f(fnp))(x, 2), jax.jit(f(jnp))(x, 2))


def test_transform_inputs_as_in_jax(x32):
    # JAX's vmap and jvp hand an untouched NumPy input back as it is (float64 here; vjp's
    # identity differs between jax releases, so it is left out).
    x = np.arange(3.0)
    same(funcad.vmap(lambda v: v)(x), jax.vmap(lambda v: v)(x))
    same(funcad.jvp(lambda v: v, (x,), (x,)), jax.jvp(lambda v: v, (x,), (x,)))
    same(funcad.grad(lambda v: fnp.sum(v ** 2))(x), jax.grad(lambda v: jnp.sum(v ** 2))(x))
    same(funcad.hessian(lambda v: fnp.sum(v ** 3))(x), jax.hessian(lambda v: jnp.sum(v ** 3))(x))
    same(funcad.jit(lambda v: v)(x), jax.jit(lambda v: v)(x))
    same(funcad.device_put(x), jax.device_put(x))
    assert str(funcad.make_jaxpr(lambda v: v * 2.0)(x)).count("f32") >= 2


# ------------------------------------------------------------ the op table ----

def _rows():
    from tests.op_table import OPS
    # astype_f64's oracle runs NumPy's astype (x is a NumPy array), not JAX's.
    return [s for s in OPS if s.jax_fun is not None and np.float32 in s.dtypes and s.name != "astype_f64"]


def _check_row(s):
    args = s.args(np.random.default_rng(0), np.float32)
    try:
        b = s.jax_fun(*args)
    except AttributeError:  # an oracle the oldest supported jax lacks
        return
    a = s.fun(*args)
    la = list(a) if isinstance(a, (tuple, list)) else [a]
    lb = list(b) if isinstance(b, (tuple, list)) else [b]
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype, (s.name, x.dtype, y.dtype)
        np.testing.assert_allclose(x, y, rtol=max(1e-4, s.rtol or 0), atol=1e-5, err_msg=s.name)


def test_op_table_rows_in_float32_mode_sample(x32):
    rows = _rows()
    assert len(rows) > 300
    for s in rows[::20]:  # a sample keeps the default suite fast; the slow test runs them all
        _check_row(s)


@pytest.mark.slow
def test_op_table_rows_in_float32_mode_all(x32):
    for s in _rows():
        _check_row(s)


def test_float64_eager_array_made_before_x64_was_turned_off():
    # its own astype method canonicalised it again, forever (blackjax's f64 metric tests)
    x = fnp.ones(3) * 2.0
    with funcad.enable_x64(False):
        assert x.astype(np.float32).dtype == np.float32
        assert x[fnp.array([0, 1])].dtype == np.float32
        assert (x + 1).dtype == np.float32
