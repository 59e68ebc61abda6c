"""funcad.export of multi-device (sharded) programs against jax.export: the Exported's
shardings and device count, the SPMD module, serialization both ways, and calls on 8
devices. The multi-device checks run in a child process with 8 simulated CPU devices."""
from __future__ import annotations

import os
import sys

import jax
import numpy as np
import pytest
from jax import export as je
from jax.sharding import NamedSharding as JNS, PartitionSpec as JP

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import funcad  # noqa: E402
from funcad import export as fe  # noqa: E402
from funcad.sharding import NamedSharding, PartitionSpec as P  # noqa: E402
from tests.multidevice import on_eight_devices, on_one_device, run_in_child  # noqa: E402


A = np.arange(32, dtype=np.float32).reshape(8, 4)
B = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
IN_SPECS, OUT_SPECS = (("x", "y"), ()), (("x",), ("y",))


def f(a, b):
    return a * 2.0 + b, (a * b).sum(0)


@pytest.mark.slow
@on_one_device
def test_multidevice_suite():
    run_in_child(__file__)


@on_one_device
def test_one_device_export_records_no_shardings():  # the cheap sibling of the suite
    exp = fe.export(funcad.jit(f))(A, B)
    jexp = je.export(jax.jit(f))(A, B)
    assert exp._in_named_shardings == jexp._in_named_shardings == (None, None)
    assert exp.nr_devices == jexp.nr_devices == 1
    back = fe.deserialize(exp.serialize())
    assert back._out_named_shardings == (None, None) and back.nr_devices == 1
    assert je.deserialize(exp.serialize())._in_named_shardings == (None, None)


def _pair():
    """The same sharded function exported by funcad and by JAX, with both meshes."""
    fmesh, jmesh = funcad.make_mesh((4, 2), ("x", "y")), jax.make_mesh((4, 2), ("x", "y"))
    fjit = funcad.jit(f, in_shardings=tuple(NamedSharding(fmesh, P(*s)) for s in IN_SPECS),
                      out_shardings=tuple(NamedSharding(fmesh, P(*s)) for s in OUT_SPECS))
    jjit = jax.jit(f, in_shardings=tuple(JNS(jmesh, JP(*s)) for s in IN_SPECS),
                   out_shardings=tuple(JNS(jmesh, JP(*s)) for s in OUT_SPECS))
    spec = funcad.ShapeDtypeStruct((8, 4), np.float32)
    jspec = jax.ShapeDtypeStruct((8, 4), np.float32)
    return fe.export(fjit)(spec, spec), je.export(jjit)(jspec, jspec), fmesh, jmesh


def _specs(shardings):
    return [None if s is None else (tuple(s.mesh.axis_names), tuple(s.mesh.axis_sizes),
                                    tuple(t.name for t in s.mesh.axis_types), tuple(s.spec))
            for s in shardings]


def _placement(x):
    """Per device id: the index of the block it holds."""
    return sorted((s.device.id, str(s.index)) for s in x.addressable_shards)


@on_eight_devices
def test_sharded_export_fields_and_module_as_jax():
    exp, jexp, fmesh, jmesh = _pair()
    assert exp.nr_devices == jexp.nr_devices == 8
    assert exp.in_shardings_hlo == jexp.in_shardings_hlo == (None, None)
    assert _specs(exp._in_named_shardings) == _specs(jexp._in_named_shardings)
    assert _specs(exp._out_named_shardings) == _specs(jexp._out_named_shardings)
    assert _specs(exp.in_shardings_jax(fmesh)) == _specs(jexp.in_shardings_jax(jmesh))
    assert exp.in_shardings_jax(fmesh)[0].mesh is fmesh
    assert _specs(exp.out_shardings_jax(fmesh)) == _specs(jexp.out_shardings_jax(jmesh))
    text, jtext = exp.mlir_module(), jexp.mlir_module()
    for piece in ("mhlo.num_partitions = 8 : i32", 'sdy.mesh @mesh = <["x"=4, "y"=2]>',
                  'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>',
                  'sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>'):
        assert piece in text and piece in jtext, piece


@on_eight_devices
def test_funcad_export_round_trips_and_runs_in_jax():
    exp, jexp, fmesh, jmesh = _pair()
    blob = exp.serialize()
    back = fe.deserialize(blob)
    assert back.nr_devices == 8 and _specs(back._out_named_shardings) == _specs(exp._out_named_shardings)
    got_j = je.deserialize(blob)  # the interop: JAX reads and calls funcad's bytes
    assert got_j.nr_devices == 8 and _specs(got_j._in_named_shardings) == _specs(jexp._in_named_shardings)
    jargs = [jax.device_put(x, s) for x, s in zip((A, B), got_j.in_shardings_jax(jmesh))]
    want = jax.jit(jexp.call)(*jargs)
    got = jax.jit(got_j.call)(*jargs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert g.sharding.spec == w.sharding.spec and _placement(g) == _placement(w)
    fargs = [funcad.device_put(x, s) for x, s in zip((A, B), back.in_shardings_jax(fmesh))]
    for g, w in zip(funcad.jit(back.call)(*fargs), want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert tuple(g.sharding.spec) == tuple(w.sharding.spec) and _placement(g) == _placement(w)


@on_eight_devices
def test_jax_export_runs_in_funcad_on_8_devices():
    _, jexp, fmesh, jmesh = _pair()
    exp = fe.deserialize(jexp.serialize())
    assert exp.nr_devices == 8
    jargs = [jax.device_put(x, s) for x, s in zip((A, B), jexp.in_shardings_jax(jmesh))]
    want = jax.jit(jexp.call)(*jargs)
    fargs = [funcad.device_put(x, s) for x, s in zip((A, B), exp.in_shardings_jax(fmesh))]
    for got in (funcad.jit(exp.call)(*fargs), exp.call(*fargs)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
            assert tuple(g.sharding.spec) == tuple(w.sharding.spec) and _placement(g) == _placement(w)
    # unsharded arguments are laid out as exported inside the program
    got = funcad.jit(exp.call)(A, B)
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-6)


@on_eight_devices
def test_call_on_another_number_of_devices_raises_jaxs_error():
    from funcad.sharding import AxisType
    from jax.sharding import AxisType as JAxisType
    jmesh = jax.make_mesh((8,), ("x",), axis_types=(JAxisType.Auto,))
    jexp = je.export(jax.jit(lambda a: a * 2, in_shardings=JNS(jmesh, JP("x"))))(A)
    exp = fe.deserialize(jexp.serialize())
    mesh4 = funcad.make_mesh((4,), ("x",), (AxisType.Auto,), devices=funcad.devices()[:4])
    jmesh4 = jax.make_mesh((4,), ("x",), axis_types=(JAxisType.Auto,), devices=jax.devices()[:4])
    cases = [(lambda: jax.jit(jexp.call)(A), lambda: funcad.jit(exp.call)(A)),
             (lambda: jax.jit(jexp.call, in_shardings=JNS(jmesh4, JP("x")))(A),
              lambda: funcad.jit(exp.call, in_shardings=NamedSharding(mesh4, P("x")))(A))]
    for jax_call, funcad_call in cases:
        with pytest.raises(ValueError, match="exported for 8 devices and is called in a context") as want:
            jax_call()
        with pytest.raises(ValueError) as got:
            funcad_call()
        assert str(got.value) == str(want.value)
    # on the 8 devices of any mesh (Auto axes): laid out as exported, numbers as JAX's
    mesh = funcad.make_mesh((8,), ("x",), (AxisType.Auto,))
    got = funcad.jit(exp.call, in_shardings=NamedSharding(mesh, P()))(A)
    np.testing.assert_array_equal(np.asarray(got), 2 * A)


@on_eight_devices
def test_grad_through_sharded_export_as_jax():
    fmesh, jmesh = funcad.make_mesh((4, 2), ("x", "y")), jax.make_mesh((4, 2), ("x", "y"))
    g = lambda a: (a * a * a).sum(1)  # noqa: E731
    exp = fe.export(funcad.jit(g, in_shardings=NamedSharding(fmesh, P("x", "y"))))(A)
    blob = exp.serialize(vjp_order=1)
    back, jback = fe.deserialize(blob), je.deserialize(blob)
    assert back.vjp().nr_devices == 8
    x = funcad.device_put(A, NamedSharding(fmesh, P("x", "y")))
    got = funcad.grad(lambda a: back.call(a).sum())(x)
    jx = jax.device_put(A, JNS(jmesh, JP("x", "y")))
    with jax.set_mesh(jmesh):  # (JAX's grad of a typed call needs its mesh entered)
        want = jax.jit(jax.grad(lambda a: jback.call(a).sum()))(jx)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got), 3 * A * A, rtol=1e-6)
    assert tuple(got.sharding.spec) == tuple(want.sharding.spec) and _placement(got) == _placement(want)


@on_eight_devices
def test_sharded_export_for_another_platform_raises_naming_the_fix():
    fmesh = funcad.make_mesh((8,), ("x",))
    fjit = funcad.jit(lambda a: a + 1, in_shardings=NamedSharding(fmesh, P("x")))
    with pytest.raises(ValueError, match=r"a sharded export is lowered for its mesh's devices, "
                                         r"which are 'cpu'; pass platforms=\['cpu'\]"):
        fe.export(fjit, platforms=["cpu", "cuda"])(A)
    # a ShapeDtypeStruct's sharding on the abstract mesh of a known Mesh
    spec = funcad.ShapeDtypeStruct((8, 4), np.float32,
                                   sharding=NamedSharding(fmesh.abstract_mesh, P("x")))
    exp = fe.export(funcad.jit(lambda a: a + 1))(spec)
    assert exp.nr_devices == 8 and tuple(exp.in_shardings_jax(fmesh)[0].spec) == ("x",)
    jexp = je.export(jax.jit(lambda a: a + 1))(jax.ShapeDtypeStruct(
        (8, 4), np.float32, sharding=JNS(jax.make_mesh((8,), ("x",)).abstract_mesh, JP("x"))))
    assert _specs(exp._in_named_shardings) == _specs(jexp._in_named_shardings)
    assert _specs(exp._out_named_shardings) == _specs(jexp._out_named_shardings)


@on_eight_devices
def test_sharded_export_under_gspmd_round_trips():
    fmesh = funcad.make_mesh((4, 2), ("x", "y"))
    funcad.config.update("jax_use_shardy_partitioner", False)
    try:
        exp = fe.export(funcad.jit(lambda a: (a * 2).sum(0), in_shardings=NamedSharding(fmesh, P("x", "y")),
                                   out_shardings=NamedSharding(fmesh, P("y"))))(A)
        assert 'mhlo.sharding = "{devices=[4,2]0,1,2,3,4,5,6,7}"' in exp.mlir_module()
        back = fe.deserialize(exp.serialize())
        x = funcad.device_put(A, NamedSharding(fmesh, P("x", "y")))
        got = funcad.jit(back.call)(x)
        shardy = fe.deserialize(_pair()[1].serialize())  # JAX's, with Shardy's meshes
        with pytest.raises(ValueError, match="exported with shardy enabled but you are calling it "
                                             "with Shardy disabled"):
            funcad.jit(shardy.call)(x, x)
    finally:
        funcad.config.update("jax_use_shardy_partitioner", True)
    np.testing.assert_allclose(np.asarray(got), (A * 2).sum(0))
    assert tuple(got.sharding.spec) == ("y",)
