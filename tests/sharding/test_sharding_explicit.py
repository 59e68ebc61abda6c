"""Sharding in types on Explicit mesh axes, against JAX on 8 simulated CPU devices.

Each case runs the same program in funcad and in JAX, on arrays placed with
device_put(NamedSharding(explicit mesh, spec)): the results' values and the
shardings in their types (`typeof(y).sharding.spec`) must agree, eagerly typed
under jit and as jaxprs; where JAX raises its ShardingTypeError funcad raises it
too. The file runs in a child process (tests/multidevice.py).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.multidevice import CHILD, on_eight_devices, on_one_device, run_in_child

N = 8


@on_one_device
def test_explicit_sharding_suite():
    run_in_child(__file__)


if CHILD:
    import jax
    import jax.numpy as jnp
    import funcad
    import funcad.numpy as fnp
    from funcad.core.errors import ShardingTypeError
    from funcad.sharding import AxisType, NamedSharding, PartitionSpec as P

    MESH = funcad.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
    JMESH = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)


class _NS:
    """The namespaces a case uses: funcad's or JAX's."""

    def __init__(self, jax_side: bool):
        self.jax = jax_side
        self.np = jnp if jax_side else fnp
        self.lax = jax.lax if jax_side else funcad.lax
        self.mesh = JMESH if jax_side else MESH
        self.P = jax.sharding.PartitionSpec if jax_side else P
        self.NS = jax.sharding.NamedSharding if jax_side else NamedSharding
        self.top = jax if jax_side else funcad

    def put(self, x, *spec):
        return self.top.device_put(np.asarray(x, np.float32), self.NS(self.mesh, self.P(*spec)))

    def s(self, *spec):
        return self.NS(self.mesh, self.P(*spec))


def _spec(x, top) -> tuple:
    s = top.typeof(x).sharding
    parts = list(s.spec) + [None] * (np.ndim(x) - len(s.spec))
    return tuple(p[0] if isinstance(p, tuple) and len(p) == 1 else p for p in parts)


A = np.arange(32.0, dtype=np.float32).reshape(8, 4)
B = np.arange(32.0, dtype=np.float32).reshape(4, 8) / 7
R = np.linspace(-1, 1, 4).astype(np.float32)

# name -> f(ns) returning the value to check
CASES = {
    "mul": lambda ns: ns.put(A, "X", "Y") * 2.0,
    "add_row": lambda ns: ns.put(A, "X", "Y") + ns.np.asarray(R),
    "add_typed": lambda ns: ns.put(A, "X", "Y") + ns.put(A, "X", None),
    "sin": lambda ns: ns.np.sin(ns.put(A, "X", None)),
    "sum0": lambda ns: ns.put(A, "X", "Y").sum(0),
    "sum1": lambda ns: ns.put(A, "X", "Y").sum(1),
    "sum_all": lambda ns: ns.put(A, "X", "Y").sum(),
    "max0": lambda ns: ns.put(A, "X", "Y").max(0),
    "argmax1": lambda ns: ns.np.argmax(ns.put(A, "X", "Y"), 1),
    "transpose": lambda ns: ns.put(A, "X", "Y").T,
    "reshape_merge": lambda ns: ns.put(A, "X", "Y").reshape(32),
    "reshape_split": lambda ns: ns.put(A, "X", "Y").reshape(2, 4, 4),
    "reshape_split2": lambda ns: ns.put(A, ("X", "Y"), None).reshape(2, 4, 4),
    "reshape_unit": lambda ns: ns.put(A, "X", "Y").reshape(8, 1, 4),
    "reshape_out": lambda ns: ns.np.reshape(ns.put(A, "X", "Y"), (4, 8), out_sharding=ns.s("X", "Y")),
    "broadcast": lambda ns: ns.np.broadcast_to(ns.put(A, "X", "Y"), (3, 8, 4)),
    "expand": lambda ns: ns.put(A, "X", "Y")[None],
    "concat0": lambda ns: ns.np.concatenate([ns.put(A, "X", "Y")] * 2, 0),
    "concat1": lambda ns: ns.np.concatenate([ns.put(A, "X", "Y")] * 2, 1),
    "cast": lambda ns: ns.put(A, "X", "Y").astype(ns.np.int32),
    "where": lambda ns: ns.np.where(ns.put(A, "X", "Y") > 3, ns.put(A, "X", "Y"), 0.0),
    "rev": lambda ns: ns.np.flip(ns.put(A, "X", "Y"), 0),
    "dynamic_slice": lambda ns: ns.lax.dynamic_slice(ns.put(A, "X", "Y"), (2, 0), (4, 4)),
    "matmul_free": lambda ns: ns.put(A, "X", None) @ ns.put(B, None, "Y"),
    "dot_out": lambda ns: ns.np.dot(ns.put(A, "X", "Y"), ns.put(B, "Y", None), out_sharding=ns.s("X", None)),
    "einsum_batch": lambda ns: ns.np.einsum("bij,bjk->bik", ns.put(np.ones((8, 4, 4)), "X"),
                                            ns.put(np.ones((8, 4, 4)), "X")),
    "vmap": lambda ns: ns.top.vmap(lambda r: r * 2)(ns.put(A, "X", "Y")),
    "vmap_axis1": lambda ns: ns.top.vmap(lambda r: r.sum(), in_axes=1)(ns.put(A, "X", "Y")),
}

# name -> the error JAX and funcad raise
ERRORS = {
    "conflict": (lambda ns: ns.put(A, "X", None) + ns.put(A, "Y", None),
                 "incompatible shardings for broadcasting"),
    "duplicate_axis": (lambda ns: ns.put(np.ones((8, 8)), "X", None) + ns.put(np.ones((8, 8)), None, "X"),
                       "illegally sharded result"),
    "reshape_ambiguous": (lambda ns: ns.put(A, "X", "Y").reshape(4, 8), "This reshape is not supported"),
    "reshape_merge_none_first": (lambda ns: ns.put(A, None, "Y").reshape(32), "This reshape is not supported"),
    "contracting": (lambda ns: ns.put(A, "X", "Y") @ ns.put(B, "Y", None),
                    "Contracting dimensions are sharded"),
    "batch_mismatch": (lambda ns: ns.np.einsum("bij,bjk->bik", ns.put(np.ones((8, 4, 4)), "X"),
                                               ns.put(np.ones((8, 4, 4)), "Y")),
                       "batch dimensions to have the same sharding"),
    "cumsum": (lambda ns: ns.np.cumsum(ns.put(A, "X", "Y"), 0), "unsharded over the axis being reduced"),
    "sort": (lambda ns: ns.np.sort(ns.put(A, "X", "Y"), 0), "unsharded over the sorting dimension"),
    "gather": (lambda ns: ns.put(A, "X", "Y")[ns.np.array([0, 1])], "out_sharding="),
}


@on_eight_devices
@pytest.mark.parametrize("name", sorted(CASES))
def test_types_and_values_match_jax_under_jit(name):
    f = CASES[name]
    want = jax.jit(lambda: f(_NS(True)))()
    got = funcad.jit(lambda: f(_NS(False)))()
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert _spec(got, funcad) == _spec(want, jax), name
    # the laid-out result has the same layout as JAX's
    assert got.sharding.spec == funcad.sharding.PartitionSpec(*want.sharding.spec) or \
        _spec(got, funcad) == _spec(want, jax)


@on_eight_devices
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_ambiguous_shardings_raise_jaxs_error(name):
    f, msg = ERRORS[name]
    with pytest.raises(Exception, match=msg) as jerr:
        jax.jit(lambda: f(_NS(True)))()
    assert type(jerr.value).__name__ == "ShardingTypeError"
    with pytest.raises(ShardingTypeError, match=msg):
        funcad.jit(lambda: f(_NS(False)))()


@on_eight_devices
def test_typeof_eager_and_in_jaxprs():
    x = funcad.device_put(A, NamedSharding(MESH, P("X", "Y")))
    jx = jax.device_put(A, jax.sharding.NamedSharding(JMESH, jax.sharding.PartitionSpec("X", "Y")))
    t = funcad.typeof(x)
    assert t.str_short() == "f32[8@X,4@Y]" and repr(jax.typeof(jx)) == "ShapedArray(float32[8@X,4@Y])"
    assert t.sharding.mesh == MESH.abstract_mesh and tuple(t.sharding.spec) == ("X", "Y")
    assert funcad.typeof(np.ones(3)).sharding.mesh.empty and jax.typeof(np.ones(3)).sharding.mesh.empty
    text = str(funcad.make_jaxpr(lambda a: (a * 2).sum(0))(x))
    assert "a:f32[8@X,4@Y]" in text and "f32[4@Y] = reduce_sum" in text
    # jit's result is laid out as its type says
    y = funcad.jit(lambda a: a.sum(0))(x)
    assert y.sharding == NamedSharding(MESH, P("Y")) and funcad.typeof(y).str_short() == "f32[4@Y]"


@on_eight_devices
def test_a_mesh_with_auto_axes_types_only_its_explicit_ones():
    m = funcad.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    x = funcad.device_put(A, NamedSharding(m, P("X", "Y")))
    assert funcad.typeof(x).str_short() == "f32[8@X,4]"
    auto = funcad.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
    assert funcad.typeof(funcad.device_put(A, NamedSharding(auto, P("X", "Y")))).str_short() == "f32[8,4]"


@on_eight_devices
def test_grad_cotangents_carry_their_primals_shardings():
    def loss(w, x):
        return ((x @ w) ** 2).sum()
    args = lambda ns: (ns.put(B, None, "Y"), ns.put(A, "X", None))  # noqa: E731
    jg = jax.jit(jax.grad(loss, argnums=(0, 1)))(*args(_NS(True)))
    fg = funcad.jit(funcad.grad(loss, argnums=(0, 1)))(*args(_NS(False)))
    for g, j in zip(fg, jg):
        np.testing.assert_allclose(np.asarray(g), np.asarray(j), rtol=1e-5)
        assert _spec(g, funcad) == _spec(j, jax)


@on_eight_devices
def test_reshard_changes_the_type_eagerly_and_under_jit():
    from funcad.sharding import reshard, set_mesh
    x = funcad.device_put(A, NamedSharding(MESH, P("X", None)))
    jx = jax.device_put(A, jax.sharding.NamedSharding(JMESH, jax.sharding.PartitionSpec("X", None)))
    with set_mesh(MESH), jax.set_mesh(JMESH):
        y = reshard(x, P(None, "Y"))
        jy = jax.sharding.reshard(jx, jax.sharding.PartitionSpec(None, "Y"))
        assert _spec(y, funcad) == _spec(jy, jax) == (None, "Y")
        z = funcad.jit(lambda a: reshard(a, P("Y", "X")))(x)
        jz = jax.jit(lambda a: jax.sharding.reshard(a, jax.sharding.PartitionSpec("Y", "X")))(jx)
        assert _spec(z, funcad) == _spec(jz, jax)
        np.testing.assert_array_equal(np.asarray(z), np.asarray(jz))
        assert z.sharding == NamedSharding(MESH, P("Y", "X"))


@on_eight_devices
def test_auto_axes_and_explicit_axes():
    from funcad.sharding import auto_axes, explicit_axes, set_mesh
    x = funcad.device_put(A, NamedSharding(MESH, P("X", "Y")))
    jx = jax.device_put(A, jax.sharding.NamedSharding(JMESH, jax.sharding.PartitionSpec("X", "Y")))
    JP = jax.sharding.PartitionSpec
    with set_mesh(MESH), jax.set_mesh(JMESH):
        y = funcad.jit(lambda a: auto_axes(lambda b: b.reshape(4, 8) * 2, out_sharding=P("X", None))(a))(x)
        jy = jax.jit(lambda a: jax.sharding.auto_axes(lambda b: b.reshape(4, 8) * 2,
                                                      out_sharding=JP("X", None))(a))(jx)
        np.testing.assert_array_equal(np.asarray(y), np.asarray(jy))
        assert _spec(y, funcad) == _spec(jy, jax)
    am = funcad.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
    jam = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    with set_mesh(am), jax.set_mesh(jam):
        f = lambda a: a.sum(0)  # noqa: E731
        y = funcad.jit(explicit_axes(f, in_sharding=P("X", "Y")))(A)
        jy = jax.jit(jax.sharding.explicit_axes(f, in_sharding=JP("X", "Y")))(A)
        np.testing.assert_allclose(np.asarray(y), np.asarray(jy))
        assert _spec(y, funcad) == _spec(jy, jax)


@on_eight_devices
def test_out_sharding_of_creation_and_samplers_types_the_result():
    from funcad.sharding import set_mesh
    JP = jax.sharding.PartitionSpec
    with set_mesh(MESH), jax.set_mesh(JMESH):
        pairs = [
            (lambda: fnp.zeros((8, 4), out_sharding=P("X", "Y")),
             lambda: jnp.zeros((8, 4), out_sharding=JP("X", "Y"))),
            (lambda: fnp.full((8, 4), 2.0, out_sharding=P(None, "Y")),
             lambda: jnp.full((8, 4), 2.0, out_sharding=JP(None, "Y"))),
            (lambda: funcad.random.normal(funcad.random.key(0), (8, 4), np.float32, out_sharding=P("X", "Y")),
             lambda: jax.random.normal(jax.random.key(0), (8, 4), out_sharding=JP("X", "Y"))),
            (lambda: funcad.nn.one_hot(_NS(False).put(np.arange(8) % 4, "X"), 4, out_sharding=P("X", None)),
             lambda: jax.nn.one_hot(_NS(True).put(np.arange(8) % 4, "X"), 4, out_sharding=JP("X", None))),
        ]
        for f, j in pairs:
            for wrap_f, wrap_j in ((lambda g: g, lambda g: g), (funcad.jit, jax.jit)):
                got, want = wrap_f(f)(), wrap_j(j)()
                np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
                assert _spec(got, funcad) == _spec(want, jax)


@on_eight_devices
def test_shard_map_and_smap_infer_their_specs_from_the_types():
    from funcad.sharding import set_mesh
    m = funcad.make_mesh((8,), ("i",))
    jm = jax.make_mesh((8,), ("i",))
    data = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    with set_mesh(m), jax.set_mesh(jm):
        x = funcad.device_put(data, P("i"))
        jx = jax.device_put(data, jax.sharding.PartitionSpec("i"))
        body = lambda lib: (lambda a: lib.lax.psum(a, "i") * 2)  # noqa: E731
        y = funcad.smap(body(funcad), out_axes=0, axis_name="i")(x)
        jy = jax.smap(body(jax), out_axes=0, axis_name="i")(jx)
        np.testing.assert_allclose(np.asarray(y), np.asarray(jy))
        assert _spec(y, funcad) == _spec(jy, jax)
        local = lambda a: a.sum(0, keepdims=True)  # noqa: E731
        y = funcad.shard_map(local, out_specs=P("i"))(x)
        jy = jax.shard_map(local, out_specs=jax.sharding.PartitionSpec("i"))(jx)
        np.testing.assert_allclose(np.asarray(y), np.asarray(jy))
        assert _spec(y, funcad) == _spec(jy, jax)


@on_eight_devices
@pytest.mark.parametrize("name", ["sum", "sum0_squared", "reshape_sum"])
def test_cotangents_of_reductions_and_reshapes_keep_the_primals_shardings(name):
    from funcad.sharding import set_mesh
    f = {"sum": lambda a: a.sum(), "sum0_squared": lambda a: (a.sum(0) ** 2).sum(),
         "reshape_sum": lambda a: (a.reshape(32) * 2).sum()}[name]
    x = funcad.device_put(A, NamedSharding(MESH, P("X", "Y")))
    jx = jax.device_put(A, jax.sharding.NamedSharding(JMESH, jax.sharding.PartitionSpec("X", "Y")))
    with set_mesh(MESH), jax.set_mesh(JMESH):
        want = jax.jit(jax.grad(f))(jx)
        for got in (funcad.jit(funcad.grad(f))(x), funcad.grad(f)(x)):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
            assert _spec(got, funcad) == _spec(want, jax) == ("X", "Y")


@on_eight_devices
def test_eager_ops_with_out_sharding():
    # eagerly a typed operation with out_sharding= runs its one-op program on the host
    # values and places the result as its type says (the tutorial's eager jnp.dot)
    got = fnp.dot(_NS(False).put(A, "X", "Y"), _NS(False).put(B, "Y", None), out_sharding=_NS(False).s("X", None))
    want = jnp.dot(_NS(True).put(A, "X", "Y"), _NS(True).put(B, "Y", None), out_sharding=_NS(True).s("X", None))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
    assert _spec(got, funcad) == _spec(want, jax) == ("X", None)
