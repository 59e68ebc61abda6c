"""Unreduced PartitionSpecs and use_abstract_mesh, against JAX 0.12.

`P(..., unreduced={"Y"})` types an array held as partial sums over mesh axis Y:
a dot_general's `out_sharding=` leaves its contraction over Y unreduced, sums of
such arrays stay so, other operations raise JAX's errors, and `reshard` to a spec
without Y reduces (one all-reduce). `use_abstract_mesh` names the mesh
PartitionSpecs refer to while tracing. The default run compares specs, types and
errors (no devices); the slow suite the values and compiled programs on 8
simulated CPU devices.
"""
from __future__ import annotations

import pickle

import jax
import numpy as np
import pytest

import funcad
from funcad.core.errors import ShardingTypeError, UnsupportedError
from funcad.sharding import AbstractMesh, AxisType, PartitionSpec as P, UnreducedKind
from tests.multidevice import on_eight_devices, on_one_device, run_in_child
from tests.sharding.typed_cases import eval_shape, run, specs

JP = jax.sharding.PartitionSpec
A = np.arange(64.0, dtype=np.float32).reshape(8, 8) / 10


@pytest.mark.parametrize("kw", [dict(unreduced={"Y"}), dict(reduced={"Y"}), dict(unreduced={"Y"}, reduced={"Z"}),
                                dict(unreduced={"Y"}, unreduced_kind="max")])
def test_partition_spec_reads_and_compares_as_jaxs(kw):
    fkw, jkw = dict(kw), dict(kw)
    if "unreduced_kind" in kw:
        fkw["unreduced_kind"] = UnreducedKind.max
        jkw["unreduced_kind"] = jax.sharding.UnreducedKind.max
    ours, theirs = P("X", None, **fkw), JP("X", None, **jkw)
    assert repr(ours) == repr(theirs)
    assert (ours == P("X", None)) == (theirs == JP("X", None)) is False
    assert hash(ours) == hash(P("X", None))
    assert (ours.unreduced, ours.reduced) == (theirs.unreduced, theirs.reduced)
    assert pickle.loads(pickle.dumps(ours)) == ours
    assert ours.update(unreduced=frozenset()) == P("X", None, reduced=ours.reduced)


@pytest.mark.parametrize("kw", [dict(unreduced={"X"}), dict(unreduced={"Y"}, reduced={"Y"}),
                                dict(unreduced={None}), dict(reduced={"X"})])
def test_partition_spec_errors_as_jaxs(kw):
    with pytest.raises(ValueError) as want:
        JP("X", **kw)
    with pytest.raises(ValueError) as got:
        P("X", **kw)
    assert str(got.value) == str(want.value).replace("jax.", "funcad.")


def test_unreduced_axes_must_be_explicit():
    for lib, mesh in ((jax.sharding, jax.sharding.AbstractMesh((2, 4), ("X", "Y"), axis_types=(
            jax.sharding.AxisType.Explicit, jax.sharding.AxisType.Auto))),
                      (funcad.sharding, AbstractMesh((2, 4), ("X", "Y"), (AxisType.Explicit, AxisType.Auto)))):
        with pytest.raises(ValueError, match="Unreduced axes can only refer to mesh axes that is of type"):
            lib.NamedSharding(mesh, lib.PartitionSpec("X", unreduced={"Y"}))


DOT = lambda lib, a, b: lib.np.dot(a, b, out_sharding=lib.s("X", None, unreduced={"Y"}))  # noqa: E731
SPLIT = [(A, ("X", "Y")), (A, ("Y", None))]

# name -> (f, operands): the same types as JAX's (unreduced axes included)
CASES = {
    "dot_unreduced": (DOT, SPLIT),
    "sum_of_partials": (lambda lib, a, b: DOT(lib, a, b) + DOT(lib, a, b), SPLIT),
    "reduced_by_reshard": (lambda lib, a, b: lib.top.sharding.reshard(DOT(lib, a, b), lib.s("X", None)), SPLIT),
}
ERRORS = {
    "nonlinear": (lambda lib, a, b: lib.np.sin(DOT(lib, a, b)), SPLIT,
                  "sin is a non-linear operation and cannot accept input that is unreduced"),
    "scaled": (lambda lib, a, b: DOT(lib, a, b) * 2.0, SPLIT,
               "RHS should be reduced along the same axes LHS is unreduced on"),
    "mixed_add": (lambda lib, a, b: DOT(lib, a, b) + a, SPLIT,
                  "lhs is unreduced while rhs is not. `add` operation does not allow this"),
    "wrong_axes": (lambda lib, a, b: lib.np.dot(a, b, out_sharding=lib.s(None, None, unreduced={"X"})), SPLIT,
                   "out_sharding's unreduced axes should be equal to the contracting specs"),
    "nothing_contracted_split": (DOT, [(A, ("X",)), (A, ())],
                                 "out_sharding's unreduced axes should be equal to the contracting specs"),
}


def _unreduced(tree) -> list:
    return [frozenset(leaf.sharding.spec.unreduced) for leaf in jax.tree_util.tree_leaves(tree)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_unreduced_types_match_jax(name):
    f, operands = CASES[name]
    got, want = eval_shape(False, f, operands), eval_shape(True, f, operands)
    assert specs(got) == specs(want) and _unreduced(got) == _unreduced(want), name


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_unreduced_errors_match_jax(name):
    f, operands, words = ERRORS[name]
    with pytest.raises(Exception, match=words) as jerr:
        eval_shape(True, f, operands)
    assert type(jerr.value).__name__ == "ShardingTypeError"
    with pytest.raises(ShardingTypeError, match=words):
        eval_shape(False, f, operands)


def test_the_type_prints_its_unreduced_axes_as_jaxs():
    text = str(funcad.make_jaxpr(lambda a, b: DOT(*_lib(), a, b))(*_structs()))
    assert "f32[8@X,8]{U:Y} = dot_general" in text


def _lib():
    from tests.sharding.typed_cases import AMESH, Lib
    return (Lib(False, AMESH),)


def _structs():
    from tests.sharding.typed_cases import AMESH
    from funcad.sharding import NamedSharding
    return [funcad.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(AMESH, P(*spec))) for a, spec in SPLIT]


def test_reduced_axes_raise_naming_the_missing_types():
    mesh = AbstractMesh((2, 4), ("X", "Y"), (AxisType.Explicit,) * 2)
    s = funcad.sharding.NamedSharding(mesh, P("X", reduced={"Y"}))
    with pytest.raises(UnsupportedError, match="reduced array types"):
        funcad.eval_shape(lambda a: funcad.sharding.reshard(a, s), funcad.ShapeDtypeStruct((8, 8), np.float32))


# ------------------------------------------------------- use_abstract_mesh ----

def _meshes(sizes=(2, 4)):
    return (AbstractMesh(sizes, ("X", "Y"), (AxisType.Explicit,) * 2),
            jax.sharding.AbstractMesh(sizes, ("X", "Y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2))


def test_use_abstract_mesh_sets_the_mesh_partition_specs_name():
    fm, jm = _meshes()
    f = lambda lib: lambda a: lib.sharding.reshard(a * 2, lib.sharding.PartitionSpec("X", "Y"))  # noqa: E731
    with funcad.sharding.use_abstract_mesh(fm) as got_mesh, jax.sharding.use_abstract_mesh(jm):
        assert got_mesh == funcad.sharding.get_abstract_mesh() == fm
        assert jax.sharding.get_abstract_mesh() == jm
        got = funcad.eval_shape(f(funcad), np.ones((8, 8), np.float32))
        want = jax.eval_shape(f(jax), np.ones((8, 8), np.float32))
        text = str(funcad.make_jaxpr(f(funcad))(np.ones((8, 8), np.float32)))
    assert specs([got]) == specs([want]) == [("X", "Y")]
    assert "f32[8@X,8@Y] = sharding_constraint" in text
    assert funcad.sharding.get_abstract_mesh().empty and jax.sharding.get_abstract_mesh().empty


def test_use_abstract_mesh_errors_as_jaxs():
    (fm, jm), (fm2, jm2) = _meshes(), _meshes((1, 2))
    for lib, mesh, other in ((jax.sharding, jm, jm2), (funcad.sharding, fm, fm2)):
        with pytest.raises(ValueError, match="Expected mesh of type `(jax|funcad).sharding.AbstractMesh`"):
            lib.use_abstract_mesh(object())
        with lib.use_abstract_mesh(mesh):
            with pytest.raises(ValueError, match="use_abstract_mesh cannot change the size of the mesh"):
                with lib.use_abstract_mesh(other):
                    pass
            assert lib.get_abstract_mesh() == mesh


# ------------------------------------------ 8 simulated CPU devices (slow) ----

@pytest.mark.slow
@on_one_device
def test_unreduced_on_eight_devices():
    run_in_child(__file__)


@on_eight_devices
@pytest.mark.parametrize("name", ["reduced_by_reshard"])
def test_partial_sums_reduce_as_jaxs(name):
    f, operands = CASES[name]
    got, want = run(False, f, operands), run(True, f, operands)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got), A @ A, rtol=1e-5)
    assert specs([funcad.typeof(got)]) == specs([jax.typeof(want)]) == [("X", None)]


@on_eight_devices
def test_sums_of_partial_sums_reduce_once():
    f = lambda lib, a, b: lib.top.sharding.reshard(DOT(lib, a, b) + DOT(lib, a, b), lib.s("X", None))  # noqa: E731
    got, want = run(False, f, SPLIT), run(True, f, SPLIT)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
    from tests.sharding.typed_cases import Lib, meshes
    texts = []
    for lib, mesh in zip((Lib(False), Lib(True)), meshes()):
        lib.mesh = mesh
        args = [lib.top.device_put(a, lib.s(*spec)) for a, spec in SPLIT]
        texts.append(lib.top.jit(lambda a, b: f(lib, a, b)).lower(*args).compile().as_text())
    assert [t.count(" all-reduce(") for t in texts] == [1, 1]
