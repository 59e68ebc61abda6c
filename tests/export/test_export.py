"""funcad.export against jax.export: export -> serialize -> deserialize -> call in funcad,
bytes crossing between funcad and JAX in both directions (values and gradients through
the serialized VJP), calls under jit/vmap/grad, pytree serialization and JAX's errors."""
import collections

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import export as fe

try:  # jax.export needs absl and flatbuffers, which the oldest test env may lack
    import jax
    import jax.numpy as jnp
    from jax import export as je
    je.deserialize  # noqa: B018
    import flatbuffers  # noqa: F401
except ImportError:  # pragma: no cover
    je = None
needs_jax = pytest.mark.skipif(je is None, reason="jax.export is not importable here")

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
Y = np.array([1.0, -2.0, 0.5], np.float32)
C = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
MASK = np.array([True, False, True])


def f_elementwise(x):
    return fnp.tanh(x) * fnp.sin(x) + 1.0


def f_pytree(p, y):
    return {"mv": fnp.sin(p["x"]) @ y, "parts": [p["x"] * C, fnp.where(MASK, y, 0.0)]}


def j_pytree(p, y):
    return {"mv": jnp.sin(p["x"]) @ y, "parts": [p["x"] * C, jnp.where(MASK, y, 0.0)]}


def close(a, b, tol=1e-6):
    funcad.tree_util.tree_map(lambda u, v: np.testing.assert_allclose(np.asarray(u), np.asarray(v),
                                                                      rtol=tol, atol=tol), a, b)


# ------------------------------------------------------------ funcad alone ----

def test_roundtrip_attributes_and_values():
    exp = fe.export(funcad.jit(f_pytree))({"x": X}, Y)
    assert exp.fun_name == "f_pytree" and exp.platforms == ("cpu",) and exp.nr_devices == 1
    assert [(a.shape, a.dtype) for a in exp.in_avals] == [((2, 3), np.float32), ((3,), np.float32)]
    assert [a.shape for a in exp.out_avals] == [(2,), (2, 3), (3,)]
    assert exp.calling_convention_version == fe.maximum_supported_calling_convention_version == 10
    assert fe.minimum_supported_calling_convention_version == 9
    assert exp.module_kept_var_idx == (0, 1) and not exp.uses_global_constants
    assert exp.in_shardings_jax(None) == (None, None) and exp.out_shardings_jax(None) == (None,) * 3
    assert exp.ordered_effects == exp.unordered_effects == ()
    assert "stablehlo.sine" in exp.mlir_module() and "@main" in exp.mlir_module()
    back = fe.deserialize(exp.serialize())
    assert back.in_tree == exp.in_tree and back.out_tree == exp.out_tree
    assert back.in_avals == exp.in_avals and back.fun_name == "f_pytree" and not back.has_vjp()
    close(back.call({"x": X}, Y), f_pytree({"x": X}, Y))


def test_shape_dtype_struct_specs_and_constants():
    f = funcad.jit(lambda x, n: fnp.where(MASK, x * C, 0.0) * n)  # hoisted array constants
    spec = (funcad.ShapeDtypeStruct((2, 3), np.float32), funcad.ShapeDtypeStruct((), np.int32))
    exp = fe.deserialize(fe.export(f)(*spec).serialize(vjp_order=1))
    close(exp.call(X, np.int32(3)), np.where(MASK, X * C, 0.0) * 3)
    # the integer argument gets a float0 cotangent from the exported VJP
    close(funcad.grad(lambda x: exp.call(x, np.int32(3)).sum())(X), np.where(MASK, C, 0.0) * 3)


def test_call_under_jit_vmap_grad():
    exp = fe.deserialize(fe.export(funcad.jit(f_elementwise))(X).serialize(vjp_order=2))
    xs = np.stack([X, -X, 2 * X])
    close(funcad.jit(lambda x: exp.call(x) + exp.call(2 * x))(X),
          f_elementwise(X) + f_elementwise(2 * X))
    close(funcad.vmap(exp.call)(xs), np.stack([f_elementwise(x) for x in xs]))
    close(funcad.jit(funcad.vmap(exp.call))(xs), np.stack([f_elementwise(x) for x in xs]))
    g = funcad.grad(lambda x: f_elementwise(x).sum())
    close(funcad.grad(lambda x: exp.call(x).sum())(X), g(X), 1e-5)
    close(funcad.jit(funcad.grad(lambda x: exp.call(x).sum()))(X), g(X), 1e-5)
    s = fe.deserialize(fe.export(funcad.jit(fnp.sin))(np.float32(0.7)).serialize(vjp_order=2))
    np.testing.assert_allclose(funcad.grad(funcad.grad(s.call))(np.float32(0.7)), -np.sin(0.7), rtol=1e-6)


def test_multi_platform_module():
    exp = fe.export(funcad.jit(f_elementwise), platforms=("cpu", "cuda"))(X)
    assert exp.platforms == ("cpu", "cuda") and exp.uses_global_constants
    assert "stablehlo.case" in exp.mlir_module()
    close(fe.deserialize(exp.serialize()).call(X), f_elementwise(X))


Point = collections.namedtuple("Point", "a b")
fe.register_namedtuple_serialization(Point, serialized_name="tests.Point")


class Box:
    def __init__(self, v, tag):
        self.v, self.tag = v, tag


funcad.tree_util.register_pytree_node(Box, lambda b: ((b.v,), b.tag), lambda tag, c: Box(c[0], tag))
fe.register_pytree_node_serialization(Box, serialized_name="tests.Box",
                                      serialize_auxdata=lambda tag: tag.encode(),
                                      deserialize_auxdata=lambda b: b.decode())


def test_pytree_node_serialization():
    f = funcad.jit(lambda p, b: (Point(p.b, p.a * 2.0), Box(b.v + 1.0, b.tag),
                                 collections.OrderedDict(z=p.a, y=p.b)))
    args = (Point(X, Y), Box(Y, "meta"))
    back = fe.deserialize(fe.export(f)(*args).serialize())
    assert back.in_tree == fe.export(f)(*args).in_tree
    pt, box, od = back.call(*args)
    assert isinstance(pt, Point) and isinstance(box, Box) and box.tag == "meta"
    assert list(od) == ["z", "y"]
    close((pt.a, pt.b, box.v), (Y, 2 * X, Y + 1))
    with pytest.raises(ValueError, match="unregistered type"):
        fe.export(funcad.jit(lambda p: p.a))(collections.namedtuple("Q", "a")(X)).serialize()
    with pytest.raises(ValueError, match="Duplicate serialization registration"):
        fe.register_namedtuple_serialization(Point, serialized_name="tests.Point2")
    with pytest.raises(TypeError, match="string keys"):
        fe.export(funcad.jit(lambda d: d[1]))({1: X}).serialize()


def test_errors():
    exp = fe.export(funcad.jit(lambda x, y: x * y[0]))(X, Y)
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[0\].shape\[0\] \(expected same "
                                         r"constant\): expected \(2, 3\) and called with \(3, 2\)"):
        exp.call(X.T, Y)
    with pytest.raises(ValueError, match=r"Dtype mismatch for args\[1\]: expected float32 and called with float64"):
        exp.call(X, Y.astype(np.float64))
    with pytest.raises(ValueError, match=r"Rank mismatch for args\[0\]: expected \(2, 3\) and called with \(3,\)"):
        funcad.jit(exp.call)(Y, Y)
    with pytest.raises(ValueError, match="same pytree structure"):
        exp.call(X)
    with pytest.raises(ValueError, match="No VJP is available"):
        funcad.grad(lambda x: fe.deserialize(exp.serialize()).call(x, Y).sum())(X)
    with pytest.raises(ValueError, match="vjps of high-enough order"):
        fe.deserialize(exp.serialize()).serialize(vjp_order=1)
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        fe.export(f_elementwise)
    with pytest.raises(ValueError, match="platforms"):
        fe.export(funcad.jit(f_elementwise), platforms=("tpu",))(X)
    cuda = fe.export(funcad.jit(f_elementwise), platforms=("cuda",))(X)
    if funcad.default_backend() == "cpu":
        with pytest.raises(ValueError, match=r"exported for platforms '\('cuda',\)' but it is used on '\('cpu',\)'"):
            cuda.call(X)
    anywhere = fe.export(funcad.jit(f_elementwise), platforms=("cuda",),
                         disabled_checks=[fe.DisabledSafetyCheck.platform()])(X)
    back = fe.deserialize(anywhere.serialize())
    assert back.disabled_safety_checks == (fe.DisabledSafetyCheck.platform(),)
    close(back.call(X), f_elementwise(X))
    cb = funcad.jit(lambda x: funcad.pure_callback(np.sin, funcad.ShapeDtypeStruct((3,), np.float32), x))
    with pytest.raises(ValueError, match="host"):
        fe.export(cb)(Y)


# ------------------------------------------------------------ against JAX ----

@needs_jax
def test_jax_bytes_run_in_funcad():
    assert fe.default_export_platform() == je.default_export_platform()
    for jf, ff, args in [(lambda x: jnp.tanh(x) * jnp.sin(x) + 1.0, f_elementwise, (X,)),
                         (lambda a, b: a @ b.T, lambda a, b: a @ b.T, (X, C)),
                         (j_pytree, f_pytree, ({"x": X}, Y))]:
        blob = je.export(jax.jit(jf))(*args).serialize(vjp_order=1)
        exp = fe.deserialize(blob)
        assert exp.platforms == ("cpu",) and exp.has_vjp()
        close(exp.call(*args), ff(*args))
        close(funcad.jit(exp.call)(*args), ff(*args))
    # the gradient through the exported function comes from JAX's serialized VJP
    loss = lambda x: (exp.call({"x": x}, Y)["mv"] ** 2).sum()  # noqa: E731
    expected = jax.grad(lambda x: (j_pytree({"x": x}, Y)["mv"] ** 2).sum())(X)
    close(funcad.grad(loss)(X), expected, 1e-5)


@needs_jax
def test_funcad_bytes_run_in_jax():
    for jf, ff, args in [(lambda x: jnp.tanh(x) * jnp.sin(x) + 1.0, f_elementwise, (X,)),
                         (lambda a, b: a @ b.T, lambda a, b: a @ b.T, (X, C)),
                         (j_pytree, f_pytree, ({"x": X}, Y))]:
        exp = je.deserialize(fe.export(funcad.jit(ff))(*args).serialize(vjp_order=1))
        assert exp.in_tree == jax.tree.structure((args, {})) and exp.platforms == ("cpu",)
        close(exp.call(*args), jf(*args))
        close(jax.jit(exp.call)(*args), jf(*args))
    close(jax.grad(lambda x: (exp.call({"x": x}, Y)["mv"] ** 2).sum())(X),
          jax.grad(lambda x: (j_pytree({"x": x}, Y)["mv"] ** 2).sum())(X), 1e-5)
    # a LAPACK custom call (funcad's Cholesky on the CPU) and a multi-platform module
    spd = C.T @ C + np.eye(3, dtype=np.float32)
    chol = je.deserialize(fe.export(funcad.jit(fnp.linalg.cholesky))(spd).serialize())
    close(chol.call(spd), np.linalg.cholesky(spd), 1e-5)
    multi = je.deserialize(fe.export(funcad.jit(f_elementwise), platforms=("cpu", "cuda"))(X).serialize())
    close(multi.call(X), f_elementwise(X))


@needs_jax
def test_errors_match_jax():
    jexp = je.export(jax.jit(lambda x, y: x * y[0]))(X, Y)
    fexp = fe.deserialize(jexp.serialize())
    for bad in [(X.T, Y), (X, Y.astype(np.int32)), (Y, Y)]:
        with pytest.raises(ValueError) as want:
            jexp.call(*bad)
        with pytest.raises(ValueError) as got:
            fexp.call(*bad)
        assert str(got.value) == str(want.value)


def test_sharded_spec_on_an_abstract_mesh_without_devices_raises_naming_the_fix():
    from funcad.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec
    mesh = AbstractMesh((2, 4), ("X", "Y"), (AxisType.Explicit,) * 2)
    spec = funcad.ShapeDtypeStruct((8, 4), np.float32, sharding=NamedSharding(mesh, PartitionSpec("X")))
    with pytest.raises(ValueError, match="argument 0 has sharding .* over 8 devices, and no Mesh of those devices is known"):
        fe.export(funcad.jit(lambda a: a * 2))(spec)
    one = NamedSharding(AbstractMesh((1,), ("X",), (AxisType.Explicit,)), PartitionSpec("X"))
    exp = fe.export(funcad.jit(lambda a: a * 2))(funcad.ShapeDtypeStruct((8, 4), np.float32, sharding=one))
    assert exp.nr_devices == 1 and exp.call(np.ones((8, 4), np.float32)).tolist() == [[2.0] * 4] * 8
