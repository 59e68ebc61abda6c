"""Control flow: cond, switch, while_loop, fori_loop, scan, map and checkpoint.

Four programs (piecewise functions via cond/switch, an RNN via scan, Newton's
method via while_loop, an ODE integrator via fori_loop) are checked for
values, grad, jvp, Hessian-vector products, jit and vmap against JAX (x64)
and finite differences; then reverse mode through while loops (which JAX
lacks), checkpoint's memory, printing, lowering and errors.
"""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import lax
from funcad.core.trace import typecheck
from funcad.test_util import check_grads

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(0)
TOL = dict(rtol=1e-9, atol=1e-11)


def close(a, b, **kw):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), **(kw or TOL))


def central(f, x, eps=1e-6):
    """Gradient of a scalar f by central differences."""
    x = np.asarray(x, float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g

# ----------------------------------------------------------- piecewise (cond) ----


def piece(x):
    return lax.cond(x > 0.5, lambda v: fnp.sin(3 * v) * v, lambda v: v ** 3 - fnp.exp(-v), x)


def jpiece(x):
    return jax.lax.cond(x > 0.5, lambda v: jnp.sin(3 * v) * v, lambda v: v ** 3 - jnp.exp(-v), x)


def tri(i, x, w):
    return lax.switch(i, [lambda x: fnp.sum(w * x), lambda x: fnp.sum(fnp.sin(x) * w ** 2),
                          lambda x: fnp.prod(x) + w[0]], x)


def jtri(i, x, w):
    return jax.lax.switch(i, [lambda x: jnp.sum(w * x), lambda x: jnp.sum(jnp.sin(x) * w ** 2),
                              lambda x: jnp.prod(x) + w[0]], x)


PIECE_XS = np.array([-0.3, 0.2, 0.9, 1.7])


@jax.jit
@jax.vmap
def jpiece_ref(x):
    return (jpiece(x), jax.grad(jpiece)(x), jax.grad(jax.grad(jpiece))(x),
            jax.jvp(jpiece, (x,), (0.7,))[1])


def test_cond_piecewise_matches_jax():
    refs = jpiece_ref(PIECE_XS)
    jit_grad, grad_jit = funcad.jit(funcad.grad(piece)), funcad.grad(funcad.jit(piece))
    for k, x in enumerate(PIECE_XS):
        v, g, gg, t = (r[k] for r in refs)
        close(piece(x), v)
        close(funcad.grad(piece)(x), g)
        close(jit_grad(x), g)
        close(grad_jit(x), g)
        close(funcad.grad(funcad.grad(piece))(x), gg)
        close(funcad.jvp(piece, (x,), (0.7,))[1], t)
        close(funcad.grad(piece)(x), central(piece, x), rtol=1e-7, atol=1e-8)


def test_cond_vmap_batched_predicate_selects_per_lane():
    xs = PIECE_XS
    v, g, _, _ = jpiece_ref(xs)
    close(funcad.vmap(piece)(xs), v)
    close(funcad.vmap(funcad.grad(piece))(xs), g)
    close(funcad.jit(funcad.vmap(funcad.grad(piece)))(xs), g)
    # unbatched predicate, batched operands
    f = lambda p, x: lax.cond(p, fnp.sin, fnp.cos, x)
    close(funcad.vmap(f, in_axes=(None, 0))(True, xs), np.sin(xs))
    close(funcad.vmap(funcad.grad(f, argnums=1), in_axes=(None, 0))(False, xs), -np.sin(xs))


def test_switch_three_branches_clamped_index():
    x, w = RNG.standard_normal(3), RNG.standard_normal(3)
    idx = np.array([-2, 0, 1, 2, 7])
    ref = jax.jit(jax.vmap(lambda i: (jtri(i, x, w), jax.grad(jtri, argnums=(1, 2))(i, x, w))))(idx)
    jitted = funcad.jit(tri)
    for k, i in enumerate(idx):
        close(tri(i, x, w), ref[0][k])
        gx, gw = funcad.grad(tri, argnums=(1, 2))(i, x, w)
        close(gx, ref[1][0][k]), close(gw, ref[1][1][k])
        close(jitted(i, x, w), ref[0][k])
    # batched index: a select over the three branches
    xb = RNG.standard_normal((5, 3))
    ref = jax.jit(jax.vmap(lambda i, x: (jtri(i, x, w), jax.grad(jtri, 1)(i, x, w))))(idx, xb)
    close(funcad.vmap(tri, (0, 0, None))(idx, xb, w), ref[0])
    close(funcad.vmap(funcad.grad(tri, 1), (0, 0, None))(idx, xb, w), ref[1])
    check_grads(lambda x, w: tri(1, x, w), (x, w), order=2)


def test_cond_pytrees_closures_and_weak_outputs():
    w = np.array([1.0, 2.0], np.float32)

    def f(p, a):
        out = lax.cond(p, lambda d: {"s": d["x"] * w, "k": 0.0}, lambda d: {"s": d["x"] + w, "k": d["y"]},
                       {"x": a, "y": np.float32(3.0)})
        return out["s"], out["k"]

    s, k = f(True, np.ones(2, np.float32))
    assert s.dtype == np.float32 and np.asarray(k).dtype == np.float32  # the Python 0.0 took f32
    close(s, [1.0, 2.0])
    s, k = f(False, np.ones(2, np.float32))
    close(s, [2.0, 3.0])
    close(k, 3.0)
    # closure over the variable being differentiated
    g = funcad.grad(lambda c: lax.cond(c > 0, lambda v: v * c * c, lambda v: v - c, 2.0))
    close(g(3.0), 12.0)
    close(g(-3.0), -1.0)

# ------------------------------------------------------------------ RNN (scan) ----


H, T = 3, 5
W0 = RNG.standard_normal((H, H)) * 0.5
U0 = RNG.standard_normal((H, 2))
XS = RNG.standard_normal((T, 2))
H0 = RNG.standard_normal(H)


def rnn(W, U, xs, h0, reverse=False, unroll=1):
    def step(h, x):
        h = fnp.tanh(W @ h + U @ x)
        return h, fnp.sum(h * h)
    h, ys = lax.scan(step, h0, xs, reverse=reverse, unroll=unroll)
    return fnp.sum(h) + fnp.sum(ys * fnp.arange(1.0, T + 1))


def jrnn(W, U, xs, h0, reverse=False, unroll=1):
    def step(h, x):
        h = jnp.tanh(W @ h + U @ x)
        return h, jnp.sum(h * h)
    h, ys = jax.lax.scan(step, h0, xs, reverse=reverse, unroll=unroll)
    return jnp.sum(h) + jnp.sum(ys * jnp.arange(1.0, T + 1))


ARGS = (W0, U0, XS, H0)


@pytest.mark.parametrize("reverse,unroll", [(False, 1), (True, 2)])
def test_rnn_scan_matches_jax(reverse, unroll):
    f = lambda *a: rnn(*a, reverse=reverse, unroll=unroll)
    jf = lambda *a: jrnn(*a, reverse=reverse, unroll=unroll)
    tW = RNG.standard_normal(W0.shape)
    zeros = tuple(0 * a for a in ARGS[1:])

    @jax.jit
    def ref(*args):
        return (jf(*args), jax.grad(jf, argnums=(0, 1, 2, 3))(*args),
                jax.jvp(jf, args, (tW,) + zeros)[1],
                jax.jvp(lambda W: jax.grad(jf)(W, *args[1:]), (args[0],), (tW,))[1])

    want, jg, jt, jhvp = ref(*ARGS)
    close(f(*ARGS), want)
    close(funcad.jit(f)(*ARGS), want)
    for g in [funcad.grad(f, argnums=(0, 1, 2, 3))(*ARGS),
              funcad.jit(funcad.grad(f, argnums=(0, 1, 2, 3)))(*ARGS),
              funcad.grad(funcad.jit(f), argnums=(0, 1, 2, 3))(*ARGS)]:
        for a, b in zip(g, jg):
            close(a, b)
    close(funcad.jvp(f, ARGS, (tW,) + zeros)[1], jt)
    # Hessian-vector product: forward over reverse
    close(funcad.jvp(lambda W: funcad.grad(f)(W, *ARGS[1:]), (W0,), (tW,))[1], jhvp)


def test_rnn_scan_finite_differences_and_second_order():
    check_grads(lambda W, h0: rnn(W, U0, XS, h0), (W0, H0), order=2)
    close(funcad.grad(rnn)(*ARGS), central(lambda W: rnn(W, *ARGS[1:]), W0), rtol=1e-6, atol=1e-8)
    # reverse over reverse
    gg = funcad.grad(lambda h0: fnp.sum(funcad.grad(rnn, argnums=3)(W0, U0, XS, h0) ** 2))(H0)
    jgg = jax.jit(jax.grad(lambda h0: jnp.sum(jax.grad(jrnn, argnums=3)(W0, U0, XS, h0) ** 2)))(H0)
    close(gg, jgg)


def test_rnn_scan_vmap():
    xb = RNG.standard_normal((4, T, 2))
    f = lambda xs: rnn(W0, U0, xs, H0)
    jf = lambda xs: jrnn(W0, U0, xs, H0)
    v, g = jax.jit(jax.vmap(lambda xs: (jf(xs), jax.grad(jf)(xs))))(xb)
    close(funcad.vmap(f)(xb), v)
    close(funcad.vmap(funcad.grad(f))(xb), g)
    Wb = np.stack([W0, 2 * W0])
    close(funcad.jit(funcad.vmap(funcad.grad(rnn), (0, None, None, None)))(Wb, U0, XS, H0),
          jax.jit(jax.vmap(jax.grad(jrnn), (0, None, None, None)))(Wb, U0, XS, H0))
    # batched along a non-leading axis of xs: ys stacked correctly
    ys = funcad.vmap(lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)[1], in_axes=1)(xb[..., 0].T)
    want = np.stack([np.concatenate([[0.0], np.cumsum(r)[:-1]]) * r for r in xb[..., 0]])
    close(ys, want)


def test_scan_pytrees_map_and_edge_cases():
    def f(c, x):
        a, b = c
        return (a + x["u"], b * x["v"]), {"s": a * b, "t": (x["u"],)}
    xs = {"u": np.arange(4.0), "v": np.linspace(1, 2, 4)}
    (a, b), ys = lax.scan(f, (0.0, 1.0), xs)
    (ja, jb), jys = jax.jit(lambda xs: jax.lax.scan(f, (0.0, 1.0), xs))(xs)
    close(a, ja), close(b, jb), close(ys["s"], jys["s"]), close(ys["t"][0], jys["t"][0])
    # length-0 scan, no xs
    c, ys = lax.scan(lambda c, _: (c * 2.0, c), 3.0, None, length=0)
    assert float(c) == 3.0 and np.shape(ys) == (0,)
    c, ys = funcad.jit(lambda c: lax.scan(lambda c, _: (c * 2.0, c), c, None, length=0))(3.0)
    assert float(c) == 3.0 and np.shape(ys) == (0,)
    m = lax.map(lambda r: fnp.sum(fnp.sin(r)), RNG.standard_normal((3, 4)))
    assert m.shape == (3,)
    close(funcad.grad(lambda x: fnp.sum(lax.map(lambda r: fnp.sum(fnp.sin(r) ** 2), x)))(np.ones((2, 3))),
          np.sin(2.0) * np.ones((2, 3)))

# ------------------------------------------------------- Newton (while_loop) ----


def newton_step(s):
    x, a = s
    return x - (x * x * x - a) / (3 * x * x), a


def cube_root(a, max_steps=None):
    x, _ = lax.while_loop(lambda s: fnp.abs(s[0] ** 3 - s[1]) > 1e-12, newton_step, (1.0 + 0 * a, a),
                          max_steps=max_steps)
    return x


def jcube_root(a):
    x, _ = jax.lax.while_loop(lambda s: jnp.abs(s[0] ** 3 - s[1]) > 1e-12, newton_step, (1.0 + 0 * a, a))
    return x


def test_newton_while_values_jvp_vmap_jit():
    a = np.array([0.5, 2.0, 27.0, 1000.0])  # lanes need different numbers of steps
    v, t = jax.jit(jax.vmap(lambda a: jax.jvp(jcube_root, (a,), (1.0,))))(a)
    close(v, np.cbrt(a))
    for k in range(2):
        close(cube_root(a[k]), v[k])
        close(funcad.jit(cube_root)(a[k]), v[k])
        close(funcad.jvp(cube_root, (a[k],), (1.0,))[1], t[k])
        close(funcad.jacfwd(cube_root)(a[k]), (1 / 3) * a[k] ** (-2 / 3), rtol=1e-8)
    # done lanes keep their value while the others go on
    close(funcad.vmap(cube_root)(a), v)
    close(funcad.jit(funcad.vmap(cube_root))(a), v)
    close(funcad.vmap(funcad.jacfwd(cube_root))(a), t)


def test_grad_through_while_loop_beyond_jax():
    """JAX raises for reverse mode through while_loop; funcad counts the steps (eager)
    or uses max_steps (jit), and differentiates a scan."""
    for a in [2.0, 27.0]:
        want = (1 / 3) * a ** (-2 / 3)
        close(funcad.grad(cube_root)(a), want, rtol=1e-8)
        close(funcad.jit(funcad.grad(lambda a: cube_root(a, max_steps=60)))(a), want, rtol=1e-8)
        close(funcad.grad(funcad.jit(lambda a: cube_root(a, max_steps=60)))(a), want, rtol=1e-8)
        close(funcad.grad(funcad.grad(cube_root))(a), -(2 / 9) * a ** (-5 / 3), rtol=1e-6)
    a = np.array([0.5, 2.0, 27.0])
    close(funcad.vmap(funcad.grad(lambda a: cube_root(a, max_steps=60)))(a), (1 / 3) * a ** (-2 / 3), rtol=1e-8)
    close(funcad.jit(funcad.vmap(funcad.grad(lambda a: cube_root(a, max_steps=60))))(a),
          (1 / 3) * a ** (-2 / 3), rtol=1e-8)
    with pytest.raises(Exception):
        jax.grad(jcube_root)(2.0)
    # the example: a counter and a value in the carry
    body = lambda s: (s[0] + 1, fnp.sin(s[1]) * 1.5)
    f = lambda x: lax.while_loop(lambda s: s[0] < 4, body, (0, x))[1]
    jf = lambda x: jax.lax.fori_loop(0, 4, lambda i, v: jnp.sin(v) * 1.5, x)
    g, h = jax.jit(jax.vmap(lambda x: (jax.grad(jf)(x), jax.hessian(jf)(x))))(np.array([0.3, 0.6]))
    close(funcad.grad(f)(0.3), g[0])
    close(funcad.hessian(f)(0.3), h[0])
    close(funcad.vmap(funcad.grad(f))(np.array([0.3, 0.6])), g)
    check_grads(f, (0.3,), order=2)


def test_while_max_steps_bounds_the_loop():
    f = lambda x: lax.while_loop(lambda s: s < 100.0, lambda s: s * 2.0, x, max_steps=3)
    close(f(1.0), 8.0)
    close(funcad.jit(f)(1.0), 8.0)
    close(funcad.grad(f)(1.0), 8.0)
    close(funcad.jit(funcad.grad(f))(1.0), 8.0)
    close(funcad.jit(funcad.grad(f))(30.0), 4.0)  # stops at 120 after 2 steps: the mask freezes it
    with pytest.raises(funcad.FuncadTypeError, match="max_steps"):
        funcad.jit(funcad.grad(lambda x: lax.while_loop(lambda s: s < 100.0, lambda s: s * 2.0, x)))(1.0)

# ---------------------------------------------------------- ODE (fori_loop) ----


def make_ode(np_, fori_loop):
    """RK4 for a damped oscillator y'' = -k y - c y', written for funcad or for JAX."""
    def ode(params, y0, n=20, dt=0.05):
        k, c = params[0], params[1]

        def f(y):
            return np_.stack([y[1], -k * y[0] - c * y[1]])

        def step(i, y):
            k1 = f(y)
            k2 = f(y + dt / 2 * k1)
            k3 = f(y + dt / 2 * k2)
            k4 = f(y + dt * k3)
            return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return fori_loop(0, n, step, y0)
    return ode


ode = make_ode(fnp, lax.fori_loop)
jode = make_ode(jnp, jax.lax.fori_loop)


P0, Y0 = np.array([2.0, 0.3]), np.array([1.0, 0.0])


def test_ode_fori_loop_matches_jax():
    loss = lambda p, y0: fnp.sum(ode(p, y0) ** 2)
    jloss = lambda p, y0: jnp.sum(jode(p, y0) ** 2)
    pb = np.stack([P0, P0 * 1.5])

    y, g, h = jax.jit(lambda p, y0: (jode(p, y0), jax.grad(jloss)(p, y0), jax.hessian(jloss)(p, y0)))(P0, Y0)
    close(ode(P0, Y0), y)
    close(funcad.jit(ode, static_argnums=2)(P0, Y0, 20), y)
    close(funcad.grad(loss)(P0, Y0), g)
    close(funcad.jit(funcad.grad(loss))(P0, Y0), g)
    close(funcad.hessian(loss)(P0, Y0), h)
    jr = funcad.jacfwd(ode)(P0, Y0)
    close(funcad.jacrev(ode)(P0, Y0), jr)
    close(funcad.vmap(funcad.grad(loss), (0, None))(pb, Y0), [g, funcad.grad(loss)(pb[1], Y0)])
    check_grads(loss, (P0, Y0), order=2, modes=("rev",))
    # a traced trip count makes a while loop (forward mode still works)
    g = funcad.jit(lambda n, p: ode(p, Y0, n))
    close(g(20, P0), y)
    close(funcad.jacfwd(lambda p: g(20, p))(P0), jr)


def test_fori_loop_with_grad_in_body():
    g = lambda x: fnp.sum((x - 2.0) ** 2 * fnp.arange(1.0, 4.0))
    gd = lambda x0: lax.fori_loop(0, 50, lambda i, x: x - 0.1 * funcad.grad(g)(x), x0)
    close(gd(np.zeros(3)), 2.0 - 2.0 * (1 - 0.2 * np.arange(1.0, 4.0)) ** 50, rtol=1e-12)
    close(funcad.jit(gd)(np.zeros(3)), gd(np.zeros(3)))
    # d x_final / d x0 = (1 - 0.2 k)^50 per coordinate
    close(funcad.jacrev(gd)(np.zeros(3)), np.diag((1 - 0.2 * np.arange(1.0, 4.0)) ** 50), atol=1e-12)


def test_nested_loops_and_checkpoint_inside_scan():
    def f(w, xs):
        def outer(c, x):
            inner = lax.fori_loop(0, 3, lambda i, v: fnp.sin(v * w + x), c)
            return lax.cond(inner > 0, lambda v: v * 2.0, lambda v: v - 1.0, inner), inner
        c, ys = lax.scan(outer, 0.1, xs)
        return c + fnp.sum(ys)

    def jf(w, xs):
        def outer(c, x):
            inner = jax.lax.fori_loop(0, 3, lambda i, v: jnp.sin(v * w + x), c)
            return jax.lax.cond(inner > 0, lambda v: v * 2.0, lambda v: v - 1.0, inner), inner
        c, ys = jax.lax.scan(outer, 0.1, xs)
        return c + jnp.sum(ys)

    xs = RNG.standard_normal(4) * 0.5
    ws = np.array([0.7, -0.4])
    v, gw, gx = jax.jit(jax.vmap(lambda w: (jf(w, xs), *jax.grad(jf, argnums=(0, 1))(w, xs))))(ws)
    close(f(0.7, xs), v[0])
    close(funcad.grad(f)(0.7, xs), gw[0])
    close(funcad.jit(funcad.grad(f, argnums=(0, 1)))(0.7, xs)[1], gx[0])
    close(funcad.vmap(funcad.grad(f), (0, None))(ws, xs), gw)

# ---------------------------------------------------------------- checkpoint ----


def deep_rnn(W, xs, ck):
    def step(h, x):
        for _ in range(3):
            h = fnp.tanh(W @ h + x)
        return h, None
    h, _ = lax.scan(funcad.checkpoint(step) if ck else step, fnp.ones(W.shape[0]), xs)
    return fnp.sum(h)


def residual_bytes(f, *args):
    _, f_jvp = funcad.linearize(f, *args)
    return sum(np.asarray(c).nbytes for c in f_jvp.jaxpr.consts)


def test_checkpoint_same_derivatives_less_memory():
    W, xs = RNG.standard_normal((4, 4)) * 0.4, RNG.standard_normal((30, 4))
    g0 = funcad.grad(deep_rnn)(W, xs, False)
    g1 = funcad.grad(deep_rnn)(W, xs, True)
    close(g0, g1)
    close(funcad.jit(funcad.grad(deep_rnn), static_argnums=2)(W, xs, True), g0)
    gg = [funcad.grad(lambda W: fnp.sum(funcad.grad(deep_rnn)(W, xs[:3], ck) ** 2))(W) for ck in (True, False)]
    close(gg[0], gg[1])
    hv = funcad.jvp(lambda W: funcad.grad(deep_rnn)(W, xs[:5], True), (W,), (W,))[1]
    hv0 = funcad.jvp(lambda W: funcad.grad(deep_rnn)(W, xs[:5], False), (W,), (W,))[1]
    close(hv, hv0)
    close(funcad.vmap(funcad.grad(deep_rnn), (0, None, None))(np.stack([W, W]), xs, True), np.stack([g0, g0]))
    full, ck = residual_bytes(deep_rnn, W, xs, False), residual_bytes(deep_rnn, W, xs, True)
    # without: 3 layers × (h, 1 - tanh²) per step; with: the carry per step (+ xs, W)
    assert ck * 2 < full, (ck, full)
    f = funcad.checkpoint(lambda x, y: (fnp.sin(x) * y, {"c": fnp.cos(x)}))
    close(funcad.grad(lambda x: f(x, 2.0)[0] + f(x, 2.0)[1]["c"])(0.4), 2 * np.cos(0.4) - np.sin(0.4))
    assert funcad.remat is funcad.checkpoint

# ------------------------------------------------------- printing and lowering ----


def test_jaxprs_print_typecheck_and_lower():
    j = funcad.make_jaxpr(piece)(1.0)
    text = str(j)
    assert "cond[" in text and "branches=(" in text and "sin" in text and "exp" in text
    typecheck(j.jaxpr)
    js = funcad.make_jaxpr(lambda W: rnn(W, U0, XS, H0))(W0)
    assert "scan[" in str(js) and "jaxpr={ lambda" in str(js) and "length=5" in str(js)
    typecheck(funcad.make_jaxpr(funcad.grad(lambda W: rnn(W, U0, XS, H0)))(W0).jaxpr)
    typecheck(funcad.make_jaxpr(funcad.vmap(cube_root))(np.ones(2)).jaxpr)
    _, lin = funcad.linearize(lambda W: rnn(W, U0, XS, H0), W0)
    typecheck(lin.jaxpr.jaxpr)
    hlo = funcad.jit(lambda a: cube_root(a) + piece(a)).lower(2.0).as_text()
    assert "stablehlo.while" in hlo and "stablehlo.case" in hlo


# ---------------------------------------------------------------------- errors ----


def test_errors_explain():
    with pytest.raises(funcad.FuncadTypeError, match=r"false_fun returns \(f64\[2\]\) but true_fun returns \(f64\[\]\)"):
        lax.cond(True, lambda x: x, lambda x: fnp.stack([x, x]), 1.0)
    with pytest.raises(funcad.FuncadTypeError, match="branches\\[1\\] returns a value of structure"):
        lax.switch(0, [lambda x: x, lambda x: (x, x)], 1.0)
    with pytest.raises(funcad.FuncadTypeError, match=r"i64\[\] vs f64\[\]|f64\[\] vs i64\[\]"):
        lax.scan(lambda c, x: (c + x, None), np.array(0), np.ones(3))  # a Python 0 is weak: JAX takes it
    with pytest.raises(funcad.FuncadTypeError, match="boolean scalar"):
        lax.while_loop(lambda s: s, lambda s: s + 1.0, 1.0)
    with pytest.raises(funcad.FuncadTypeError, match="must be a scalar"):
        lax.cond(np.array([True, False]), lambda x: x, lambda x: x, 1.0)
    with pytest.raises(funcad.FuncadTypeError, match="pair"):
        lax.scan(lambda c, x: c, 0.0, np.ones(3))


def test_checkpoint_backward_pass_reads_inputs_through_a_barrier():
    f = funcad.checkpoint(lambda x: fnp.sin(fnp.sin(x)) * x)
    loss = lambda x: f(x).sum()  # noqa: E731
    x = np.linspace(0.0, 1.0, 4)
    jaxpr = funcad.make_jaxpr(funcad.grad(loss))(x)
    assert "optimization_barrier" in [e.prim.name for e in jaxpr.eqns]
    assert "stablehlo.optimization_barrier" in funcad.jit(funcad.grad(loss)).lower(x).as_text()
    np.testing.assert_allclose(funcad.jit(funcad.grad(loss))(x), funcad.grad(loss)(x), rtol=1e-12)
    ns = {}
    exec(funcad.to_python(jaxpr), ns)
    np.testing.assert_allclose(ns["f"](*jaxpr.consts, x), funcad.grad(loss)(x), rtol=1e-12)
    g = funcad.checkpoint(lambda x: fnp.sin(fnp.sin(x)) * x, prevent_cse=False)
    names = [e.prim.name for e in funcad.make_jaxpr(funcad.grad(lambda x: g(x).sum()))(x).eqns]
    assert "optimization_barrier" not in names


def test_cond_takes_the_old_per_branch_operand_form_as_jax():
    # cond(pred, true_operand, true_fun, false_operand, false_fun), as numpyro calls it
    import jax
    for pred in (True, False):
        args = (pred, 1.5, lambda x: x + 1.0, 2.0, lambda x: x * 10.0)
        assert float(funcad.lax.cond(*args)) == float(jax.lax.cond(*args))
        g = funcad.grad(lambda v: funcad.lax.cond(pred, v, lambda x: x * x, v, lambda x: 3.0 * x))(2.0)
        assert float(g) == (4.0 if pred else 3.0)
    with pytest.raises(TypeError, match="should be callable"):
        funcad.lax.cond(True, 1.0, 2.0)


# ------------------------------------------------------- eager = compiled ----
# Called eagerly, a cond, while or scan runs as one XLA program, as JAX's: on NumPy op by
# op, exp, log1p and sums round differently from XLA's and a loop's result drifts.

def _x32_loops(lx, xnp):
    xs = np.linspace(0.1, 2.0, 50).astype(np.float32)
    c, ys = lx.scan(lambda c, x: (c + xnp.exp(x) * xnp.log1p(c) / 7.0, xnp.sum(xnp.sin(c * xs))),
                    np.float32(0.3), xs)
    w = lx.while_loop(lambda s: s[0] < 40, lambda s: (s[0] + 1, xnp.tanh(s[1]) * 1.7 + xnp.exp(-s[1])),
                      (0, np.float32(0.2)))
    k = lx.cond(np.float32(c) > 0, lambda v: xnp.log(v) * xnp.exp(v / 3.0), lambda v: v, xs)
    return c, ys, w, k


@pytest.mark.skipif(not hasattr(jax, "enable_x64"), reason="jax.enable_x64 is new in later JAX")
def test_eager_control_flow_gives_jaxs_float32_bits():
    with jax.enable_x64(False), funcad.enable_x64(False):
        got = _x32_loops(lax, fnp)
        want = _x32_loops(jax.lax, jnp)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_eager_scan_over_a_primitive_without_lowering_runs_on_the_interpreter():
    from funcad.primitives._base import new_primitive
    halve_p = new_primitive("halve_host_only", lambda x: np.asarray(x) / 2, lambda x: x)
    c, ys = lax.scan(lambda c, x: (halve_p.bind(c) + x, c), 8.0, np.arange(3.0))
    close(c, 3.5)
    close(ys, [8.0, 4.0, 3.0])
    with pytest.raises(Exception, match="halve_host_only"):
        funcad.jit(lambda c: lax.scan(lambda c, x: (halve_p.bind(c) + x, c), c, np.arange(3.0)))(8.0)


def test_eager_scan_with_debug_print_runs_on_the_interpreter(capsys):
    # jit prints only outside control flow, so such a body is not compiled eagerly
    def body(c, x):
        funcad.debug.print("c={c}", c=c)
        return c + x, c
    c, ys = lax.scan(body, 0.0, np.arange(3.0))
    close(c, 3.0)
    assert capsys.readouterr().out.split() == ["c=0.0", "c=0.0", "c=1.0"]
