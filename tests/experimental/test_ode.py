"""funcad.experimental.ode.odeint against jax.experimental.ode.odeint: values, adjoint
gradients, pytrees, jit, vmap, grad of jit, mxstep/hmax and errors."""
import warnings

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.experimental.ode import odeint

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
jodeint = pytest.importorskip("jax.experimental.ode").odeint


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def tree_close(a, b, **kw):
    la, ta = funcad.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert len(la) == len(lb), (ta, tb)
    for x, y in zip(la, lb):
        assert np.shape(x) == np.shape(y)
        close(x, y, **kw)


def decay(np_):
    return lambda y, t, k: -k * y


def lotka_volterra(np_):
    def f(y, t, a, b, c, d):
        prey, pred = y[0], y[1]
        return np_.stack([a * prey - b * prey * pred, c * prey * pred - d * pred])
    return f


def pytree_system(np_):
    # A damped oscillator and a driven scalar in a dict state, parameters in a dict.
    def f(y, t, p):
        x, v = y["pos"][0], y["pos"][1]
        return {"pos": np_.stack([v, -p["w"] ** 2 * x - p["c"] * v]),
                "z": np_.sin(t) - p["c"] * y["z"]}
    return f


TS = np.array([0.0, 0.3, 0.7, 1.0])
LV_Y0, LV_ARGS = np.array([1.0, 0.5]), (1.1, 0.4, 0.3, 0.9)
TREE_Y0 = {"pos": np.array([1.0, 0.0]), "z": np.array([[0.5, -0.2]])}
TREE_P = {"w": 2.0, "c": np.array(0.3)}


# ------------------------------------------------------------ values ----

def test_exponential_decay_tight_tolerance_matches_jax_and_exp():
    ts = np.linspace(0.0, 2.0, 6)
    ys = odeint(decay(fnp), np.array([1.0, -2.0]), ts, 0.7)
    close(ys, jodeint(decay(jnp), jnp.array([1.0, -2.0]), jnp.array(ts), 0.7), rtol=1e-13, atol=1e-15)
    close(ys, np.exp(-0.7 * ts)[:, None] * np.array([1.0, -2.0]), rtol=1e-7)
    assert ys.shape == (6, 2) and ys.dtype == np.float64


def test_lotka_volterra_values_match_jax():
    kw = dict(rtol=1e-6, atol=1e-6)
    ys = odeint(lotka_volterra(fnp), LV_Y0, TS, *LV_ARGS, **kw)
    close(ys, jodeint(lotka_volterra(jnp), jnp.array(LV_Y0), jnp.array(TS), *LV_ARGS, **kw))


def test_pytree_state_and_args_match_jax():
    kw = dict(rtol=1e-6, atol=1e-6)
    ys = odeint(pytree_system(fnp), TREE_Y0, TS, TREE_P, **kw)
    jys = jodeint(pytree_system(jnp), jax.tree.map(jnp.asarray, TREE_Y0), jnp.array(TS), TREE_P, **kw)
    assert set(ys) == {"pos", "z"} and ys["pos"].shape == (4, 2) and ys["z"].shape == (4, 1, 2)
    tree_close(ys, jys)


def test_float32_state_and_single_time():
    y0 = np.array([1.0, 2.0], np.float32)
    ys = odeint(decay(fnp), y0, np.array([0.0, 0.5]), np.float32(1.5), rtol=1e-5, atol=1e-5)
    jys = jodeint(decay(jnp), jnp.asarray(y0), jnp.array([0.0, 0.5]), np.float32(1.5), rtol=1e-5, atol=1e-5)
    assert ys.dtype == np.float32
    close(ys, jys, rtol=1e-6)
    with funcad.enable_x64(False):  # JAX's default mode: float64 inputs compute in float32
        ys32 = odeint(decay(fnp), y0.astype(np.float64), np.array([0.0, 0.5]), 1.5, rtol=1e-5, atol=1e-5)
    assert ys32.dtype == np.float32
    close(ys32, jys, rtol=1e-6)
    one = odeint(decay(fnp), y0, np.array([0.25]), 1.0)
    assert one.shape == (1, 2)
    close(one, y0[None], rtol=0, atol=0)
    close(odeint(decay(fnp), 1.0, [0.0, 0.5], 1.5), np.exp([0.0, -0.75]), rtol=1e-7)  # t as a list


def test_mxstep_stops_a_stiff_problem_where_jax_does():
    # y' = -500 (y - cos t): the explicit method needs many small steps.
    f = lambda y, t, np_: -500.0 * (y - np_.cos(t))  # noqa: E731
    ts = np.array([0.0, 0.5, 1.0])
    for mxstep in (5, 40):
        ys = odeint(lambda y, t: f(y, t, fnp), 0.0, ts, rtol=1e-4, atol=1e-4, mxstep=mxstep)
        jys = jodeint(lambda y, t: f(y, t, jnp), 0.0, jnp.array(ts), rtol=1e-4, atol=1e-4, mxstep=mxstep)
        close(ys, jys)
    assert abs(float(ys[-1]) - np.cos(1.0)) > 1e-2  # cut short: not yet near the slow manifold


def test_hmax_limits_the_step_as_jax():
    kw = dict(rtol=1e-5, atol=1e-5, hmax=0.05)
    ys = odeint(lotka_volterra(fnp), LV_Y0, TS, *LV_ARGS, **kw)
    close(ys, jodeint(lotka_volterra(jnp), jnp.array(LV_Y0), jnp.array(TS), *LV_ARGS, **kw))


def test_a_constant_solution_takes_the_guarded_branches_without_warnings():
    # func == 0: the initial-step and step-control formulas divide by zero in branches
    # that `where` discards; eager NumPy must not warn, and the result is exact.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = lambda y, t, k: 0.0 * k * y  # noqa: E731
        ys = odeint(f, np.array([1.0, -1.0]), TS, 2.0)
        g = funcad.grad(lambda y0, k: fnp.sum(odeint(f, y0, TS, k)), argnums=(0, 1))(np.zeros(2), 2.0)
    close(ys, np.tile([1.0, -1.0], (4, 1)), rtol=0, atol=0)
    close(g[0], [4.0, 4.0], rtol=0, atol=0)
    close(g[1], 0.0, rtol=0, atol=0)


# ------------------------------------------------------------ gradients ----

def _lv_loss(odeint_, np_):
    def loss(y0, ts, a, b):
        ys = odeint_(lotka_volterra(np_), y0, ts, a, b, 0.3, 0.9, rtol=1e-7, atol=1e-7)
        return np_.sum(ys ** 2 * np_.array([[1.0, 2.0]]))
    return loss


def test_adjoint_gradients_wrt_y0_t_and_args_match_jax():
    g = funcad.grad(_lv_loss(odeint, fnp), argnums=(0, 1, 2, 3))(LV_Y0, TS, 1.1, 0.4)
    jg = jax.grad(_lv_loss(jodeint, jnp), argnums=(0, 1, 2, 3))(jnp.array(LV_Y0), jnp.array(TS), 1.1, 0.4)
    for a, b in zip(g, jg):
        close(a, b, rtol=1e-8, atol=1e-10)
    # and against central differences in a parameter
    loss, eps = _lv_loss(odeint, fnp), 1e-5
    fd = (loss(LV_Y0, TS, 1.1 + eps, 0.4) - loss(LV_Y0, TS, 1.1 - eps, 0.4)) / (2 * eps)
    close(g[2], fd, rtol=1e-5)


def test_pytree_gradients_match_jax():
    def loss(odeint_, np_):
        def f(y0, p):
            ys = odeint_(pytree_system(np_), y0, TS, p, rtol=1e-7, atol=1e-7)
            return np_.sum(ys["pos"][-1] ** 2) + np_.sum(np_.cos(ys["z"]))
        return f
    g = funcad.grad(loss(odeint, fnp), argnums=(0, 1))(TREE_Y0, TREE_P)
    jg = jax.grad(loss(jodeint, jnp), argnums=(0, 1))(jax.tree.map(jnp.asarray, TREE_Y0),
                                                     {"w": 2.0, "c": jnp.array(0.3)})
    tree_close(g, jg, rtol=1e-8, atol=1e-10)


def test_gradient_through_a_closed_over_value():
    # func closes over a traced value of the outer grad: closure conversion hoists it.
    def loss(odeint_, np_):
        return lambda k: odeint_(lambda y, t: -k * y + np_.sin(t), 1.0, np_.array(TS), rtol=1e-7, atol=1e-7)[-1]
    close(funcad.grad(loss(odeint, fnp))(0.8), jax.grad(loss(jodeint, jnp))(0.8), rtol=1e-8)


def test_second_order_and_jacobian_wrt_times_match_jax():
    # grad of grad differentiates the adjoint pass (itself odeint's custom_vjp);
    # jacrev over t batches the backward pass.
    def loss(odeint_, np_):
        return lambda k: odeint_(lambda y, t: -k * y * y, 1.0, np_.array(TS), rtol=1e-8, atol=1e-8)[-1]
    close(funcad.grad(funcad.grad(loss(odeint, fnp)))(0.8), jax.grad(jax.grad(loss(jodeint, jnp)))(0.8),
          rtol=1e-8)
    f = lambda np_: lambda y, t: -y * np_.cos(t)  # noqa: E731
    close(funcad.jacrev(lambda ts: odeint(f(fnp), 1.0, ts))(TS),
          jax.jacrev(lambda ts: jodeint(f(jnp), 1.0, ts))(jnp.array(TS)), rtol=1e-8, atol=1e-12)


def test_integer_args_pass_through_and_are_not_differentiated():
    f = lambda y, t, k, n: -k * y * n  # noqa: E731
    g = funcad.grad(lambda y0: odeint(f, y0, np.array([0.0, 1.0]), 0.5, 2)[-1])(1.0)
    close(g, np.exp(-1.0), rtol=1e-7)


# ------------------------------------------------------------ transformations ----

def test_jit_and_grad_of_jit_match_jax():
    ts = np.array([0.0, 0.5, 1.0])
    run = funcad.jit(lambda y0, a: odeint(lotka_volterra(fnp), y0, ts, a, 0.4, 0.3, 0.9, rtol=1e-6, atol=1e-6))
    jrun = lambda y0, a: jodeint(lotka_volterra(jnp), y0, jnp.array(ts), a, 0.4, 0.3, 0.9,  # noqa: E731
                                 rtol=1e-6, atol=1e-6)
    close(run(LV_Y0, 1.1), jrun(jnp.array(LV_Y0), 1.1))
    g = funcad.grad(lambda y0, a: fnp.sum(run(y0, a)[-1]), argnums=(0, 1))(LV_Y0, 1.1)
    jg = jax.grad(lambda y0, a: jnp.sum(jrun(y0, a)[-1]), argnums=(0, 1))(jnp.array(LV_Y0), 1.1)
    for a, b in zip(g, jg):
        close(a, b, rtol=1e-8, atol=1e-10)


def test_vmap_over_y0_and_over_args_equals_a_loop():
    ts = np.array([0.0, 0.4, 0.8])
    f = lotka_volterra(fnp)
    y0s = np.array([[1.0, 0.5], [0.3, 1.2], [2.0, 0.1]])
    out = funcad.vmap(lambda y0: odeint(f, y0, ts, *LV_ARGS, rtol=1e-6, atol=1e-6))(y0s)
    for y0, row in zip(y0s, out):
        close(row, odeint(f, y0, ts, *LV_ARGS, rtol=1e-6, atol=1e-6), rtol=1e-12)
    a_s = np.array([0.5, 1.1, 1.7])
    out = funcad.vmap(lambda a: odeint(f, LV_Y0, ts, a, 0.4, 0.3, 0.9, rtol=1e-6, atol=1e-6))(a_s)
    jout = jax.vmap(lambda a: jodeint(lotka_volterra(jnp), jnp.array(LV_Y0), jnp.array(ts), a, 0.4, 0.3, 0.9,
                                      rtol=1e-6, atol=1e-6))(jnp.array(a_s))
    close(out, jout)


# ------------------------------------------------------------ errors, docs ----


def test_errors_name_the_problem():
    ts = np.array([0.0, 1.0])
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(decay(fnp), 1.0, np.arange(3), 1.0)
    with pytest.raises(TypeError, match="func must be a callable"):
        odeint(3, 1.0, ts)
    with pytest.raises(TypeError, match=r"odeint \*args must be arrays or scalars, but got a\."):
        odeint(lambda y, t, s: -y, 1.0, ts, "a")
    with pytest.raises(TypeError, match="y0 must hold floating-point"):
        odeint(decay(fnp), 1, ts, 1.0)
    with pytest.raises(TypeError, match="1-D array of times"):
        odeint(decay(fnp), 1.0, np.float64(1.0), 1.0)
    with pytest.raises(TypeError, match="output must not be wider than y0"):
        odeint(lambda y, t: (-y).astype(np.float64), np.float32(1.0), ts)
    with pytest.raises(TypeError, match="forward-mode.*odeint"):
        funcad.jvp(lambda y0: odeint(decay(fnp), y0, ts, 1.0), (1.0,), (1.0,))
