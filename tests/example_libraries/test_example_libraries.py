"""funcad.example_libraries against jax.example_libraries: stax parameters equal to
JAX's (funcad.random draws the same bits), layer outputs, gradients to order 2, jit
and vmap; every optimizer's trajectory, the schedules and the state utilities."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
import funcad.random as fr
from funcad.core.errors import FuncadTypeError, FuncadValueError
from funcad.example_libraries import optimizers as fo
from funcad.example_libraries import stax as fs

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
from jax.example_libraries import optimizers as jo  # noqa: E402
from jax.example_libraries import stax as js  # noqa: E402


def _leaves_close(ours, ref, rtol=1e-12, atol=1e-14):
    a, b = funcad.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(ref)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def _cnn(s):
    return s.serial(s.Conv(6, (3, 3), padding="SAME"), s.BatchNorm(), s.Relu, s.MaxPool((2, 2), (2, 2)),
                    s.GeneralConv(("NHWC", "OIHW", "NHWC"), 4, (2, 2), (1, 2), "SAME"), s.Tanh,
                    s.AvgPool((2, 2), padding="SAME"), s.SumPool((1, 2)), s.ConvTranspose(3, (2, 2), (2, 2)),
                    s.Elu, s.Flatten, s.Dense(12), s.Gelu,
                    s.FanOut(3), s.parallel(s.Dense(5), s.Identity,
                                            s.serial(s.Dense(4), s.Softplus)),
                    s.FanInConcat(), s.Dropout(0.8), s.LeakyRelu, s.Dense(3), s.Selu, s.Sigmoid, s.Exp,
                    s.LogSoftmax)


def _mlp(s):
    return s.serial(s.Dense(8), s.Relu, s.FanOut(2), s.parallel(s.Dense(8), s.Identity), s.FanInSum,
                    s.Dense(3), s.Softmax)


@pytest.fixture(scope="module")
def cnn():
    """The CNN of every layer type, initialised by funcad (eagerly) and by JAX (jitted)."""
    (f_init, f_apply), (j_init, j_apply) = _cnn(fs), _cnn(js)
    f_shape, f_params = f_init(fr.PRNGKey(7), (4, 8, 8, 2))
    j_shape, j_params = jax.jit(j_init, static_argnums=1)(jax.random.PRNGKey(7), (4, 8, 8, 2))
    return f_apply, f_shape, f_params, jax.jit(j_apply), j_shape, j_params


def test_stax_init_equals_jax_bit_for_bit_and_apply_matches(cnn):
    f_apply, f_shape, f_params, j_apply, j_shape, j_params = cnn
    assert tuple(map(int, f_shape)) == tuple(map(int, j_shape))
    _leaves_close(f_params, j_params, rtol=1e-15, atol=0)
    x = np.random.default_rng(0).standard_normal((4, 8, 8, 2))
    out = f_apply(f_params, x, rng=fr.PRNGKey(3))
    ref = j_apply(j_params, x, rng=jax.random.PRNGKey(3))
    assert out.shape == tuple(map(int, j_shape))
    np.testing.assert_allclose(out, ref, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(funcad.jit(f_apply)(f_params, x, rng=fr.PRNGKey(3))), ref, rtol=1e-10)


def _cnn_losses(cnn):
    f_apply, _, f_params, j_apply, _, j_params = cnn
    labels = np.eye(3)[[0, 2, 1, 1]]

    def loss(apply, key):
        return lambda params, x: -(apply(params, x, rng=key) * labels).sum()
    return loss(f_apply, fr.PRNGKey(5)), f_params, loss(j_apply, jax.random.PRNGKey(5)), j_params


def test_stax_gradients_match_jax(cnn):
    f_loss, f_params, j_loss, j_params = _cnn_losses(cnn)
    x = np.random.default_rng(1).standard_normal((4, 8, 8, 2))
    _leaves_close(funcad.grad(f_loss)(f_params, x), jax.jit(jax.grad(j_loss))(j_params, x), rtol=1e-8, atol=1e-12)


@pytest.mark.slow
def test_stax_jit_gradients_and_order_2_match_jax(cnn):
    f_loss, f_params, j_loss, j_params = _cnn_losses(cnn)
    rng = np.random.default_rng(1)
    x, t = rng.standard_normal((4, 8, 8, 2)), rng.standard_normal((4, 8, 8, 2))
    ref = jax.jit(jax.grad(j_loss))(j_params, x)
    _leaves_close(funcad.jit(funcad.grad(f_loss))(f_params, x), ref, rtol=1e-8, atol=1e-12)
    # Order 2: a Hessian-vector product in the input, forward over reverse.
    hv = funcad.jvp(lambda x: funcad.grad(f_loss, 1)(f_params, x), (x,), (t,))[1]
    ref = jax.jit(lambda x, t: jax.jvp(lambda x: jax.grad(j_loss, 1)(j_params, x), (x,), (t,))[1])(x, t)
    np.testing.assert_allclose(hv, ref, rtol=1e-7, atol=1e-10)


def test_stax_vmap_per_example_matches_a_loop():
    init, apply = _mlp(fs)
    _, params = init(fr.PRNGKey(0), (-1, 5))
    xs = np.random.default_rng(0).standard_normal((6, 1, 5))
    out = funcad.vmap(apply, (None, 0))(params, xs)
    np.testing.assert_allclose(out, np.stack([apply(params, x) for x in xs]), rtol=1e-13)
    j_init, j_apply = _mlp(js)
    _, j_params = j_init(jax.random.PRNGKey(0), (-1, 5))
    np.testing.assert_allclose(out, jax.vmap(j_apply, (None, 0))(j_params, xs), rtol=1e-12)


def test_stax_layer_options_match_jax():
    x = np.random.default_rng(0).standard_normal((3, 6, 5, 4))
    for layer in [lambda s: s.BatchNorm(axis=(0, 1), center=False), lambda s: s.BatchNorm(scale=False),
                  lambda s: s.BatchNorm(center=False, scale=False), lambda s: s.MaxPool((2, 3), (1, 2), "SAME"),
                  lambda s: s.AvgPool((3, 2), padding="SAME", spec="NCHW"), lambda s: s.FanOut(1),
                  lambda s: s.GeneralConvTranspose(("NCHW", "IOHW", "NCHW"), 2, (2, 3), (2, 1), "SAME"),
                  lambda s: s.Dropout(0.5, mode="test"),
                  lambda s: s.shape_dependent(lambda shape: s.Dense(shape[-1] * 2)),
                  lambda s: s.elementwise(lambda x, p: x ** p, p=3)]:
        (fi, fa), (ji, ja) = layer(fs), layer(js)
        f_shape, f_params = fi(fr.PRNGKey(2), x.shape)
        j_shape, j_params = ji(jax.random.PRNGKey(2), x.shape)
        _leaves_close(f_params, j_params, rtol=1e-15, atol=0)
        out = fa(f_params, x, rng=fr.PRNGKey(0))
        shapes = [np.shape(o) for o in out] if isinstance(out, list) else np.shape(out)
        assert shapes == ([tuple(map(int, s)) for s in j_shape] if isinstance(j_shape, list)
                          else tuple(map(int, j_shape)))
        _leaves_close(out, ja(j_params, x, rng=jax.random.PRNGKey(0)), rtol=1e-11, atol=1e-12)
    x1 = np.random.default_rng(1).standard_normal((2, 5, 3))
    (fi, fa), (ji, ja) = fs.Conv1DTranspose(4, (3,), (2,), "SAME"), js.Conv1DTranspose(4, (3,), (2,), "SAME")
    (f_shape, f_params), (j_shape, j_params) = fi(fr.PRNGKey(0), x1.shape), ji(jax.random.PRNGKey(0), x1.shape)
    assert tuple(f_shape) == tuple(map(int, j_shape))
    _leaves_close(fa(f_params, x1), ja(j_params, x1), rtol=1e-12)


def test_dropout_needs_a_key():
    _, apply = fs.Dropout(0.5)
    with pytest.raises(FuncadValueError, match="rng=key"):
        apply((), np.ones(3))


# ------------------------------------------------------------ optimizers ----

OPTIMIZERS = {
    "sgd": lambda o: o.sgd(0.1),
    "sgd_schedule": lambda o: o.sgd(o.exponential_decay(0.2, 3, 0.5)),
    "momentum": lambda o: o.momentum(0.05, 0.9),
    "nesterov": lambda o: o.nesterov(o.inverse_time_decay(0.05, 2, 0.5, staircase=True), 0.8),
    "adagrad": lambda o: o.adagrad(0.3),
    "rmsprop": lambda o: o.rmsprop(0.02, gamma=0.8),
    "rmsprop_momentum": lambda o: o.rmsprop_momentum(0.01, momentum=0.5),
    "adam": lambda o: o.adam(o.polynomial_decay(0.1, 4, 0.01, power=2.0)),
    "adamax": lambda o: o.adamax(0.05, b1=0.8),
    "sm3": lambda o: o.sm3(0.2, momentum=0.7),
}


def _loss(np_):
    return lambda p: np_.sum(np_.sin(p["w"]) * p["w"] ** 2) + np_.sum(p["b"] ** 4) + p["s"] ** 2


_P0 = {"w": np.linspace(-1.0, 1.5, 6).reshape(2, 3), "b": np.array([0.5, -1.2, 2.0]), "s": np.array(1.5)}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_trajectory_matches_jax(name):
    import jax.numpy as jnp
    results = []
    for opt, np_, grad, jit in [(fo, fnp, funcad.grad, funcad.jit), (jo, jnp, jax.grad, jax.jit)]:
        init, update, get_params = OPTIMIZERS[name](opt)
        g = grad(_loss(np_))
        state = init(_P0)
        step = jit(lambda i, s: update(i, g(get_params(s)), s))
        # Eager for three steps, then jitted (a traced step index). sm3 keeps the parameter's
        # shape in its state, so its get_params cannot be jitted (in JAX neither).
        for i in range(6):
            state = update(i, g(get_params(state)), state) if i < 3 or name == "sm3" else step(i, state)
        results.append(get_params(state))
    _leaves_close(results[0], results[1], rtol=1e-12, atol=1e-14)


def test_schedules_match_jax():
    for make in [lambda o: o.constant(0.3), lambda o: o.exponential_decay(0.5, 4, 0.3),
                 lambda o: o.inverse_time_decay(0.5, 3, 0.7), lambda o: o.inverse_time_decay(0.5, 3, 0.7, True),
                 lambda o: o.polynomial_decay(1.0, 5, 0.1, 0.5), lambda o: o.piecewise_constant([2, 5], [1.0, 0.3, 0.1]),
                 lambda o: o.make_schedule(0.25)]:
        for i in [0, 1, 2, 3, 5, 6, 9]:
            np.testing.assert_allclose(np.asarray(make(fo)(i)), np.asarray(make(jo)(i)), rtol=1e-14)
        sched = make(fo)
        np.testing.assert_allclose(np.asarray(funcad.jit(sched)(np.int64(3))), np.asarray(make(jo)(3)), rtol=1e-14)


def test_utilities_match_jax():
    tree = {"a": np.array([3.0, -4.0]), "b": [np.array(12.0)]}
    np.testing.assert_allclose(fo.l2_norm(tree), jo.l2_norm(tree), rtol=1e-15)
    for max_norm in [1.0, 100.0]:
        _leaves_close(fo.clip_grads(tree, max_norm), jo.clip_grads(tree, max_norm))
    init, update, get_params = fo.adam(0.1)
    state = update(0, _P0, init(_P0))
    marked = fo.unpack_optimizer_state(state)
    assert isinstance(marked["w"], fo.JoinPoint) and len(marked["w"].subtree) == 3
    again = fo.pack_optimizer_state(marked)
    _leaves_close(get_params(update(1, _P0, again)), get_params(update(1, _P0, state)), rtol=0, atol=0)
    leaves, treedef = funcad.tree_util.tree_flatten(state)
    assert isinstance(funcad.tree_util.tree_unflatten(treedef, leaves), fo.OptimizerState)
    assert len(leaves) == 9  # (x, m, v) per parameter leaf


def test_optimizer_errors_explain():
    init, update, _ = fo.sgd(0.1)
    state = init({"a": 1.0, "b": 2.0})
    with pytest.raises(FuncadTypeError, match="does not match"):
        update(0, {"a": 1.0}, state)
    with pytest.raises(FuncadTypeError, match="scalar or a schedule"):
        fo.sgd(np.ones(2))
    with pytest.raises(FuncadValueError, match="one entry more"):
        fo.piecewise_constant([1, 2], [1.0, 2.0])
    with pytest.raises(FuncadTypeError, match="JoinPoints"):
        fo.pack_optimizer_state({"a": 1.0})


@pytest.mark.parametrize("init,red,window,strides,padding", [
    (-np.inf, "max", (2, 2), (2, 2), "VALID"), (-np.inf, "max", (2, 3), (1, 1), "SAME"),
    (np.inf, "min", (3, 2), (1, 2), [(1, 1), (0, 1)])])
def test_pooling_derivatives_at_ties_match_jax(init, red, window, strides, padding):
    # Ties are common in pooling (saturated pixels, relu zeros): JAX passes each window's
    # whole tangent to its first extreme entry, to every order; funcad too.
    x = np.array([[1., 1., 0., 2.], [1., 0., 2., 2.], [3., 3., 3., 3.]])

    def f(lax):
        return lambda x: (lax.reduce_window(x, init, getattr(lax, red), window, strides, padding) ** 3).sum()
    ref = jax.jit(jax.grad(f(jax.lax)))(x)
    np.testing.assert_array_equal(funcad.grad(f(funcad.lax))(x), ref)
    np.testing.assert_array_equal(np.asarray(funcad.jit(funcad.grad(f(funcad.lax)))(x)), ref)
    np.testing.assert_array_equal(funcad.hessian(f(funcad.lax))(x), jax.jit(jax.hessian(f(jax.lax)))(x))
    xs = np.stack([x, -x])
    np.testing.assert_array_equal(funcad.vmap(funcad.grad(f(funcad.lax)))(xs),
                                  jax.jit(jax.vmap(jax.grad(f(jax.lax))))(xs))
