"""Reverse mode on a tape (transforms/tape.py): vjp and grad give linearize-then-transpose's
numbers bit for bit, and agree with JAX through control flow, jit, checkpoint and custom
rules, at first and second order, eagerly and composed with jit and vmap."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
from funcad.core.pytree import tree_flatten, tree_unflatten
from funcad.transforms.linearize import linearize_flat
from funcad.transforms.transpose import backward_pass

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def _grad_by_transposition(f):
    """grad of a scalar f of one array, the other way: linearize, then transpose the jaxpr."""
    def g(x):
        out, linear = linearize_flat(lambda v: [f(v)], [x])
        return backward_pass(linear.jaxpr, linear.consts, [fnp.ones_like(out[0])])[0]
    return g


def _mlp(np_):
    def loss(x):
        w = np_.reshape(np_.arange(12.0), (3, 4)) / 10.0
        h = np_.tanh(x @ w)
        return np_.sum(np_.exp(-h * h) * np_.sin(h)) + np_.max(x) * np_.prod(np_.cos(x))
    return loss


def test_grad_is_bitwise_linearize_then_transpose():
    x = np.array([[0.3, -1.2, 0.7], [1.5, 0.1, -0.4]])
    f = _mlp(fnp)
    assert np.array_equal(funcad.grad(f)(x), _grad_by_transposition(f)(x))
    np.testing.assert_allclose(funcad.grad(f)(x), jax.grad(_mlp(jnp))(x), rtol=1e-12)
    # one level of grad by the tape over another by transposition, and the reverse
    h = lambda v: fnp.sum(funcad.grad(lambda u: fnp.sum(fnp.tanh(u) ** 3))(v) * fnp.sin(v))  # noqa: E731
    h_t = lambda v: fnp.sum(_grad_by_transposition(lambda u: fnp.sum(fnp.tanh(u) ** 3))(v) * fnp.sin(v))  # noqa: E731
    y = x[0]
    assert np.array_equal(funcad.grad(h)(y), _grad_by_transposition(h_t)(y))
    assert np.array_equal(funcad.grad(h)(y), funcad.grad(h_t)(y))


def _control(L, np_):
    def f(x):
        c = L.cond(np_.sum(x) > 0, lambda v: np_.sin(v) * v, lambda v: np_.cos(v), x)
        carry, ys = L.scan(lambda a, v: (a * np_.tanh(v) + v, a * v), x[0], x)
        z = L.fori_loop(0, 3, lambda i, a: a * 0.9 + np_.sin(a), carry)
        return np_.sum(c * ys) + z
    return f


@pytest.mark.parametrize("x", [[0.4, -0.3, 1.1], [-2.0, 0.5, -0.7]])
def test_control_flow_under_eager_grad_orders_1_and_2(x):
    x = np.array(x)
    f, jf = _control(lax, fnp), _control(jax.lax, jnp)
    np.testing.assert_allclose(funcad.grad(f)(x), jax.grad(jf)(x), rtol=1e-12)
    np.testing.assert_allclose(funcad.hessian(f)(x), jax.hessian(jf)(x), rtol=1e-10, atol=1e-12)
    # reverse over reverse, each level on its own tape
    gg = funcad.grad(lambda v: fnp.sum(funcad.grad(f)(v) ** 2))(x)
    np.testing.assert_allclose(gg, jax.grad(lambda v: jnp.sum(jax.grad(jf)(v) ** 2))(x), rtol=1e-10)
    np.testing.assert_allclose(funcad.jit(funcad.grad(f))(x), jax.grad(jf)(x), rtol=1e-12)
    np.testing.assert_allclose(funcad.vmap(funcad.grad(f))(np.stack([x, -x])),
                               jax.vmap(jax.grad(jf))(np.stack([x, -x])), rtol=1e-12)


def test_jit_and_checkpoint_inside_eager_grads():
    inner = funcad.jit(lambda v: fnp.sin(v) * fnp.exp(v))
    f = lambda v: fnp.sum(funcad.checkpoint(lambda u: fnp.tanh(fnp.cos(u)) ** 2)(v) * inner(v))  # noqa: E731
    jinner = jax.jit(lambda v: jnp.sin(v) * jnp.exp(v))
    jf = lambda v: jnp.sum(jax.checkpoint(lambda u: jnp.tanh(jnp.cos(u)) ** 2)(v) * jinner(v))  # noqa: E731
    x = np.array([0.2, -0.9])
    np.testing.assert_allclose(funcad.grad(f)(x), jax.grad(jf)(x), rtol=1e-12)
    g2 = funcad.grad(lambda v: fnp.sum(funcad.grad(f)(v)))(x)
    np.testing.assert_allclose(g2, jax.grad(lambda v: jnp.sum(jax.grad(jf)(v)))(x), rtol=1e-10)


def test_custom_rules_under_eager_grads():
    @funcad.custom_jvp
    def soft(x):
        return fnp.log1p(fnp.exp(x))

    soft.defjvp(lambda p, t: (soft(p[0]), t[0] * lax.logistic(p[0])))

    @funcad.custom_vjp
    def clip_grad(x):
        return fnp.sin(x)

    clip_grad.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), lambda c, g: (fnp.clip(g * c, -0.5, 0.5),))

    @jax.custom_jvp
    def jsoft(x):
        return jnp.log1p(jnp.exp(x))

    jsoft.defjvp(lambda p, t: (jsoft(p[0]), t[0] * jax.nn.sigmoid(p[0])))

    @jax.custom_vjp
    def jclip_grad(x):
        return jnp.sin(x)

    jclip_grad.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (jnp.clip(g * c, -0.5, 0.5),))
    f = lambda v: fnp.sum(soft(v) * clip_grad(2.0 * v))  # noqa: E731
    jf = lambda v: jnp.sum(jsoft(v) * jclip_grad(2.0 * v))  # noqa: E731
    x = np.array([0.3, -1.4, 2.2])
    np.testing.assert_allclose(funcad.grad(f)(x), jax.grad(jf)(x), rtol=1e-12)
    d2 = funcad.grad(funcad.grad(lambda v: soft(v) * fnp.sin(v)))(0.7)
    np.testing.assert_allclose(d2, jax.grad(jax.grad(lambda v: jsoft(v) * jnp.sin(v)))(0.7), rtol=1e-12)


def test_pullback_reused_batched_and_jitted():
    f, jf = _mlp(fnp), _mlp(jnp)
    x = np.array([[0.5, -0.2, 0.8]])
    y, pull = funcad.vjp(lambda v: fnp.tanh(v) * f(v), x)
    jy, jpull = jax.vjp(lambda v: jnp.tanh(v) * jf(v), x)
    cts = np.array([[[1.0, 2.0, -1.0]], [[0.5, 0.0, 3.0]]])
    for ct in cts:  # called twice: the tape is walked again
        np.testing.assert_allclose(pull(ct)[0], jpull(ct)[0], rtol=1e-12)
    np.testing.assert_allclose(funcad.vmap(pull)(cts)[0], jax.vmap(jpull)(cts)[0], rtol=1e-12)
    np.testing.assert_allclose(funcad.jit(pull)(cts[1])[0], jpull(cts[1])[0], rtol=1e-12)


def test_vjp_in_nzs_and_integer_inputs_as_jax():
    f = lambda a, n, b: (a * b * n, fnp.sin(b))  # noqa: E731
    args = (np.array([1.5, -2.0]), np.int32(3), np.array([0.25, 4.0]))
    _, pull = funcad.vjp(f, *args, in_nzs=(False, False, True))
    ga, gn, gb = pull((np.ones(2), np.ones(2)))
    _, jpull = jax.vjp(lambda a, n, b: (a * b * n, jnp.sin(b)), *args)
    ja, jn, jb = jpull((np.ones(2), np.ones(2)))
    np.testing.assert_allclose(gb, jb, rtol=1e-12)
    assert not np.any(ga) and gn.dtype == jn.dtype and pull.out_nzs == (True, True)


def test_tangent_types_follow_x64_and_weak_types():
    # the tape keeps each output type by its inputs' types and the x64 mode: a gradient
    # taken with x64 on, then off, then on again, has JAX's dtypes each time
    f = lambda v: fnp.sum(fnp.tanh(v) * 2.0 + v * v)  # noqa: E731
    jf = lambda v: jnp.sum(jnp.tanh(v) * 2.0 + v * v)  # noqa: E731
    x = np.array([0.5, -1.5])
    for on in (True, False, True):
        with jax.enable_x64(on), funcad.enable_x64(on):
            g, jg = funcad.grad(f)(x), jax.grad(jf)(x)
            d2, jd2 = funcad.grad(funcad.grad(lambda s: s * 3.0))(1.5), jax.grad(jax.grad(lambda s: s * 3.0))(1.5)
            assert g.dtype == jg.dtype and d2.dtype == jd2.dtype
            np.testing.assert_allclose(g, jg, rtol=1e-6)
            assert float(d2) == float(jd2) == 0.0


def _frames_below(fun):
    """`fun` recording how many frames deep it is called, counted from the caller of
    `_frames_below`."""
    import sys
    base = len(_stack(sys._getframe(1)))
    seen = []

    def probe(x):
        seen.append(len(_stack(sys._getframe())) - base)
        return fun(x)
    return probe, seen


def _stack(frame):
    out = []
    while frame is not None:
        out.append(frame)
        frame = frame.f_back
    return out


@pytest.mark.parametrize("transform", [funcad.grad, funcad.value_and_grad])
def test_each_grad_level_adds_two_frames(transform):
    # A nested eager derivative keeps every level's frames on the stack under each of its
    # operations; past CPython's 16 KB frame chunk each new chunk is an mmap, which made
    # the 5th derivative 30% slower from some caller depths. grad calls the function
    # itself: the API boundary and grad's own frame, no wrappers in between.
    probe, seen = _frames_below(fnp.tanh)
    f = probe
    for _ in range(3):
        f = funcad.grad(f)
    f = transform(f)
    f(0.3)
    assert seen[0] == 1 + 4 * 2  # the probe, then two frames per level


@pytest.mark.parametrize("argnums", [0, 1, (0, 2), (2, 0), -1])
@pytest.mark.parametrize("has_aux", [False, True])
def test_grad_pytrees_argnums_aux_keywords_as_jax(argnums, has_aux):
    def make(np_):
        def f(a, b, c, scale=1.0):
            out = scale * np_.sum(np_.sin(a["x"]) * b[0] + c * b[1] ** 2)
            return (out, {"c": c * 2.0, "n": 3}) if has_aux else out
        return f
    args = ({"x": np.array([0.5, -1.0])}, (np.array(2.0), np.array([1.5, 0.5])), np.array(0.7))
    for fun, jfun in ((funcad.grad, jax.grad), (funcad.value_and_grad, jax.value_and_grad)):
        got = fun(make(fnp), argnums=argnums, has_aux=has_aux)(*args, scale=3.0)
        want = jfun(make(jnp), argnums=argnums, has_aux=has_aux)(*args, scale=3.0)
        assert funcad.tree.structure(got) == funcad.tree.structure(want)
        for g, w in zip(funcad.tree.leaves(got), jax.tree.leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-12)


def test_grad_errors_leave_no_trace_current():
    # the function raising inside grad, or returning a non-scalar, leaves funcad's trace
    # state as it was: the next eager call runs eagerly
    from funcad.core.trace import ctx
    with pytest.raises(ZeroDivisionError):
        funcad.grad(lambda x: x / 0 if isinstance(x, float) else 1 / 0)(1.0)
    with pytest.raises(TypeError, match="scalar output"):
        funcad.grad(lambda x: fnp.stack([x, x]))(1.0)
    with pytest.raises(TypeError, match="must return a pair"):
        funcad.grad(lambda x: x, has_aux=True)(1.0)
    assert ctx.trace is None
    assert type(fnp.sin(np.ones(2))) is type(fnp.sin(fnp.ones(2)))
