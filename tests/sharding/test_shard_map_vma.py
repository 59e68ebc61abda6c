"""Device-varying types (vma) inside shard_map bodies, against JAX's shard_map.

A `grad` taken inside a shard_map body, of a replicated (invariant) input
that meets a device-varying value, is summed over the devices in JAX's
default `check_vma=True` (the implicit pvary transposes into a psum) and
per-device with `check_vma=False`. These tests compare both with JAX and
with NumPy on several meshes. Like tests/sharding/test_shard_map.py, they run in a
child process with 8 simulated CPU devices.
"""
from __future__ import annotations


import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.errors import FuncadValueError
from funcad.sharding import PartitionSpec as P

from tests.multidevice import on_eight_devices, on_one_device, run_in_child  # noqa: E402
N = 8
lax = funcad.lax


@on_one_device
def test_shard_map_vma_suite():
    run_in_child(__file__)


import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)
JP = jax.sharding.PartitionSpec
# JAX's shard_map with varying-axes types (jax.shard_map, JAX >= 0.7); older JAX
# (jax.experimental.shard_map's check_rep) keeps the per-device gradient, so there
# the NumPy references alone decide.
NEW_JAX = hasattr(jax, "shard_map")

MESHES = {(8,): ("x",), (4, 2): ("x", "y"), (2, 2, 2): ("x", "y", "z")}


def _meshes(shape):
    names = MESHES[shape]
    jm = jax.sharding.Mesh(np.array(jax.devices()).reshape(shape), names)
    return funcad.make_mesh(shape, names), jm


def _both(shape, body, in_specs, out_specs, args, check_vma):
    """funcad's and JAX's shard_map of `body(lib, *locals)` (lib: funcad or jax)."""
    m, jm = _meshes(shape)

    class F:
        numpy, lax, grad, value_and_grad, jit, vmap = (fnp, funcad.lax, funcad.grad,
                                                       funcad.value_and_grad, funcad.jit,
                                                       funcad.vmap)

    class J:
        numpy, lax, grad, value_and_grad, jit, vmap = (jnp, jax.lax, jax.grad, jax.value_and_grad,
                                                       jax.jit, jax.vmap)

    got = funcad.shard_map(lambda *a: body(F, *a), mesh=m, in_specs=in_specs,
                           out_specs=out_specs, check_vma=check_vma)(*args)
    if not NEW_JAX:
        return got, None
    conv = lambda s: JP(*s) if isinstance(s, P) else tuple(conv(t) for t in s)  # noqa: E731
    ref = jax.shard_map(lambda *a: body(J, *a), mesh=jm, in_specs=conv(in_specs),
                        out_specs=conv(out_specs), check_vma=check_vma)(*args)
    return got, ref


def _close(got, ref, expect=None, rtol=1e-12):
    got = jax.tree.map(np.asarray, got)
    if ref is not None:
        jax.tree.map(lambda g, r: np.testing.assert_allclose(g, np.asarray(r), rtol=rtol), got, ref)
    if expect is not None:
        jax.tree.map(lambda g, e: np.testing.assert_allclose(g, e, rtol=rtol), got, expect)


def _all(shape):
    names = MESHES[shape]
    return names if len(names) > 1 else names[0]


def _local_grads(w, x, n):
    """d/dw sum(tanh(x_d @ w)**2) for each of the n blocks x_d of x."""
    out = []
    for xd in np.split(x, n):
        t = np.tanh(xd @ w)
        out.append(xd.T @ (2 * t * (1 - t ** 2)))
    return np.stack(out)


@on_eight_devices
@pytest.mark.parametrize("shape", sorted(MESHES))
@pytest.mark.parametrize("check_vma", [True, False])
def test_grad_inside_body_of_a_replicated_input(shape, check_vma):
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal(5), rng.standard_normal((16, 5))
    ax = _all(shape)

    def body(lib, w, x):
        return lib.grad(lambda w: lib.numpy.sum(lib.numpy.tanh(x @ w) ** 2))(w)

    got, ref = _both(shape, body, (P(), P(ax)), P(ax), (w, x), check_vma)
    local = _local_grads(w, x, N)
    # check_vma=True: the cotangent of the replicated w is summed over all devices
    expect = np.tile(local.sum(0), N) if check_vma else local.reshape(-1)
    _close(got, ref, expect)


@on_eight_devices
@pytest.mark.parametrize("check_vma", [True, False])
def test_partly_varying_input_sums_over_the_missing_axes(check_vma):
    # w varies over "x" only, the data over ("x", "y"): w's cotangent is summed over "y"
    rng = np.random.default_rng(1)
    w, x = rng.standard_normal((4, 3)), rng.standard_normal((8, 3))

    def body(lib, w, x):
        return lib.grad(lambda w: lib.numpy.sum(lib.numpy.sin(w * x)))(w)

    got, ref = _both((4, 2), body, (P("x"), P(("x", "y"))), P(("x", "y")), (w, x), check_vma)
    local = np.stack([np.cos(w[d // 2] * x[d]) * x[d] for d in range(N)])  # (8, 3), device d
    if check_vma:
        local = np.repeat(local.reshape(4, 2, 3).sum(1), 2, axis=0)
    _close(got, ref, local)


@on_eight_devices
@pytest.mark.parametrize("shape", [(8,), (2, 2, 2)])
def test_value_and_grad_through_psum_inside_body(shape):
    rng = np.random.default_rng(2)
    w, x = rng.standard_normal(4), rng.standard_normal((8, 4))
    ax = _all(shape)

    def body(lib, w, x):
        v, g = lib.value_and_grad(lambda w: lib.lax.psum(lib.numpy.sum(lib.numpy.cos(x * w)),
                                                         ax))(w)
        return v, g

    got, ref = _both(shape, body, (P(), P(ax)), (P(), P()), (w, x), True)
    # the psum makes the loss invariant: its cotangent pvary's back, and w's is summed
    expect = (np.cos(x * w).sum(), (-np.sin(x * w) * x).sum(0))
    _close(got, ref, expect)


@on_eight_devices
@pytest.mark.parametrize("check_vma", [True, False])
def test_second_order_jit_and_vmap_inside_body(check_vma):
    rng = np.random.default_rng(3)
    w, x = rng.standard_normal(3), rng.standard_normal((8, 3))

    def body(lib, w, x):
        f = lambda w: lib.numpy.sum(lib.numpy.sin(w * x) * w)  # noqa: E731
        g2 = lib.grad(lambda w: lib.numpy.sum(lib.grad(f)(w) ** 2))(w)       # second order
        gj = lib.grad(lib.jit(f))(w)                                          # through jit
        per = lib.vmap(lib.grad(lambda w, s: f(w) * s), in_axes=(None, 0))(w, x[0])  # per entry
        return g2, gj, per

    got, ref = _both((8,), body, (P(), P("x")), (P("x"), P("x"), P("x")), (w, x), check_vma)
    _close(got, ref)
    # NumPy: f_d(w) = sum(sin(w x_d) w); grad f_d = cos(w x_d) x_d w + sin(w x_d)
    gf = np.cos(w * x) * x * w + np.sin(w * x)                               # (8, 3)
    hd = -np.sin(w * x) * x * x * w + 2 * np.cos(w * x) * x                  # diagonal Hessian
    if check_vma:
        # the inner grad is summed over the devices (invariant), so the outer one is
        # the sum over devices of d/dw (sum_d gf)**2
        g2 = np.tile(2 * gf.sum(0) * hd.sum(0), N)
        gj = np.tile(gf.sum(0), N)
        per = np.tile(np.einsum("ds,dk->sk", x, gf), (N, 1))
    else:
        g2 = (2 * gf * hd).reshape(-1)
        gj = gf.reshape(-1)
        per = np.concatenate([np.outer(x[d], gf[d]) for d in range(N)])
    _close(got, None, (g2, gj, per), rtol=1e-10)


@on_eight_devices
def test_data_parallel_step_with_grad_inside_body_matches_jax():
    # A JAX user's data-parallel step: the grad taken inside the body is already the
    # sum over the devices (check_vma=True), so the mean needs only a division.
    rng = np.random.default_rng(4)
    f32 = np.float32
    params = {"w": rng.standard_normal((6, 4)).astype(f32), "b": np.zeros(4, f32)}
    x = rng.standard_normal((32, 6)).astype(f32)
    y = rng.standard_normal((32, 4)).astype(f32)

    def body(lib, p, x, y):
        loss = lambda p: lib.numpy.sum((lib.numpy.tanh(x @ p["w"] + p["b"]) - y) ** 2)  # noqa: E731
        v, g = lib.value_and_grad(loss)(p)
        g = jax.tree.map(lambda a: a / 32, g)
        return lib.lax.psum(v, "x") / 32, jax.tree.map(lambda a, b: a - 0.5 * b, p, g)

    got, ref = _both((8,), body, (P(), P("x"), P("x")), (P(), P()), (params, x, y), True)
    _close(got, ref, rtol=2e-6)
    v1, g1 = funcad.value_and_grad(
        lambda p: fnp.mean(fnp.sum((fnp.tanh(x @ p["w"] + p["b"]) - y) ** 2, 1)))(params)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(v1), rtol=2e-6)
    for k in params:
        np.testing.assert_allclose(np.asarray(got[1][k]), params[k] - 0.5 * np.asarray(g1[k]),
                                   rtol=2e-5, atol=1e-6)


@on_eight_devices
def test_the_body_holds_pvary_and_its_transpose_psum():
    m, _ = _meshes((4, 2))
    f = funcad.shard_map(lambda w, x: funcad.grad(lambda w: fnp.sum(w * x))(w), mesh=m,
                         in_specs=(P(), P("x", "y")), out_specs=P())
    text = str(funcad.make_jaxpr(f)(np.ones(2), np.ones((4, 4))))
    assert "pvary[axes=('x', 'y')]" in text and "psum_invariant[axes=('x', 'y')]" in text
    # the gradient is invariant, so out_specs=P() is accepted; with check_vma=False it is not
    # summed (each device keeps its own)
    np.testing.assert_allclose(np.asarray(f(np.ones(2), np.arange(16.0).reshape(4, 4))),
                               [56.0, 64.0])
    g = funcad.shard_map(lambda w, x: funcad.grad(lambda w: fnp.sum(w * x))(w), mesh=m,
                         in_specs=(P(), P("x", "y")), out_specs=P(("x", "y")), check_vma=False)
    np.testing.assert_allclose(np.asarray(g(np.ones(2), np.arange(16.0).reshape(4, 4))),
                               np.arange(16.0))
    # a varying value still cannot leave through a replicated spec
    with pytest.raises(FuncadValueError, match="varies over the mesh axes"):
        funcad.shard_map(lambda w, x: w * x, mesh=m, in_specs=(P(), P("x", "y")),
                         out_specs=P())(np.ones(2), np.ones((4, 4)))
