"""The sharding rules of decompositions, solves, fft, convolutions, custom_vjp's
linear part and exported calls on Explicit mesh axes, against JAX.

Each case is a function of typed operands. The default run compares the result
types (`eval_shape` on ShapeDtypeStructs over an AbstractMesh: no devices needed)
and the errors with JAX's; the slow suite runs the same cases on 8 simulated CPU
devices (tests/multidevice.py) and compares the values, the types and the compiled
results' shardings, and grads where they apply.
"""
from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import funcad
from funcad.core.errors import ShardingTypeError
from tests.multidevice import on_eight_devices, on_one_device, run_in_child
from tests.sharding.typed_cases import Lib, eval_shape, meshes, run, specs

rng = np.random.default_rng(0)
SPD = (lambda m: m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4))(rng.normal(size=(8, 4, 4))).astype(np.float32)
SQ = SPD[0]
TRI = np.tril(SPD)
IMG, KER = rng.normal(size=(8, 3, 8, 8)).astype(np.float32), rng.normal(size=(4, 3, 3, 3)).astype(np.float32)
DN = ("NCHW", "OIHW", "NCHW")
SIG = rng.normal(size=(8, 8)).astype(np.float32)
LABELS = np.arange(8, dtype=np.int32) % 4

# name -> (f(ns, *operands), [(operand, spec), ...]); a spec of None leaves the operand untyped
CASES = {
    "cholesky_batch": (lambda ns, a: ns.lax.linalg.cholesky(a), [(SPD, ("X",))]),
    "qr_batch": (lambda ns, a: ns.lax.linalg.qr(a), [(SPD, ("X",))]),
    "qr_reduced": (lambda ns, a: ns.np.linalg.qr(a), [(SPD, ("Y",))]),
    "eigh_batch": (lambda ns, a: ns.lax.linalg.eigh(a), [(SPD, ("X",))]),
    "eigh_replicated": (lambda ns, a: ns.lax.linalg.eigh(a), [(SQ, ())]),
    "svd_batch": (lambda ns, a: ns.lax.linalg.svd(a), [(SPD, ("X",))]),
    "svd_values": (lambda ns, a: ns.lax.linalg.svd(a, compute_uv=False), [(SPD, ("X",))]),
    "lu_batch": (lambda ns, a: ns.lax.linalg.lu(a), [(SPD, ("X",))]),
    "det_batch": (lambda ns, a: ns.np.linalg.det(a), [(SPD, ("X",))]),
    "solve_batch": (lambda ns, a, b: ns.np.linalg.solve(a, b), [(SPD, ("X",)), (SPD[..., :1], ("X",))]),
    "eig_batch": (lambda ns, a: ns.lax.linalg.eig(a), [(SPD, ("X",))]),
    "schur_batch": (lambda ns, a: ns.lax.linalg.schur(a), [(SPD, ("X",))]),
    "hessenberg_batch": (lambda ns, a: ns.lax.linalg.hessenberg(a), [(SPD, ("X",))]),
    "tridiagonal_batch": (lambda ns, a: ns.lax.linalg.tridiagonal(a), [(SPD, ("X",))]),
    "householder_batch": (lambda ns, a, t: ns.lax.linalg.householder_product(a, t),
                          [(SPD, ("X",)), (SPD[..., 0], ("X",))]),
    "tridiagonal_solve": (lambda ns, dl, d, du, b: ns.lax.linalg.tridiagonal_solve(dl, d, du, b),
                          [(np.ones((8, 4), np.float32) * np.float32([0, 1, 1, 1]), ("X",)), (SPD[..., 0] + 9, ("X",)),
                           (np.ones((8, 4), np.float32) * np.float32([1, 1, 1, 0]), ("X",)), (SPD[..., :2], ("X",))]),
    "tri_solve_batch": (lambda ns, a, b: ns.lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
                        [(TRI, ("X",)), (SPD, ("X",))]),
    "tri_solve_b_columns": (lambda ns, a, b: ns.lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
                            [(TRI, ("X",)), (SPD, ("X", None, "Y"))]),
    "tri_solve_a_rows": (lambda ns, a, b: ns.lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
                         [(TRI, ("X", "Y")), (SPD, ("X",))]),
    "tri_solve_right_transposed": (lambda ns, a, b: ns.lax.linalg.triangular_solve(
        a, b, left_side=False, lower=True, transpose_a=True), [(TRI, ("X", "Y")), (SPD, ("X",))]),
    "tri_solve_2d": (lambda ns, a, b: ns.lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
                     [(TRI[0], ()), (SQ, (None, "Y"))]),
    "fft_split": (lambda ns, x: ns.np.fft.fft(x), [(SIG, ("X", "Y"))]),
    "fft_batch": (lambda ns, x: ns.np.fft.fft(x), [(SIG, ("X",))]),
    "rfft_batch": (lambda ns, x: ns.np.fft.rfft(x), [(SIG, ("X",))]),
    "irfft_batch": (lambda ns, x: ns.np.fft.irfft(ns.np.fft.rfft(x)), [(SIG, ("X",))]),
    "fft2": (lambda ns, x: ns.np.fft.fft2(x), [(SIG, ("X", "Y"))]),
    "conv_batch": (lambda ns, x, k: ns.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=DN),
                   [(IMG, ("X",)), (KER, ())]),
    "conv_batch_valid": (lambda ns, x, k: ns.lax.conv_general_dilated(x, k, (1, 1), "VALID",
                                                                      dimension_numbers=DN),
                         [(IMG, ("X",)), (KER, ())]),
    "conv_spatial": (lambda ns, x, k: ns.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=DN),
                     [(IMG, (None, None, "Y")), (KER, ())]),
    "conv_strided": (lambda ns, x, k: ns.lax.conv_general_dilated(x, k, (2, 2), "SAME", dimension_numbers=DN),
                     [(IMG, ("X", None, "Y")), (KER, ())]),
    "conv_out_sharding": (lambda ns, x, k: ns.lax.conv_general_dilated(
        x, k, (1, 1), "SAME", dimension_numbers=DN, out_sharding=ns.s("X", "Y")),
        [(IMG, ("X",)), (KER, ("Y",))]),
    # out_sharding= of einsum: the one contraction's, or (several) all of them on Auto axes
    "einsum_contracting_split": (lambda ns, a, b: ns.np.einsum("ij,jk->ik", a, b, out_sharding=ns.s("X", None)),
                                 [(SIG, ("X", "Y")), (SIG, ("Y", None))]),
    "einsum_transposed_out": (lambda ns, a, b: ns.np.einsum("ij,jk->ki", a, b, out_sharding=ns.s("X", None)),
                              [(SIG, ("X", "Y")), (SIG, ("Y", None))]),
    "einsum_batch": (lambda ns, a, b: ns.np.einsum("bij,bjk->bik", a, b, out_sharding=ns.s("X", None, "Y")),
                     [(SPD, ("X", None, "Y")), (SPD, ("X", "Y"))]),
    "einsum_sum": (lambda ns, a: ns.np.einsum("ij->i", a, out_sharding=ns.s("Y")), [(SIG, ("X", "Y"))]),
    "einsum_three_operands": (lambda ns, a, b, c: ns.np.einsum("ij,jk,kl->il", a, b, c, out_sharding=ns.s("X")),
                              [(SIG, ("X", "Y")), (SIG, ("Y", None)), (SIG, ("Y", None))]),
    "one_hot": (lambda ns, x: ns.top.nn.one_hot(x, 4, out_sharding=ns.s("X", "Y")), [(LABELS, ("X",))]),
    "one_hot_axis0": (lambda ns, x: ns.top.nn.one_hot(x, 4, axis=0, out_sharding=ns.s("Y", "X")),
                      [(LABELS, ("X",))]),
}
ON_DEVICES = {"einsum_three_operands"}  # run on Auto axes of a concrete mesh: the slow suite only

# name -> (f, operands, the words of JAX's error)
ERRORS = {
    "qr_core_split": (lambda ns, a: ns.lax.linalg.qr(a), [(SPD, (None, None, "Y"))],
                      "Input 0 to qr must be unsharded on non-batch dimensions"),
    "eigh_core_split": (lambda ns, a: ns.lax.linalg.eigh(a, symmetrize_input=False), [(SPD, (None, "Y"))],
                        "Input 0 to eigh must be unsharded on non-batch dimensions"),
    "cholesky_core_split": (lambda ns, a: ns.lax.linalg.cholesky(a), [(SPD, (None, "X"))],
                            "illegally sharded result"),
    "tri_solve_batches": (lambda ns, a, b: ns.lax.linalg.triangular_solve(a, b, left_side=True),
                          [(TRI, ("X",)), (SPD, ("Y",))], "must have the same batch sharding"),
    "tri_solve_untyped_a": (lambda ns, a, b: ns.lax.linalg.triangular_solve(a, b, left_side=True),
                            [(TRI, None), (SPD, ("X",))], "must have the same batch sharding"),
    "einsum_no_out_sharding": (lambda ns, a, b: ns.np.einsum("ij,jk->ik", a, b), [(SIG, ("X", "Y")), (SIG, ("Y", None))],
                               "Contracting dimensions are sharded and it is ambiguous"),
    "one_hot_other_input_spec": (lambda ns, x: ns.top.nn.one_hot(x, 4, out_sharding=ns.s(None, "Y")),
                                 [(LABELS, ("X",))], "The input part of spec in out_sharding should match"),
    "one_hot_untyped_input": (lambda ns, x: ns.top.nn.one_hot(x, 4, out_sharding=ns.s("X", "Y")),
                              [(LABELS, None)], "The input part of spec in out_sharding should match"),
    "tri_solve_b_rows": (lambda ns, a, b: ns.lax.linalg.triangular_solve(a, b, left_side=True),
                         [(TRI, ("X",)), (SPD, ("X", "Y"))],
                         "triangular solve input `b` must be unsharded on the contracting axis"),
    "tri_solve_a_columns": (lambda ns, a, b: ns.lax.linalg.triangular_solve(a, b, left_side=True),
                            [(TRI, ("X", None, "Y")), (SPD, ("X",))],
                            "triangular solve input `a` must be unsharded on the contracting axis"),
    "conv_feature_split": (lambda ns, x, k: ns.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                                                        dimension_numbers=DN),
                           [(np.ones((8, 4, 8, 8), np.float32), (None, "Y")), (np.ones((4, 4, 3, 3), np.float32), ())],
                           "Please specify the output sharding via `out_sharding` parameter"),
    "conv_kernel_split": (lambda ns, x, k: ns.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                                                       dimension_numbers=DN),
                          [(IMG, ("X",)), (KER, ("Y",))],
                          "Please specify the output sharding via `out_sharding` parameter"),
    "conv_spatial_uneven": (lambda ns, x, k: ns.lax.conv_general_dilated(x, k, (1, 1), "VALID",
                                                                         dimension_numbers=DN),
                            [(IMG, (None, None, "Y")), (KER, ())],
                            "conv_general_dilated on sharded dims where out dim \\(6\\) is not divisible"),
}
UNEVEN = {  # a ValueError, as JAX's, where a changed size is not divisible by its axes
    "rfft_split": (lambda ns, x: ns.np.fft.rfft(x), [(SIG, ("X", "Y"))]),
}


@pytest.mark.parametrize("name", sorted(set(CASES) - ON_DEVICES))
def test_result_types_match_jax(name):
    f, operands = CASES[name]
    want = specs(eval_shape(True, f, operands))
    got = specs(eval_shape(False, f, operands))
    assert got == want, name


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_ambiguous_results_raise_jaxs_error(name):
    f, operands, words = ERRORS[name]
    with pytest.raises(Exception, match=words) as jerr:
        eval_shape(True, f, operands)
    assert type(jerr.value).__name__ == "ShardingTypeError"
    with pytest.raises(ShardingTypeError, match=words):
        eval_shape(False, f, operands)


@pytest.mark.parametrize("name", sorted(UNEVEN))
def test_uneven_result_sizes_raise_jaxs_value_error(name):
    f, operands = UNEVEN[name]
    words = "implies that array axis 1 is partitioned 4 times, but does not evenly divide"
    with pytest.raises(ValueError, match=words):
        eval_shape(True, f, operands)
    with pytest.raises(ValueError, match=words):
        eval_shape(False, f, operands)


def _loss(ns, f):
    return lambda *a: sum(ns.np.sum(ns.np.real(o) ** 2) for o in jax.tree_util.tree_leaves(f(*a)))


def _grad(operands):
    return lambda ns, g: ns.top.grad(_loss(ns, g), argnums=tuple(range(len(operands))))


GRADS = ["cholesky_batch", "tri_solve_batch", "fft_batch", "rfft_batch", "conv_batch",
         "conv_spatial", "conv_out_sharding", "einsum_contracting_split", "einsum_batch"]


@pytest.mark.parametrize("name", GRADS)
def test_cotangent_types_match_jax(name):
    f, operands = CASES[name]
    g = lambda ns, *a: _grad(operands)(ns, lambda *b: f(ns, *b))(*a)  # noqa: E731
    assert specs(eval_shape(False, g, operands)) == specs(eval_shape(True, g, operands)), name


def test_custom_vjp_cotangents_keep_their_types():
    def loss(lib, a):
        @lib.top.custom_vjp
        def f(a):
            return lib.np.sin(a)
        f.defvjp(lambda a: (lib.np.sin(a), a), lambda a, g: (g * lib.np.cos(a) * 3,))
        return f(a).sum()
    grad = lambda lib, a: lib.top.grad(lambda b: loss(lib, b))(a)  # noqa: E731
    want = eval_shape(True, grad, [(SIG, ("X", "Y"))])
    got = eval_shape(False, grad, [(SIG, ("X", "Y"))])
    assert specs(got) == specs(want) == [("X", "Y")]


# ------------------------------------------ 8 simulated CPU devices (slow) ----

@pytest.mark.slow
@on_one_device
def test_sharding_rules_on_eight_devices():
    run_in_child(__file__)


@on_eight_devices
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_types_and_layouts_match_jax(name):
    f, operands = CASES[name]
    want, got = run(True, f, operands), run(False, f, operands)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        if name.startswith(("qr", "svd", "eig", "schur", "hessenberg", "householder", "lu", "tridiagonal_b")):
            assert g.shape == w.shape  # bases and signs may differ between LAPACK calls
        else:
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-4)
        assert specs([funcad.typeof(g)]) == specs([jax.typeof(w)]), name
        assert tuple(g.sharding.spec) == tuple(w.sharding.spec), name


@on_eight_devices
@pytest.mark.parametrize("name", GRADS)
def test_cotangents_keep_their_primals_types(name):
    f, operands = CASES[name]
    want, got = run(True, f, operands, _grad(operands)), run(False, f, operands, _grad(operands))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=2e-3)
        assert specs([funcad.typeof(g)]) == specs([jax.typeof(w)]), name


@on_eight_devices
def test_exported_calls_take_typed_operands():
    from funcad import export as fexport
    exp = fexport.export(funcad.jit(lambda a: a * 2 + 1))(funcad.ShapeDtypeStruct((8, 8), np.float32))
    jexp = jax.export.export(jax.jit(lambda a: a * 2 + 1))(jax.ShapeDtypeStruct((8, 8), np.float32))
    call = lambda lib, a: (exp if not lib.jax else jexp).call(a)  # noqa: E731
    got, want = run(False, call, [(SIG, ("X", "Y"))]), run(True, call, [(SIG, ("X", "Y"))])
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    # a one-device export's results are unsharded in their types, as JAX's
    jaxprs = []
    for lib, mesh in zip((Lib(False), Lib(True)), meshes()):
        x = lib.top.device_put(SIG, lib.NS(mesh, lib.P("X", "Y")))
        jaxprs.append(str(lib.top.make_jaxpr(lambda a: call(lib, a))(x)))
    assert all("a:f32[8@X,8@Y]" in j and "f32[8,8] = call_exported" in j for j in jaxprs), jaxprs


# ------------------------- collectives in a shard_map over some of the axes ----

COLLECTIVES = {  # name -> (body(lib, size of X), out_specs mapped): the body maps over X only
    "psum": (lambda lib, n: lambda b: lib.lax.psum(lib.np.sin(b), "X"), False),
    "pmax": (lambda lib, n: lambda b: lib.lax.pmax(b, "X"), False),
    "ppermute": (lambda lib, n: lambda b: lib.lax.ppermute(b, "X", [(i, (i + 1) % n) for i in range(n)]), True),
    "all_to_all": (lambda lib, n: lambda b: lib.lax.all_to_all(b, "X", 0, 0, tiled=True), True),
    "axis_index": (lambda lib, n: lambda b: b + lib.lax.axis_index("X").astype(b.dtype), True),
}


def _partial_manual(lib, mesh, name):
    body, mapped = COLLECTIVES[name]
    return lambda a: lib.top.shard_map(body(lib, mesh.shape["X"]), mesh=mesh, in_specs=lib.P("X"),
                                       out_specs=lib.P("X") if mapped else lib.P(), axis_names={"X"})(a)


def _types_in_partial_manual(name, shape):
    """The body's and the result's types of the shard_map over X (the jaxprs' text)."""
    out = []
    for lib in (Lib(False), Lib(True)):
        kind = lib.top.sharding.AxisType.Explicit
        mesh = lib.top.make_mesh(shape, ("X", "Y"), axis_types=(kind, kind),
                                 devices=lib.top.devices()[:int(np.prod(shape))])
        x = lib.top.device_put(SIG, lib.NS(mesh, lib.P("X", "Y")))
        text = str(lib.top.make_jaxpr(_partial_manual(lib, mesh, name))(x))
        out.append(sorted(set(re.findall(r"f32\[[^\]]*\]", text))))
    return out


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collectives_in_a_partial_shard_map_type_as_jaxs(name):
    # a (1, 1) mesh: the types are those of any size, on the one device this process has
    got, want = _types_in_partial_manual(name, (1, 1))
    assert got == want and any("@Y" in t for t in got), (got, want)


@on_eight_devices
@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collectives_in_a_partial_shard_map_match_jax(name):
    got, want = _types_in_partial_manual(name, (2, 4))
    assert got == want, (got, want)
    fmesh, jmesh = meshes()
    results = []
    for lib, mesh in ((Lib(False), fmesh), (Lib(True), jmesh)):
        x = lib.top.device_put(SIG, lib.NS(mesh, lib.P("X", "Y")))
        results.append(lib.top.jit(_partial_manual(lib, mesh, name))(x))
    np.testing.assert_allclose(np.asarray(results[0]), np.asarray(results[1]), rtol=1e-5)
    assert specs([funcad.typeof(results[0])]) == specs([jax.typeof(results[1])])


@on_eight_devices
def test_partial_shard_map_bodies_typed_under_gspmd_too():
    # GSPMD (the oldest jaxlibs' partitioner) takes no layout over the free axes inside a
    # manual region: the types stay, the constraints are left out
    fmesh, _ = meshes()
    x = funcad.device_put(SIG, funcad.sharding.NamedSharding(fmesh, funcad.sharding.PartitionSpec("X", "Y")))
    funcad.config.update("jax_use_shardy_partitioner", False)
    try:
        got = funcad.jit(_partial_manual(Lib(False), fmesh, "psum"))(x)
    finally:
        funcad.config.update("jax_use_shardy_partitioner", True)
    np.testing.assert_allclose(np.asarray(got), np.sin(SIG).reshape(2, 4, 8).sum(0), rtol=1e-5)
    assert specs([funcad.typeof(got)]) == [(None, "Y")]


@on_eight_devices
@pytest.mark.parametrize("name", ["global_array_to_host_local_array", "host_local_array_to_global_array"])
def test_host_local_conversions_take_typed_operands(name):
    from funcad.experimental import multihost_utils as fmu
    from jax.experimental import multihost_utils as jmu
    texts = []
    for lib, mu, mesh in zip((Lib(False), Lib(True)), (fmu, jmu), meshes()):
        x = lib.top.device_put(SIG, lib.NS(mesh, lib.P("X", "Y")))
        f = lambda a: getattr(mu, name)(a, mesh, lib.P("X", "Y"))  # noqa: E731
        np.testing.assert_array_equal(np.asarray(lib.top.jit(f)(x)), SIG)
        texts.append(str(lib.top.make_jaxpr(f)(x)))
    assert all(f"f32[8,8] = {name}" in t for t in texts), texts
