"""Meshes against JAX: the mesh context and names (set_mesh, get_mesh, AbstractMesh,
AxisType, reshard, make_array_from_*), collectives' axis_index_groups,
vmap(spmd_axis_name=) and debug.inspect_array_sharding under jit.

The 8-device tests run in a child process (`test_mesh_suite`, as in
tests/sharding/test_shard_map.py); one-device checks run in the main process.
"""
from __future__ import annotations


import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.errors import UnsupportedError
from funcad.sharding import AxisType, NamedSharding, PartitionSpec as P

from tests.multidevice import on_eight_devices, on_one_device, run_in_child

lax = funcad.lax


@on_one_device
def test_mesh_suite():
    run_in_child(__file__)


import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)
JP = jax.sharding.PartitionSpec


def meshes(shape, names):
    """A funcad mesh and JAX's (Auto axes) over the same device ids."""
    jm = jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Auto,) * len(shape))
    ids = [d.id for d in jm.devices.flat]
    by_id = {d.id: d for d in funcad.devices()}
    fm = funcad.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape),
                          devices=[by_id[i] for i in ids])
    return fm, jm


def spec_of(sharding):
    """A sharding's spec without trailing Nones, to compare funcad's with JAX's."""
    parts = list(sharding.spec)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


# ------------------------------------------------------- names (one device) ----

@on_one_device
def test_top_level_and_sharding_names_match_jax():
    assert funcad.NamedSharding is funcad.sharding.NamedSharding
    assert funcad.P is funcad.sharding.PartitionSpec
    for name in ("make_array_from_callback", "make_array_from_single_device_arrays",
                 "make_array_from_process_local_data", "set_mesh", "get_mesh",
                 "get_abstract_mesh", "reshard"):
        assert callable(getattr(funcad, name)) and hasattr(jax, name), name
    for name in ("AbstractMesh", "AxisType", "get_abstract_mesh", "get_mesh", "reshard",
                 "set_mesh", "make_single_device_sharding"):
        assert hasattr(funcad.sharding, name) and hasattr(jax.sharding, name), name
    assert [t.name for t in AxisType] == ["Auto", "Explicit", "Manual"]


@on_one_device
def test_mesh_context_one_device():
    assert funcad.get_mesh().empty and funcad.get_abstract_mesh().empty
    mesh = funcad.make_mesh((1, 1), ("a", "b"), devices=funcad.devices()[:1])
    assert mesh.axis_types == (AxisType.Explicit, AxisType.Explicit)  # JAX 0.12's default
    with funcad.set_mesh(mesh) as m:
        assert m is mesh and funcad.get_mesh() is mesh
        am = funcad.get_abstract_mesh()
        assert am.shape == {"a": 1, "b": 1} and am == mesh.abstract_mesh
        with funcad.sharding.use_mesh(funcad.make_mesh((1,), ("c",), devices=funcad.devices()[:1])):
            assert funcad.get_mesh().axis_names == ("c",)
        assert funcad.get_mesh() is mesh
    assert funcad.get_mesh().empty
    funcad.set_mesh(mesh)            # set without a with block, as jax.set_mesh
    try:
        assert funcad.get_mesh() is mesh
    finally:
        funcad.set_mesh(None)
    assert funcad.get_mesh().empty


@on_one_device
def test_explicit_and_manual_axes_are_meshes_as_in_jax():
    from jax.sharding import AxisType as JT
    for t in (AxisType.Explicit, AxisType.Manual):
        m = funcad.make_mesh((1,), ("x",), (t,), devices=funcad.devices()[:1])
        jm = jax.make_mesh((1,), ("x",), (getattr(JT, t.name),), devices=jax.devices()[:1])
        assert [a.name for a in m.axis_types] == [a.name for a in jm.axis_types]
        am = funcad.sharding.AbstractMesh((2,), ("x",), (t,))
        auto = funcad.sharding.AbstractMesh((2,), ("x",), (AxisType.Auto,))
        assert am.axis_types == (t,) and am != auto
        assert m.abstract_mesh == funcad.sharding.AbstractMesh((1,), ("x",), (t,))
    m = funcad.sharding.Mesh(np.array(funcad.devices()[:1]), ("x",))
    assert m.axis_types == (AxisType.Auto,)  # Mesh's default, as jax.sharding.Mesh's
    with pytest.raises(ValueError, match="one AxisType per axis"):
        funcad.make_mesh((1, 1), ("x", "y"), ("Auto",), devices=funcad.devices()[:1])


@on_one_device
def test_partition_specs_need_a_mesh():
    with pytest.raises(ValueError, match="set_mesh"):
        funcad.device_put(np.ones(2), P())
    with pytest.raises(ValueError, match="set_mesh"):
        funcad.jit(lambda v: lax.with_sharding_constraint(v, P()))(np.ones(2))
    with pytest.raises(ValueError, match="context mesh"):
        funcad.shard_map(lambda v: v, in_specs=P(), out_specs=P())(np.ones(2))
    with pytest.raises(ValueError, match="set_mesh"):
        funcad.reshard(np.ones(2), P())
    with pytest.raises(TypeError, match="AbstractMesh"):
        funcad.set_mesh(funcad.sharding.AbstractMesh((1,), ("x",)))


# -------------------------------------------------- mesh context (8 devices) ----

@on_eight_devices
def test_set_mesh_resolves_specs_like_jax():
    fm, jm = meshes((4, 2), ("a", "b"))
    x = np.arange(32.0).reshape(8, 4)

    def f(v, lib):
        spec = (P if lib is funcad else JP)(None, "b")
        return lib.lax.with_sharding_constraint(lib.numpy.sin(v) * 2.0, spec)

    with funcad.set_mesh(fm), jax.set_mesh(jm):
        fx, jx = funcad.device_put(x, P("a")), jax.device_put(x, JP("a"))
        assert fx.sharding == NamedSharding(fm, P("a")) and spec_of(jx.sharding) == ("a",)
        fy = funcad.jit(lambda v: f(v, funcad))(fx)
        jy = jax.jit(lambda v: f(v, jax))(jx)
        np.testing.assert_allclose(np.asarray(fy), np.asarray(jy), rtol=1e-14)
        assert spec_of(fy.sharding) == spec_of(jy.sharding) == (None, "b")
        g = funcad.jit(lambda v: v + 1.0, in_shardings=P("a"), out_shardings=P("b"))
        out = g(x)
        assert out.sharding == NamedSharding(fm, P("b"))
        assert [s.data.shape for s in out.addressable_shards] == [(4, 4)] * 8
        np.testing.assert_array_equal(np.asarray(out), x + 1.0)
        fs = funcad.shard_map(lambda v: lax.psum(v.sum(), "a"), in_specs=P("a"), out_specs=P())
        js = jax.shard_map(lambda v: jax.lax.psum(v.sum(), "a"), in_specs=JP("a"), out_specs=JP())
        np.testing.assert_allclose(float(fs(x)), float(js(x)))
        np.testing.assert_allclose(float(funcad.jit(fs)(x)), float(x.sum()))
    assert funcad.get_mesh().empty


@on_eight_devices
def test_jit_recompiles_for_another_context_mesh():
    m1, _ = meshes((8,), ("a",))
    m2 = funcad.make_mesh((2, 4), ("a", "b"))
    f = funcad.jit(lambda v: lax.with_sharding_constraint(v * 2.0, P("a")))
    x = np.arange(16.0)
    with funcad.set_mesh(m1):
        y1 = f(x)
    with funcad.set_mesh(m2):
        y2 = f(x)
    assert y1.sharding == NamedSharding(m1, P("a"))
    assert y2.sharding.mesh == m2 and len(y2.addressable_shards[0].data) == 8
    np.testing.assert_array_equal(np.asarray(y1), np.asarray(y2))


@on_eight_devices
def test_reshard_with_auto_axes_as_jax():
    fm, jm = meshes((8,), ("a",))
    x = funcad.device_put(np.arange(8.0), NamedSharding(fm, P("a")))
    with funcad.set_mesh(fm):
        y = funcad.reshard(x, P())
        assert y is x or y.sharding == x.sharding  # Auto axes: the layout stays XLA's
        with pytest.raises(ValueError, match="Auto or Manual"):
            funcad.reshard(x, P("a"))
    with jax.set_mesh(jm):
        jx = jax.device_put(np.arange(8.0), JP("a"))
        assert spec_of(jax.sharding.reshard(jx, JP()).sharding) == ("a",)
        with pytest.raises(ValueError, match="Auto or Manual"):
            jax.sharding.reshard(jx, JP("a"))


@on_eight_devices
def test_make_array_from_callback_and_pieces_match_jax():
    fm, jm = meshes((4, 2), ("a", "b"))
    data = np.arange(48.0).reshape(8, 6)
    fs, js = NamedSharding(fm, P("a", "b")), jax.sharding.NamedSharding(jm, JP("a", "b"))
    seen = []
    fa = funcad.make_array_from_callback(data.shape, fs, lambda idx: seen.append(idx) or data[idx])
    ja = jax.make_array_from_callback(data.shape, js, lambda idx: data[idx])
    assert len(seen) == 8 and fa.sharding == fs
    np.testing.assert_array_equal(np.asarray(fa), np.asarray(ja))
    assert [np.asarray(s.data).tolist() for s in fa.addressable_shards] == \
        [np.asarray(s.data).tolist() for s in ja.addressable_shards]
    np.testing.assert_allclose(float(funcad.jit(lambda v: (v * v).sum())(fa)), (data ** 2).sum())
    # one single-device array per device, in any order
    pieces = [funcad.device_put(data[idx], d) for d, idx in fs.devices_indices_map(data.shape).items()]
    fb = funcad.make_array_from_single_device_arrays(data.shape, fs, pieces[::-1])
    np.testing.assert_array_equal(np.asarray(fb), data)
    assert fb.sharding == fs
    with pytest.raises(ValueError, match="one per device"):
        funcad.make_array_from_single_device_arrays(data.shape, fs, pieces[:3])
    with pytest.raises(ValueError, match="block of shape"):
        funcad.make_array_from_callback(data.shape, fs, lambda idx: data)
    # one process holds the whole array
    fc = funcad.make_array_from_process_local_data(fs, data)
    jc = jax.make_array_from_process_local_data(js, data)
    np.testing.assert_array_equal(np.asarray(fc), np.asarray(jc))
    assert fc.sharding == fs and fc.shape == jc.shape == data.shape
    with funcad.set_mesh(fm):
        fd = funcad.make_array_from_callback((8,), P("a"), lambda idx: np.arange(8.0)[idx])
    assert fd.sharding == NamedSharding(fm, P("a"))


# ------------------------------------------------------ axis_index_groups ----

GROUPS = [[0, 1], [2, 3], [4, 5], [6, 7]]
GROUPS2 = [[0, 2, 4, 6], [1, 3, 5, 7]]

GROUP_CASES = {
    "psum": lambda lib, v, g: lib.lax.psum(v, "i", axis_index_groups=g),
    "pmean": lambda lib, v, g: lib.lax.pmean(v, "i", axis_index_groups=g),
    "pmax": lambda lib, v, g: lib.lax.pmax(v, "i", axis_index_groups=g),
    "pmin": lambda lib, v, g: lib.lax.pmin(v, "i", axis_index_groups=g),
    "all_gather": lambda lib, v, g: lib.lax.all_gather(v, "i", axis_index_groups=g),
    "all_gather_tiled": lambda lib, v, g: lib.lax.all_gather(v, "i", axis_index_groups=g,
                                                             axis=0, tiled=True),
    "psum_scatter": lambda lib, v, g: lib.lax.psum_scatter(
        lib.numpy.concatenate([v, v]), "i", axis_index_groups=g, tiled=True),
}


@on_eight_devices
@pytest.mark.parametrize("groups", [GROUPS, GROUPS2], ids=["pairs", "strided"])
@pytest.mark.parametrize("case", sorted(GROUP_CASES))
def test_axis_index_groups_under_pmap_match_jax(case, groups):
    fn = GROUP_CASES[case]
    x = np.random.default_rng(0).normal(size=(8, 2))
    out = funcad.pmap(lambda v: fn(funcad, v, groups), axis_name="i")(x)
    ref = jax.pmap(lambda v: fn(jax, v, groups), axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-12)


@on_eight_devices
def test_axis_index_groups_psum_scatter_untiled_and_grads_match_jax():
    x = np.arange(16.0).reshape(8, 2)
    f = lambda lib: lib.pmap(lambda v: lib.lax.psum_scatter(v, "i", axis_index_groups=GROUPS),  # noqa: E731
                             axis_name="i")
    np.testing.assert_allclose(np.asarray(f(funcad)(x)), np.asarray(f(jax)(x)))
    w = np.linspace(-1, 1, 16).reshape(8, 2)

    def loss(lib, v):
        g = lib.pmap(lambda u: lib.lax.psum(u ** 2, "i", axis_index_groups=GROUPS2)
                     * lib.lax.pmean(u, "i", axis_index_groups=GROUPS), axis_name="i")(v)
        return (g * w).sum()
    np.testing.assert_allclose(np.asarray(funcad.grad(lambda v: loss(funcad, v))(x)),
                               np.asarray(jax.grad(lambda v: loss(jax, v))(x)), rtol=1e-12)


@on_eight_devices
def test_axis_index_groups_lower_to_replica_groups():
    fm, jm = meshes((8,), ("i",))
    f = funcad.shard_map(lambda v: lax.psum(v, "i", axis_index_groups=GROUPS2), mesh=fm,
                         in_specs=P("i"), out_specs=P("i"), check_vma=False)
    text = funcad.jit(f).lower(np.arange(8.0)).as_text()
    ids = [d.id for d in fm.devices.flat]
    pos = {i: k for k, i in enumerate(ids)}
    assert "stablehlo.all_reduce" in text
    assert "replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]>" in text or pos != \
        {i: i for i in range(8)}
    js = jax.shard_map(lambda v: jax.lax.psum(v, "i", axis_index_groups=GROUPS2), mesh=jm,
                       in_specs=JP("i"), out_specs=JP("i"), check_vma=False)
    np.testing.assert_allclose(np.asarray(f(np.arange(8.0))), np.asarray(js(np.arange(8.0))))
    g = funcad.shard_map(lambda v: lax.all_gather(v, "i", axis_index_groups=GROUPS), mesh=fm,
                         in_specs=P("i"), out_specs=P("i"), check_vma=False)
    jg = jax.shard_map(lambda v: jax.lax.all_gather(v, "i", axis_index_groups=GROUPS), mesh=jm,
                       in_specs=JP("i"), out_specs=JP("i"), check_vma=False)
    np.testing.assert_allclose(np.asarray(g(np.arange(8.0))), np.asarray(jg(np.arange(8.0))))


@on_eight_devices
def test_axis_index_groups_errors_where_jax_raises():
    fm, _ = meshes((8,), ("i",))
    with pytest.raises(UnsupportedError, match="check_vma"):
        funcad.shard_map(lambda v: lax.psum(v, "i", axis_index_groups=GROUPS), mesh=fm,
                         in_specs=P("i"), out_specs=P("i"))(np.arange(8.0))
    with pytest.raises(ValueError, match="cover all indices exactly once"):
        funcad.pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [1, 2]]),
                    axis_name="i")(np.arange(8.0))
    with pytest.raises(ValueError, match="same size"):
        funcad.pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1, 2], [3, 4, 5, 6, 7]]),
                    axis_name="i")(np.arange(8.0))


@on_one_device
def test_axis_index_groups_under_vmap_raise_as_jax():
    for fn in (lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [2, 3]]),
               lambda v: lax.all_gather(v, "i", axis_index_groups=[[0, 1], [2, 3]])):
        with pytest.raises(UnsupportedError, match="not supported in vmap"):
            funcad.vmap(fn, axis_name="i")(np.arange(4.0))
    with pytest.raises(ValueError, match="cover all indices exactly once"):
        funcad.vmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 2]]),
                    axis_name="i")(np.arange(4.0))
    with pytest.raises(NotImplementedError, match="not supported in vmap"):
        jax.vmap(lambda v: jax.lax.psum(v, "i", axis_index_groups=[[0, 1], [2, 3]]),
                 axis_name="i")(np.arange(4.0))


# --------------------------------------------------------- spmd_axis_name ----

@on_eight_devices
@pytest.mark.parametrize("names", ["a", ("a", "b")], ids=["one", "two"])
def test_vmap_spmd_axis_name_shards_the_batch_like_jax(names):
    fm, jm = meshes((4, 2), ("a", "b"))
    inner = P() if names != "a" else P("b")
    x = np.arange(64.0).reshape(8, 8)

    def f(lib, mesh, spec):
        ns = funcad.sharding.NamedSharding if lib is funcad else jax.sharding.NamedSharding
        return lambda v: lib.lax.with_sharding_constraint(lib.numpy.sin(v) * 2.0, ns(mesh, spec))

    fo = funcad.jit(funcad.vmap(f(funcad, fm, inner), spmd_axis_name=names))(x)
    jo = jax.jit(jax.vmap(f(jax, jm, JP(*inner)), spmd_axis_name=names))(x)
    np.testing.assert_allclose(np.asarray(fo), np.asarray(jo), rtol=1e-14)
    assert spec_of(fo.sharding) == spec_of(jo.sharding)
    assert spec_of(fo.sharding)[0] == names
    # without it the batch dimension is not split (as in JAX)
    fp = funcad.jit(funcad.vmap(f(funcad, fm, inner)))(x)
    assert spec_of(fp.sharding)[:1] in ((), (None,))
    # grad through the vmapped constraint keeps the value
    g = funcad.jit(funcad.grad(lambda v: funcad.vmap(f(funcad, fm, inner),
                                                     spmd_axis_name=names)(v).sum()))(x)
    np.testing.assert_allclose(np.asarray(g), 2.0 * np.cos(x), rtol=1e-14)


@on_one_device
def test_vmap_spmd_axis_name_errors():
    mesh = funcad.make_mesh((1,), ("a",), devices=funcad.devices()[:1])
    s = NamedSharding(mesh, P("a"))
    with pytest.raises(ValueError, match="not in the mesh"):
        funcad.jit(funcad.vmap(lambda v: lax.with_sharding_constraint(v, s),
                               spmd_axis_name="z"))(np.ones((2, 1)))
    with pytest.raises(ValueError, match="one dimension only"):
        funcad.jit(funcad.vmap(lambda v: lax.with_sharding_constraint(v, s),
                               spmd_axis_name="a"))(np.ones((2, 1)))


def test_mesh_reprs_and_abstract_mesh_default_as_jax():
    jax = pytest.importorskip("jax")
    assert repr(funcad.sharding.AbstractMesh((2,), ("x",))) == repr(jax.sharding.AbstractMesh((2,), ("x",)))
    assert funcad.sharding.AbstractMesh((2, 3), ("x", "y")).axis_types == (funcad.sharding.AxisType.Explicit,) * 2
    assert repr(funcad.sharding.AbstractMesh((), ())) == repr(jax.sharding.AbstractMesh((), ()))
    m = funcad.sharding.Mesh(np.array(funcad.devices()[:1]), ("x",))
    jm = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    assert repr(m) == repr(jm)
    assert repr(m.abstract_mesh) == repr(jm.abstract_mesh)
