"""Sharded arrays and SPMD jit over 8 simulated CPU devices.

XLA exposes several CPU devices only when XLA_FLAGS says so before the backend
starts, and the main test process has started it with one. So the one test
the main run sees, `test_sharding_suite`, runs this file again in a fresh
process with the flag set; there the other tests run (and compare with JAX
doing the same on the same devices).
"""
from __future__ import annotations


import numpy as np
import pytest

from tests.multidevice import CHILD, on_eight_devices, on_one_device, run_in_child  # noqa: E402
N = 8


@on_one_device
def test_sharding_suite():
    run_in_child(__file__)


# ---------------------------------------- one device (the main test process) ----


def test_one_device_shardings_in_the_main_process():
    import funcad
    import funcad.numpy as fnp
    from funcad.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding
    dev = funcad.devices()[0]
    mesh = funcad.make_mesh((1, 1), ("a", "b"), devices=[dev])
    x = np.arange(6.0).reshape(2, 3)
    a = funcad.device_put(x, NamedSharding(mesh, P("a", "b")))
    np.testing.assert_array_equal(np.asarray(a), x)
    f = funcad.jit(lambda v: fnp.cos(funcad.lax.with_sharding_constraint(v, SingleDeviceSharding(dev))),
                   in_shardings=NamedSharding(mesh, P("a")), out_shardings=SingleDeviceSharding(dev))
    out = f(a)
    np.testing.assert_allclose(np.asarray(out), np.cos(x))
    assert out.device == dev and type(out) is funcad.Array
    g = funcad.grad(lambda v: fnp.sum(funcad.lax.with_sharding_constraint(v, SingleDeviceSharding(dev)) ** 2))
    np.testing.assert_allclose(g(x), 2 * x)
    np.testing.assert_allclose(funcad.jit(g)(x), 2 * x)

if CHILD:
    import jax
    import jax.numpy as jnp

    import funcad
    import funcad.numpy as fnp
    from funcad.sharding import (Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding,
                                 make_mesh)
    from funcad.lowering.array import ShardedArray

    def _jax_sharding(s):
        if isinstance(s, SingleDeviceSharding):
            return jax.sharding.SingleDeviceSharding(jax.devices()[s._device.id])
        devs = np.vectorize(lambda d: jax.devices()[d.id], otypes=[object])(s.mesh.devices)
        return jax.sharding.NamedSharding(jax.sharding.Mesh(devs, s.mesh.axis_names),
                                          jax.sharding.PartitionSpec(*s.spec))

    def _rel(a, b):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        return np.abs(a - b).max() / max(np.abs(b).max(), 1e-30)


# ------------------------------------------------------------------ devices ----

@on_eight_devices
def test_device_queries_report_every_device():
    assert funcad.device_count() == N
    assert len(funcad.devices()) == N and len(funcad.local_devices()) == N
    assert funcad.local_device_count() == N
    assert [d.id for d in funcad.devices()] == list(range(N))


@on_eight_devices
def test_mesh_and_spec_basics():
    mesh = make_mesh((4, 2), ("data", "model"))
    assert mesh.shape == {"data": 4, "model": 2} and mesh.size == 8
    assert mesh.device_ids.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    s = NamedSharding(mesh, P("data", None))
    assert s == NamedSharding(mesh, P("data")) and hash(s) == hash(NamedSharding(mesh, P("data")))
    assert s.shard_shape((8, 6)) == (2, 6) and not s.is_fully_replicated
    assert NamedSharding(mesh, P(("data", "model"))).shard_shape((16, 3)) == (2, 3)
    assert len(s.device_set) == 8
    with pytest.raises(ValueError, match="needs 16 devices"):
        make_mesh((4, 4), ("a", "b"))
    with pytest.raises(ValueError, match="does not have"):
        NamedSharding(mesh, P("batch"))
    with pytest.raises(ValueError, match="more than once"):
        NamedSharding(mesh, P("data", "data"))


# ------------------------------------------------------------- device_put ----

@on_eight_devices
def test_device_put_named_sharding_spreads_and_gathers():
    mesh = make_mesh((4, 2), ("data", "model"))
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    s = NamedSharding(mesh, P("data", "model"))
    a = funcad.device_put(x, s)
    assert isinstance(a, funcad.Array) and type(a) is ShardedArray
    assert a.sharding == s and a.shape == (8, 6) and a.dtype == np.float32
    assert len(a.devices()) == 8
    np.testing.assert_array_equal(np.asarray(a), x)
    shards = a.addressable_shards
    assert len(shards) == 8
    for sh in shards:
        assert sh.data.shape == (2, 3)
        np.testing.assert_array_equal(np.asarray(sh.data), x[sh.index])
        assert sh.data.device == sh.device
    # device 3 is mesh position (1, 1): rows 2:4, columns 3:6
    by_id = {sh.device.id: sh for sh in shards}
    assert by_id[3].index == (slice(2, 4), slice(3, 6))
    # the same layout as JAX's
    ja = jax.device_put(x, _jax_sharding(s))
    for sh in ja.addressable_shards:
        assert by_id[sh.device.id].index == sh.index
    # eager funcad code sees the whole array
    assert float(fnp.sum(a + 1.0)) == float(x.sum() + 48)


@on_eight_devices
def test_device_put_replicated_single_device_and_pytrees():
    mesh = make_mesh((8,), ("data",))
    x = np.arange(8.0)
    r = funcad.device_put(x, NamedSharding(mesh, P()))
    assert r.is_fully_replicated and all(sh.data.shape == (8,) for sh in r.addressable_shards)
    dev = funcad.devices()[5]
    one = funcad.device_put(x, SingleDeviceSharding(dev))
    assert type(one) is funcad.Array and one.device == dev and one.sharding == SingleDeviceSharding(dev)
    assert funcad.device_put(x, dev).device == dev
    tree = funcad.device_put({"a": x, "b": (x[:4], 2.0)}, NamedSharding(mesh, P()))
    assert tree["a"].sharding == NamedSharding(mesh, P()) and float(tree["b"][1]) == 2.0
    mixed = funcad.device_put((x, x), (NamedSharding(mesh, P("data")), SingleDeviceSharding(dev)))
    assert mixed[0].sharding.spec == P("data") and mixed[1].device == dev
    assert r.dtype == np.float64 and np.asarray(r).dtype == np.float64  # float64 kept


@on_eight_devices
def test_device_put_errors():
    mesh = make_mesh((4, 2), ("data", "model"))
    with pytest.raises(ValueError, match="not divisible by 4"):
        funcad.device_put(np.ones((6, 2)), NamedSharding(mesh, P("data")))
    with pytest.raises(ValueError, match="more than the rank"):
        funcad.device_put(np.ones(8), NamedSharding(mesh, P("data", "model")))
    with pytest.raises(ValueError, match="NamedSharding\\(mesh, spec\\)"):
        funcad.jit(lambda v: v, in_shardings=P("data"))(np.ones(8))


# -------------------------------------------------------------------- jit ----

def _mlp_loss(params, x, y, np_):
    (w1, b1), (w2, b2) = params
    h = np_.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np_.mean((out - y) ** 2)


def _mlp_data(rng, batch=64, d=16, hidden=32, k=4):
    f32 = np.float32
    params = ((rng.standard_normal((d, hidden)).astype(f32) / 4, np.zeros(hidden, f32)),
              (rng.standard_normal((hidden, k)).astype(f32) / 6, np.full(k, 0.1, f32)))
    return params, rng.standard_normal((batch, d)).astype(f32), rng.standard_normal((batch, k)).astype(f32)


@on_eight_devices
def test_data_parallel_mlp_step_matches_single_device_and_jax():
    params, x, y = _mlp_data(np.random.default_rng(0))
    mesh = make_mesh((N,), ("data",))
    rep, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    loss = lambda p, x, y: _mlp_loss(p, x, y, fnp)
    step = funcad.jit(funcad.value_and_grad(loss), out_shardings=(rep, rep))
    ps, xs, ys = funcad.device_put(params, rep), funcad.device_put(x, batch), funcad.device_put(y, batch)
    v, g = step(ps, xs, ys)
    v1, g1 = funcad.jit(funcad.value_and_grad(loss))(params, x, y)  # one device
    jloss = lambda p, x, y: _mlp_loss(p, x, y, jnp)
    jstep = jax.jit(jax.value_and_grad(jloss),
                    out_shardings=(_jax_sharding(rep), _jax_sharding(rep)))
    jp = jax.device_put(params, _jax_sharding(rep))
    vj, gj = jstep(jp, jax.device_put(x, _jax_sharding(batch)), jax.device_put(y, _jax_sharding(batch)))
    assert v.sharding == rep and v.dtype == np.float32
    assert _rel(v, v1) < 1e-6 and _rel(v, vj) < 1e-6
    for a, b, c in zip(funcad.tree.leaves(g), funcad.tree.leaves(g1), funcad.tree.leaves(gj)):
        assert a.sharding == rep and a.dtype == np.float32
        assert _rel(a, b) < 1e-5 and _rel(a, c) < 1e-5
    # a second step takes the replicated results as they are, and trains
    new = funcad.tree.map(lambda p, d: p - 0.1 * d, ps, g)
    v2, _ = step(new, xs, ys)
    assert float(v2) < float(v)


@on_eight_devices
def test_model_sharded_matmul_matches_single_device_and_jax():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 24)).astype(np.float32)
    w = rng.standard_normal((24, 10)).astype(np.float32)
    mesh = make_mesh((4, 2), ("data", "model"))
    sx, sw, so = (NamedSharding(mesh, P("data", None)), NamedSharding(mesh, P(None, "model")),
                  NamedSharding(mesh, P("data", "model")))
    f = lambda a, b: a @ b
    out = funcad.jit(f, in_shardings=(sx, sw), out_shardings=so)(x, w)
    assert out.sharding == so
    assert {sh.data.shape for sh in out.addressable_shards} == {(4, 5)}
    ref = funcad.jit(f)(x, w)
    jout = jax.jit(f, in_shardings=(_jax_sharding(sx), _jax_sharding(sw)),
                   out_shardings=_jax_sharding(so))(x, w)
    assert _rel(out, ref) < 1e-6 and _rel(out, jout) < 1e-6
    # contraction dimension sharded: XLA adds the all-reduce
    sk = NamedSharding(mesh, P(None, "model"))
    out2 = funcad.jit(f, in_shardings=(sk, NamedSharding(mesh, P("model", None))))(x, w)
    assert _rel(out2, x @ w) < 1e-5
    # XLA's choice of output layout is named on the user's mesh, as in JAX
    out3 = funcad.jit(f)(funcad.device_put(x, sx), funcad.device_put(w, sw))
    assert out3.sharding == so, out3.sharding
    assert _rel(out3, ref) < 1e-6


@on_eight_devices
def test_sharded_args_infer_program_and_reshard():
    mesh = make_mesh((4, 2), ("data", "model"))
    x = np.arange(32.0).reshape(8, 4)
    xs = funcad.device_put(x, NamedSharding(mesh, P("data")))
    f = funcad.jit(lambda a: fnp.sin(a) * 2.0)
    y = f(xs)
    assert y.sharding == NamedSharding(mesh, P("data"))
    np.testing.assert_allclose(np.asarray(y), np.sin(x) * 2.0)
    # another layout than the argument's: resharded on the way in
    g = funcad.jit(lambda a: a.sum(0), in_shardings=NamedSharding(mesh, P(None, "model")))
    np.testing.assert_allclose(np.asarray(g(xs)), x.sum(0))
    # one-device code given a sharded array gathers it
    np.testing.assert_allclose(np.asarray(funcad.jit(lambda a: a + 1)(np.asarray(xs))), x + 1)
    # results feed the next call; the cache tells layouts apart
    np.testing.assert_allclose(np.asarray(f(y)), np.sin(np.sin(x) * 2.0) * 2.0)
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * 2.0)
    assert type(f(x)) is funcad.Array


@on_eight_devices
def test_different_device_lists_are_an_error():
    devs = funcad.devices()
    m1 = Mesh(np.array(devs[:4]), ("a",))
    m2 = Mesh(np.array(devs[4:]), ("a",))
    a = funcad.device_put(np.ones(4), NamedSharding(m1, P("a")))
    b = funcad.device_put(np.ones(4), NamedSharding(m2, P("a")))
    with pytest.raises(ValueError, match="different device lists"):
        funcad.jit(lambda u, v: u + v)(a, b)


# ------------------------------------------------------ sharding constraint ----

@on_eight_devices
def test_with_sharding_constraint_under_jit_grad_and_vmap():
    mesh = make_mesh((4, 2), ("data", "model"))
    s = NamedSharding(mesh, P("data", None))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    w = rng.standard_normal((6, 4)).astype(np.float32)

    def f(w, x):
        h = funcad.lax.with_sharding_constraint(x @ w, s)
        return fnp.sum(fnp.tanh(h) ** 2)

    def jf(w, x):
        h = jax.lax.with_sharding_constraint(x @ w, _jax_sharding(s))
        return jnp.sum(jnp.tanh(h) ** 2)

    # eager: the identity
    np.testing.assert_array_equal(funcad.lax.with_sharding_constraint(x, s), x)
    ge = funcad.grad(f)(w, x)
    gj = funcad.jit(funcad.grad(f))(w, x)
    gjax = jax.jit(jax.grad(jf))(w, x)
    assert _rel(gj, ge) < 1e-5 and _rel(gj, gjax) < 1e-5
    # jvp: the tangent is constrained too
    t = np.ones_like(w)
    _, tan = funcad.jit(lambda w: funcad.jvp(lambda w: f(w, x), (w,), (t,)))(w)
    _, tanj = jax.jvp(lambda w: jf(w, x), (w,), (t,))
    assert _rel(tan, tanj) < 1e-5
    # vmap: the batch axis stays unsplit
    xb = rng.standard_normal((3, 8, 6)).astype(np.float32)
    vb = funcad.jit(funcad.vmap(f, in_axes=(None, 0)))(w, xb)
    np.testing.assert_allclose(np.asarray(vb), [f(w, xi) for xi in xb], rtol=1e-5)
    # the program carries the annotation (Shardy's, as JAX's) and is partitioned over 8 devices
    jitted = funcad.jit(f)
    jitted(w, x)
    exe = next(iter(next(iter(jitted._cache.values())).executables.values()))
    assert '= sdy.sharding_constraint %' in exe.text and '<@mesh, [{"data"}, {}]> :' in exe.text
    assert 'sdy.mesh @mesh = <["data"=4, "model"=2]>' in exe.text
    assert "mhlo.num_partitions = 8" in exe.text
    mm = funcad.jit(lambda a, b: a @ b, in_shardings=(s, None),
                    out_shardings=NamedSharding(mesh, P(None, "model")))
    text = mm.lower(x, w).as_text()
    jtext = jax.jit(lambda a, b: a @ b, in_shardings=(_jax_sharding(s), None),
                    out_shardings=_jax_sharding(NamedSharding(mesh, P(None, "model")))
                    ).lower(x, w).as_text()
    arg0 = '%arg0: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}'
    out = '-> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>})'
    assert arg0 in text and out in text
    if jax.config.jax_use_shardy_partitioner:  # (JAX 0.6 lowers for GSPMD by default)
        assert arg0 in jtext and out.replace("{sdy", '{jax.result_info = "result", sdy') in jtext
    assert '%arg1: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}' in text
    np.testing.assert_allclose(np.asarray(mm.lower(x, w).compile()(x, w)), x @ w, rtol=1e-5)
    # GSPMD's annotations where Shardy is turned off (as JAX's option)
    with funcad.config.override(jax_use_shardy_partitioner=False):
        text = funcad.jit(f).lower(w, x).as_text()
        assert 'call_target_name = "Sharding"' in text and "mhlo.num_partitions = 8" in text
        assert "{devices=[4,1,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}" in text
        text = mm.lower(x, w).as_text()
        assert '%arg0: tensor<8x6xf32> {mhlo.sharding = "{devices=[4,1,2]0,1,2,3,4,5,6,7 ' \
            'last_tile_dim_replicate}"}' in text
        assert '%arg1: tensor<6x4xf32> {mhlo.sharding = "{replicated}"}' in text
        assert '-> (tensor<8x4xf32> {mhlo.sharding = "{devices=[1,2,4]0,2,4,6,1,3,5,7 ' \
            'last_tile_dim_replicate}"})' in text
        assert "sdy." not in text
    np.testing.assert_allclose(np.asarray(mm.lower(x, w).compile()(x, w)), x @ w, rtol=1e-5)


@on_eight_devices
def test_with_sharding_constraint_pytree_and_errors():
    mesh = make_mesh((8,), ("d",))
    s = NamedSharding(mesh, P("d"))
    out = funcad.jit(lambda t: funcad.lax.with_sharding_constraint(t, {"a": s, "b": s}))(
        {"a": np.arange(8.0), "b": np.ones(16)})
    assert out["a"].sharding == s and float(out["b"].sum()) == 16.0
    with pytest.raises(ValueError, match="NamedSharding\\(mesh, spec\\)"):
        funcad.lax.with_sharding_constraint(np.ones(8), P("d"))
    # on a device array, eagerly: laid out as asked (as in JAX)
    a = funcad.lax.with_sharding_constraint(funcad.device_put(np.arange(8.0)), s)
    assert a.sharding == s
