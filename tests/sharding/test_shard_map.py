"""shard_map, the collectives, vmap(axis_name=) and pmap, against JAX.

Like tests/sharding/test_sharding.py, the tests that need several devices run in a
child process started with 8 simulated CPU devices (`test_shard_map_suite`);
the one-device tests (vmap with axis names, errors, docstrings) run here.
"""
from __future__ import annotations


import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.sharding import PartitionSpec as P

from tests.multidevice import CHILD, on_eight_devices, on_one_device, run_in_child  # noqa: E402
N = 8
lax = funcad.lax


@on_one_device
def test_shard_map_suite():
    run_in_child(__file__)


import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)


def jax_shard_map(f, *, mesh, in_specs, out_specs, check_vma=True):
    """JAX's shard_map, also on the oldest JAX of the range (jax.experimental, check_rep)."""
    if hasattr(jax, "shard_map"):
        return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                             check_vma=check_vma)
    from jax.experimental.shard_map import shard_map as old
    return old(f, mesh, in_specs, out_specs, check_rep=check_vma)


# ---------------------------------------- vmap with axis_name (one device) ----

VMAP_CASES = {
    "psum": (lambda a: lax.psum(a, "i"), lambda a: jax.lax.psum(a, "i")),
    "pmean": (lambda a: lax.pmean(a, "i"), lambda a: jax.lax.pmean(a, "i")),
    "pmax": (lambda a: lax.pmax(a, "i"), lambda a: jax.lax.pmax(a, "i")),
    "pmin": (lambda a: lax.pmin(a, "i"), lambda a: jax.lax.pmin(a, "i")),
    "axis_index": (lambda a: a * lax.axis_index("i"), lambda a: a * jax.lax.axis_index("i")),
    "all_gather": (lambda a: lax.all_gather(a, "i", axis=1),
                   lambda a: jax.lax.all_gather(a, "i", axis=1)),
    "all_gather_tiled": (lambda a: lax.all_gather(a, "i", axis=1, tiled=True),
                         lambda a: jax.lax.all_gather(a, "i", axis=1, tiled=True)),
    "psum_scatter": (lambda a: lax.psum_scatter(fnp.concatenate([a, a], 1)[:, :4], "i",
                                                scatter_dimension=1),
                     lambda a: jax.lax.psum_scatter(jnp.concatenate([a, a], 1)[:, :4], "i",
                                                    scatter_dimension=1)),
    "pshuffle": (lambda a: lax.pshuffle(a, "i", [3, 2, 0, 1]),
                 lambda a: jax.lax.pshuffle(a, "i", [3, 2, 0, 1])),
    "all_to_all": (lambda a: lax.all_to_all(fnp.concatenate([a, a], 0)[:4], "i", 0, 1),
                   lambda a: jax.lax.all_to_all(jnp.concatenate([a, a], 0)[:4], "i", 0, 1)),
    "all_to_all_tiled": (lambda a: lax.all_to_all(fnp.concatenate([a, a], 0)[:4], "i", 0, 1,
                                                  tiled=True),
                         lambda a: jax.lax.all_to_all(jnp.concatenate([a, a], 0)[:4], "i", 0, 1,
                                                      tiled=True)),
    "pswapaxes": (lambda a: lax.pswapaxes(fnp.concatenate([a, a], 0)[:4], "i", 0),
                  lambda a: jax.lax.pswapaxes(jnp.concatenate([a, a], 0)[:4], "i", 0)),
}


@on_one_device
@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_axis_name_matches_jax_and_jit(name):
    f, jf = VMAP_CASES[name]
    x = np.arange(24.0).reshape(4, 3, 2) - 7.0
    ref = np.asarray(jax.vmap(jf, axis_name="i")(x))
    out = funcad.vmap(f, axis_name="i")(x)
    assert np.shape(out) == ref.shape
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    # jit inside and outside: the batched body keeps the axis name
    out2 = funcad.jit(funcad.vmap(funcad.jit(f), axis_name="i"))(x)
    np.testing.assert_allclose(np.asarray(out2), ref, rtol=1e-12)


@on_one_device
def test_vmap_axis_name_against_a_loop_and_nested():
    x = np.random.default_rng(0).standard_normal((5, 3))
    f = lambda a: fnp.tanh(a) * lax.pmean(a, "i") - lax.ppermute(a, "i", [(k, (k + 1) % 5)
                                                                           for k in range(5)])
    loop = np.stack([np.tanh(x[k]) * x.mean(0) - x[(k - 1) % 5] for k in range(5)])
    np.testing.assert_allclose(funcad.vmap(f, axis_name="i")(x), loop, rtol=1e-12)
    # a partial permutation: devices that receive nothing get zeros
    out = funcad.vmap(lambda a: lax.ppermute(a, "i", [(0, 2)]), axis_name="i")(x)
    np.testing.assert_allclose(out, np.stack([0 * x[0], 0 * x[0], x[0], 0 * x[0], 0 * x[0]]))
    # two named axes: sums over either or both, and the linear index over both
    y = np.arange(12.0).reshape(3, 4)
    g = funcad.vmap(funcad.vmap(lambda a: (lax.psum(a, "i"), lax.psum(a, ("i", "j")),
                                           lax.axis_index(("i", "j"))), axis_name="j"),
                    axis_name="i")
    s_i, s_ij, idx = g(y)
    np.testing.assert_allclose(s_i, np.broadcast_to(y.sum(0), y.shape))
    np.testing.assert_allclose(s_ij, np.full(y.shape, y.sum()))
    np.testing.assert_array_equal(idx, np.arange(12).reshape(3, 4))
    assert funcad.vmap(lambda a: a * lax.axis_size("i"), axis_name="i")(np.ones(3)).tolist() == [3] * 3
    # a value that does not depend on the batch is summed as often as the axis is long
    np.testing.assert_allclose(funcad.vmap(lambda a: lax.psum(1.0, "i") + 0 * a,
                                           axis_name="i")(np.ones(3)), [3.0] * 3)


@on_one_device
def test_vmap_axis_name_derivatives_match_jax():
    x = np.linspace(-1.0, 1.0, 4)
    f = lambda a: fnp.sum(lax.pmean(fnp.sin(a), "i") * a) + lax.pmax(a, "i")
    jf = lambda a: jnp.sum(jax.lax.pmean(jnp.sin(a), "i") * a) + jax.lax.pmax(a, "i") * 0 + a.max() * 0
    got = funcad.vmap(funcad.grad(lambda a: fnp.sum(lax.pmean(fnp.sin(a), "i") * a)),
                      axis_name="i")(x)
    ref = jax.vmap(jax.grad(lambda a: jnp.sum(jax.lax.pmean(jnp.sin(a), "i") * a)),
                   axis_name="i")(x)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    del f, jf
    # psum's transpose is a psum under vmap (JAX's convention there)
    got = funcad.vmap(funcad.grad(lambda a: lax.psum(a, "i")), axis_name="i")(np.ones(3))
    np.testing.assert_allclose(got, [3.0] * 3)
    # grad of a vmapped collective: the sum over the batch, differentiated
    g = funcad.grad(lambda v: fnp.sum(funcad.vmap(lambda a: lax.all_gather(a, "i") * a,
                                                  axis_name="i")(v) ** 2))(x)
    gj = jax.grad(lambda v: jnp.sum(jax.vmap(lambda a: jax.lax.all_gather(a, "i") * a,
                                             axis_name="i")(v) ** 2))(x)
    np.testing.assert_allclose(g, gj, rtol=1e-12)


@on_one_device
def test_unbound_axis_names_are_name_errors():
    with pytest.raises(NameError, match="unbound axis name: 'i'"):
        lax.psum(np.ones(2), "i")
    with pytest.raises(NameError, match=r"bound here .* are \['j'\]"):
        funcad.vmap(lambda a: lax.all_gather(a, "i"), axis_name="j")(np.ones(2))
    with pytest.raises(NameError, match="axis_index"):
        funcad.jit(lambda a: a + lax.axis_index("i"))(np.ones(2))
    with pytest.raises(ValueError, match="at most once"):
        funcad.vmap(lambda a: lax.ppermute(a, "i", [(0, 1), (1, 1)]), axis_name="i")(np.ones(2))
    with pytest.raises(ValueError, match="to equal"):
        funcad.vmap(lambda a: lax.all_to_all(a, "i", 0, 0), axis_name="i")(np.ones((2, 3)))


@on_one_device
def test_shard_map_errors_on_one_device():
    mesh = funcad.make_mesh((1,), ("i",))
    x = np.ones((3, 2))
    with pytest.raises(ValueError, match="names the axis 'data', which the mesh"):
        funcad.shard_map(lambda a: a, mesh=mesh, in_specs=P("data"), out_specs=P("data"))(x)
    with pytest.raises(NameError, match="unbound axis name: 'data'"):
        funcad.shard_map(lambda a: lax.psum(a, "data"), mesh=mesh, in_specs=P("i"),
                         out_specs=P())(x)
    with pytest.raises(ValueError, match="mesh="):
        funcad.shard_map(lambda a: a, in_specs=P(), out_specs=P())(x)
    auto = funcad.make_mesh(mesh.axis_sizes, mesh.axis_names, (funcad.sharding.AxisType.Auto,) * mesh.devices.ndim,
                            devices=list(mesh.devices.flat))
    with pytest.raises(TypeError, match="in_specs"):  # inferred from types on Explicit axes only
        funcad.shard_map(lambda a: a, mesh=auto, out_specs=P())(x)
    with pytest.raises(ValueError, match="rank"):
        funcad.shard_map(lambda a: a, mesh=mesh, in_specs=P("i", None, None), out_specs=P())(x)
    with pytest.raises(ValueError, match="prefix"):
        funcad.shard_map(lambda a, b: a, mesh=mesh, in_specs=(P(), P(), P()), out_specs=P())(x, x)
    # one device: the program is the body, eagerly, under jit, grad and vmap
    f = funcad.shard_map(lambda a, w: lax.psum(fnp.sum(fnp.sin(a) * w), "i"), mesh=mesh,
                         in_specs=(P("i"), P()), out_specs=P())
    w = np.array([0.5, -1.0])
    np.testing.assert_allclose(f(x, w), np.sum(np.sin(x) * w))
    np.testing.assert_allclose(funcad.jit(funcad.grad(f, argnums=1))(x, w), np.sin(x).sum(0))
    np.testing.assert_allclose(funcad.vmap(f, in_axes=(None, 0))(x, np.stack([w, w])),
                               [np.sum(np.sin(x) * w)] * 2)


# ------------------------------------------------------ 8 devices (child) ----

if CHILD:
    from jax.sharding import PartitionSpec as JP

    MESHES = {(8,): ("x",), (4, 2): ("x", "y"), (2, 4): ("x", "y")}

    def _meshes(shape):
        names = MESHES[shape]
        jm = jax.sharding.Mesh(np.array(jax.devices()).reshape(shape), names)
        return funcad.make_mesh(shape, names), jm

    def _both(shape, f, jf, in_specs, out_specs, *args, check_vma=True):
        m, jm = _meshes(shape)
        got = funcad.shard_map(f, mesh=m, in_specs=in_specs, out_specs=out_specs,
                               check_vma=check_vma)(*args)
        conv = lambda s: JP(*s) if isinstance(s, P) else tuple(JP(*t) for t in s)  # noqa: E731
        ref = jax_shard_map(jf, mesh=jm, in_specs=conv(in_specs), out_specs=conv(out_specs),
                            check_vma=check_vma)(*args)
        return got, ref


# Per case: funcad body, JAX body, in_specs, out_specs, check_vma. "x" is always
# the first mesh axis; "y" (where the mesh has it) the second.
COLLECTIVES = {
    "psum": (lambda a: lax.psum(a, "x"), lambda a: jax.lax.psum(a, "x"), P("x"), P(), True),
    "psum_int": (lambda a: lax.psum(a.astype(np.int32), "x"),
                 lambda a: jax.lax.psum(a.astype(np.int32), "x"), P("x"), P(), True),
    "pmean": (lambda a: lax.pmean(a, "x"), lambda a: jax.lax.pmean(a, "x"), P("x"), P(), True),
    "pmax": (lambda a: lax.pmax(a, "x"), lambda a: jax.lax.pmax(a, "x"), P("x"), P(), True),
    "pmin": (lambda a: lax.pmin(-a, "x"), lambda a: jax.lax.pmin(-a, "x"), P("x"), P(), True),
    "axis_index": (lambda a: a * 0 + lax.axis_index("x"), lambda a: a * 0 + jax.lax.axis_index("x"),
                   P("x"), P("x"), True),
    "all_gather": (lambda a: lax.all_gather(a, "x", axis=1), lambda a: jax.lax.all_gather(a, "x", axis=1),
                   P("x"), P(), False),
    "all_gather_tiled": (lambda a: lax.all_gather(a, "x", tiled=True),
                         lambda a: jax.lax.all_gather(a, "x", tiled=True), P("x"), P("x"), True),
    "psum_scatter": (lambda a: lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True),
                     lambda a: jax.lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True),
                     P(), P(None, "x"), True),
    "ppermute": (lambda a: lax.ppermute(a, "x", [(0, 1), (1, 0)]),
                 lambda a: jax.lax.ppermute(a, "x", [(0, 1), (1, 0)]), P("x"), P("x"), True),
    "all_to_all": (lambda a: lax.all_to_all(a, "x", 1, 0, tiled=True),
                   lambda a: jax.lax.all_to_all(a, "x", 1, 0, tiled=True), P("x"), P("x"), True),
}


@on_eight_devices
@pytest.mark.parametrize("shape", list(MESHES) if CHILD else [(8,)], ids=str)
@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collective_in_shard_map_matches_jax(name, shape):
    f, jf, i, o, cv = COLLECTIVES[name]
    x = np.arange(16 * 8, dtype=np.float64).reshape(16, 8) - 40.0
    got, ref = _both(shape, f, jf, i, o, x, check_vma=cv)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-12)


@on_eight_devices
def test_collectives_over_two_axes_and_the_second_axis():
    x = np.arange(64.0).reshape(8, 8)
    for axes, o in ((("x", "y"), P()), ("y", P("x"))):
        got, ref = _both((4, 2), lambda a: lax.psum(a, axes), lambda a: jax.lax.psum(a, axes),
                         P("x", "y"), o, x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref))
    got, ref = _both((2, 4), lambda a: a * 0 + lax.axis_index(("y", "x")),
                     lambda a: a * 0 + jax.lax.axis_index(("y", "x")), P("x", "y"), P("x", "y"), x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
    got, ref = _both((2, 4), lambda a: lax.all_gather(a, "y", axis=1, tiled=True),
                     lambda a: jax.lax.all_gather(a, "y", axis=1, tiled=True), P("x", "y"), P("x"), x,
                     check_vma=False)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
    perm = [(0, 3), (3, 1), (1, 2), (2, 0)]
    got, ref = _both((2, 4), lambda a: lax.ppermute(a, "y", perm),
                     lambda a: jax.lax.ppermute(a, "y", perm), P("x", "y"), P("x", "y"), x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
    # the mapped axis names a subset: the others are replicated inside the body
    m, _ = _meshes((4, 2))
    f = funcad.shard_map(lambda a: lax.psum(a, "x"), mesh=m, in_specs=P("x"), out_specs=P(),
                         axis_names={"x"})
    np.testing.assert_allclose(np.asarray(f(x)), x.reshape(4, 2, 8).sum(0))


@on_eight_devices
@pytest.mark.parametrize("check_vma", [True, False])
def test_grad_through_psum_matches_jax(check_vma):
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal(6), rng.standard_normal((16, 6))
    m, jm = _meshes((4, 2))
    f = funcad.shard_map(lambda w, x: lax.psum(fnp.sum(fnp.tanh(x @ w) ** 2), ("x", "y")), mesh=m,
                         in_specs=(P(), P(("x", "y"))), out_specs=P(), check_vma=check_vma)
    jf = jax_shard_map(lambda w, x: jax.lax.psum(jnp.sum(jnp.tanh(x @ w) ** 2), ("x", "y")),
                       mesh=jm, in_specs=(JP(), JP(("x", "y"))), out_specs=JP(),
                       check_vma=check_vma)
    gw, gx = funcad.grad(f, argnums=(0, 1))(w, x)
    rw, rx = jax.grad(jf, argnums=(0, 1))(w, x)
    np.testing.assert_allclose(np.asarray(gw), rw, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gx), rx, rtol=1e-12)
    jw = funcad.jit(funcad.grad(f))(w, x)
    np.testing.assert_allclose(np.asarray(jw), rw, rtol=1e-12)
    # a replicated output: the cotangent is not counted once per device
    g = funcad.grad(lambda w: fnp.sum(funcad.shard_map(lambda v: v * 2.0, mesh=m, in_specs=P(),
                                                       out_specs=P(), check_vma=check_vma)(w)))(w)
    np.testing.assert_allclose(np.asarray(g), np.full(6, 2.0))


@on_eight_devices
def test_grad_through_all_gather_ppermute_and_scatter_matches_jax():
    x = np.random.default_rng(1).standard_normal((8, 3))
    perm = [(i, (i + 1) % 8) for i in range(8)]

    def body(lib, a):
        b = lib.lax.all_gather(a, "x", tiled=True)           # (8, 3) on every device
        c = lib.lax.ppermute(a * b[:1], "x", perm)
        d = lib.lax.psum_scatter(b * b, "x", tiled=True)
        return (lib.numpy.sin(c) + d) ** 2

    class _F:
        lax, numpy = funcad.lax, fnp

    got = funcad.grad(lambda a: fnp.sum(funcad.shard_map(
        lambda v: body(_F, v), mesh=_meshes((8,))[0], in_specs=P("x"), out_specs=P("x"))(a)))(x)
    ref = jax.grad(lambda a: jnp.sum(jax_shard_map(
        lambda v: body(jax, v), mesh=_meshes((8,))[1], in_specs=JP("x"), out_specs=JP("x"))(a)))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-12)
    # jvp agrees too
    t = np.ones_like(x)
    _, tg = funcad.jvp(funcad.shard_map(lambda v: body(_F, v), mesh=_meshes((8,))[0],
                                        in_specs=P("x"), out_specs=P("x")), (x,), (t,))
    _, tr = jax.jvp(jax_shard_map(lambda v: body(jax, v), mesh=_meshes((8,))[1],
                                  in_specs=JP("x"), out_specs=JP("x")), (x,), (t,))
    np.testing.assert_allclose(np.asarray(tg), np.asarray(tr), rtol=1e-12)


@on_eight_devices
def test_data_parallel_training_step_with_pmean_of_grads():
    rng = np.random.default_rng(2)
    f32 = np.float32
    params = {"w1": rng.standard_normal((16, 32)).astype(f32) / 4, "b1": np.zeros(32, f32),
              "w2": rng.standard_normal((32, 4)).astype(f32) / 6, "b2": np.full(4, 0.1, f32)}
    x = rng.standard_normal((64, 16)).astype(f32)
    y = rng.standard_normal((64, 4)).astype(f32)

    def loss(p, x, y, np_):
        h = np_.tanh(x @ p["w1"] + p["b1"])
        return np_.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    mesh = funcad.make_mesh((N,), ("data",))

    def step(p, x, y):
        v, g = funcad.value_and_grad(lambda p: loss(p, x, y, fnp))(p)
        g = lax.pmean(g, "data")
        return lax.pmean(v, "data"), funcad.tree.map(lambda a, b: a - 0.1 * b, p, g)

    # check_vma=False: the grad taken inside the body is the local one, as the pmean expects
    # (with JAX's default check_vma=True it is already summed over the devices; see
    # tests/sharding/test_shard_map_vma.py)
    sharded = funcad.jit(funcad.shard_map(step, mesh=mesh, in_specs=(P(), P("data"), P("data")),
                                          out_specs=(P(), P()), check_vma=False))
    v, new = sharded(params, x, y)
    v1, g1 = funcad.jit(funcad.value_and_grad(lambda p: loss(p, x, y, fnp)))(params)
    assert v.dtype == np.float32 and abs(float(v) - float(v1)) < 1e-6 * abs(float(v1))
    for k in params:
        ref = params[k] - 0.1 * np.asarray(g1[k])
        assert np.abs(np.asarray(new[k]) - ref).max() < 1e-6
    # and as JAX does it, with the same check_vma=False

    def jstep(p, x, y):
        v, g = jax.value_and_grad(lambda p: loss(p, x, y, jnp))(p)
        g = jax.lax.pmean(g, "data")
        return jax.lax.pmean(v, "data"), jax.tree.map(lambda a, b: a - 0.1 * b, p, g)

    jm = jax.sharding.Mesh(np.array(jax.devices()), ("data",))
    vj, newj = jax.jit(jax_shard_map(jstep, mesh=jm, in_specs=(JP(), JP("data"), JP("data")),
                                     out_specs=(JP(), JP()), check_vma=False))(params, x, y)
    assert abs(float(v) - float(vj)) < 1e-6 * abs(float(vj))
    for k in params:
        assert np.abs(np.asarray(new[k]) - np.asarray(newj[k])).max() < 1e-6
    # training goes downhill
    v2, _ = sharded(new, x, y)
    assert float(v2) < float(v)


@on_eight_devices
def test_vmap_and_jvp_of_shard_map_and_the_lowered_program():
    m, jm = _meshes((4, 2))
    f = funcad.shard_map(lambda a: lax.psum(fnp.sin(a), "y") * lax.axis_index("x"), mesh=m,
                         in_specs=P("x", "y"), out_specs=P("x"))
    jf = jax_shard_map(lambda a: jax.lax.psum(jnp.sin(a), "y") * jax.lax.axis_index("x"), mesh=jm,
                       in_specs=JP("x", "y"), out_specs=JP("x"))
    xb = np.arange(3 * 8 * 4.0).reshape(3, 8, 4) / 10
    np.testing.assert_allclose(np.asarray(funcad.vmap(f)(xb)), np.asarray(jax.vmap(jf)(xb)),
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(funcad.vmap(f, in_axes=2, out_axes=1)(
        np.moveaxis(xb, 0, 2))), np.moveaxis(np.asarray(jax.vmap(jf)(xb)), 0, 1), rtol=1e-12)
    x, t = xb[0], np.ones((8, 4))
    p, tg = funcad.jvp(f, (x,), (t,))
    pj, tj = jax.jvp(jf, (x,), (t,))
    np.testing.assert_allclose(np.asarray(tg), np.asarray(tj), rtol=1e-12)
    # a vmap axis name used inside shard_map
    g = funcad.vmap(funcad.shard_map(lambda a: lax.psum(a, "i") + lax.psum(a, "x"), mesh=m,
                                     in_specs=P("x"), out_specs=P("x"), check_vma=False),
                    axis_name="i")(xb)
    np.testing.assert_allclose(np.asarray(g), xb.sum(0) + np.tile(
        xb.reshape(3, 4, 2, 4).sum(1), (1, 4, 1)), rtol=1e-12)
    text = funcad.jit(f).lower(x).as_text()
    # sdy.manual_computation, as JAX's (which names its replica groups by mesh axes)
    head = ('sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] '
            'out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y"}')
    assert head in text
    if jax.config.jax_use_shardy_partitioner:  # (JAX 0.6 lowers for GSPMD by default)
        assert head in jax.jit(jf).lower(x).as_text()
    for piece in ('sdy.mesh @mesh = <["x"=4, "y"=2]>', "sdy.return", "stablehlo.all_reduce",
                  "stablehlo.partition_id", "mhlo.num_partitions = 8"):
        assert piece in text, piece
    with funcad.config.override(jax_use_shardy_partitioner=False):  # GSPMD's custom calls
        text = funcad.jit(f).lower(x).as_text()
        for piece in ('call_target_name = "SPMDFullToShardShape"', 'call_target_name = "SPMDShardToFullShape"',
                      'mhlo.sharding = "{manual}"', "stablehlo.all_reduce", "stablehlo.partition_id"):
            assert piece in text, piece
        np.testing.assert_allclose(np.asarray(funcad.jit(f)(x)), np.asarray(jf(x)), rtol=1e-12)
    out = f(x)
    assert out.sharding.spec == P("x") and out.shape == (8, 2)


@on_eight_devices
def test_shard_map_errors():
    m, _ = _meshes((4, 2))
    x = np.ones((6, 4))
    with pytest.raises(ValueError, match="6 is not divisible by 4"):
        funcad.shard_map(lambda a: a, mesh=m, in_specs=P("x"), out_specs=P("x"))(x)
    with pytest.raises(ValueError, match="which the mesh .* does not have"):
        funcad.shard_map(lambda a: a, mesh=m, in_specs=P("batch"), out_specs=P())(np.ones(8))
    with pytest.raises(NameError, match="unbound axis name: 'batch'"):
        funcad.shard_map(lambda a: lax.psum(a, "batch"), mesh=m, in_specs=P("x"),
                         out_specs=P())(np.ones(8))
    with pytest.raises(ValueError, match="can't be statically inferred.*'x'"):
        funcad.shard_map(lambda a: a * 2, mesh=m, in_specs=P("x"), out_specs=P())(np.ones(8))
    with pytest.raises(ValueError, match="not among axis_names"):
        funcad.shard_map(lambda a: a, mesh=m, in_specs=P("y"), out_specs=P("y"),
                         axis_names={"x"})(np.ones(8))
    # check_vma=False accepts it, as JAX does (the value of the first device)
    out = funcad.shard_map(lambda a: a * 2, mesh=m, in_specs=P(), out_specs=P(),
                           check_vma=False)(np.ones(8))
    np.testing.assert_allclose(np.asarray(out), np.full(8, 2.0))


@on_eight_devices
def test_pmap_matches_jax():
    x = np.arange(8 * 3 * 2.0).reshape(8, 3, 2)
    f = lambda a: fnp.sum(lax.pmean(fnp.sin(a), "i") ** 2) + lax.axis_index("i")
    jf = lambda a: jnp.sum(jax.lax.pmean(jnp.sin(a), "i") ** 2) + jax.lax.axis_index("i")
    got = funcad.pmap(f, "i")(x)
    ref = jax.pmap(jf, "i")(x)
    assert got.shape == ref.shape == (8,)
    np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-12)
    g = lambda a: fnp.sum(lax.pmean(fnp.sin(a), "i") ** 2)
    jg = lambda a: jnp.sum(jax.lax.pmean(jnp.sin(a), "i") ** 2)
    np.testing.assert_allclose(np.asarray(funcad.pmap(funcad.grad(g), "i")(x)),
                               np.asarray(jax.pmap(jax.grad(jg), "i")(x)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(funcad.grad(lambda a: funcad.pmap(g, "i")(a).sum())(x)),
                               np.asarray(jax.grad(lambda a: jax.pmap(jg, "i")(a).sum())(x)),
                               rtol=1e-12)
    # in_axes/out_axes, an unmapped argument, a static one, fewer devices, out_axes=None
    h = lambda a, b, k: (a * b * k, lax.psum(a, "i"))
    y = np.moveaxis(x[:4], 0, 1)
    got = funcad.pmap(h, "i", in_axes=(1, None, None), out_axes=(1, None),
                      static_broadcasted_argnums=2)(y, 2.0, 3)
    jh = lambda a, b, k: (a * b * k, jax.lax.psum(a, "i"))
    ref = jax.pmap(jh, "i", in_axes=(1, None, None), out_axes=(1, None),
                   static_broadcasted_argnums=2)(y, 2.0, 3)
    for a, b in zip(got, ref):
        assert a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    devs = funcad.devices()[4:]
    out = funcad.pmap(lambda a: a + 1.0, devices=devs)(x[:4])
    assert {sh.device.id for sh in out.addressable_shards} == {4, 5, 6, 7}
    with pytest.raises(ValueError, match="more than the 8 available devices"):
        funcad.pmap(lambda a: a)(np.ones(9))


@on_one_device
def test_pmap_maps_keyword_arguments_and_jit_of_it_keeps_the_signature():
    import inspect
    def foo(x, y, flag=True):
        return x * 2 + y if flag else x + y
    x = np.array([[1.0, 2.0]])
    want = jax.jit(jax.pmap(foo))(x=jnp.asarray(x), y=jnp.asarray(x) + 1)
    for f in (funcad.pmap(foo), funcad.jit(funcad.pmap(foo)), funcad.pmap(funcad.jit(foo))):
        np.testing.assert_allclose(np.asarray(f(x=x, y=x + 1)), np.asarray(want))
        np.testing.assert_allclose(np.asarray(f(x, y=x + 1)), np.asarray(want))
    sig = inspect.signature(funcad.jit(foo), follow_wrapped=False)
    assert sig == inspect.signature(jax.jit(foo), follow_wrapped=False)


@on_one_device
def test_pmap_of_a_scalar_mapped_argument_raises_value_error():
    f = lambda x, k: x * k
    with pytest.raises(ValueError):
        jax.pmap(f)(np.ones(1), 100)
    with pytest.raises(ValueError, match="rank should be at least 1, but is only 0"):
        funcad.pmap(f)(np.ones(1), 100)
    np.testing.assert_allclose(np.asarray(funcad.pmap(f, static_broadcasted_argnums=1)(np.ones(1), 100)),
                               np.asarray(jax.pmap(f, static_broadcasted_argnums=1)(np.ones(1), 100)))
