"""The sharding rules of decompositions, solves, fft, convolutions, custom_vjp's
linear part and exported calls on Explicit mesh axes, against JAX.

Each case is a function of typed operands. The default run compares the result
types (`eval_shape` on ShapeDtypeStructs over an AbstractMesh: no devices needed)
and the errors with JAX's; the slow suite runs the same cases on 8 simulated CPU
devices (tests/multidevice.py) and compares the values, the types and the compiled
results' shardings, and grads where they apply.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.errors import ShardingTypeError
from funcad.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P
from tests.multidevice import CHILD, run_in_child

JP, JNS = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
AMESH = AbstractMesh((2, 4), ("X", "Y"), (AxisType.Explicit,) * 2)
JAMESH = jax.sharding.AbstractMesh((2, 4), ("X", "Y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)


class _NS:
    """The namespaces a case uses: funcad's or JAX's."""

    def __init__(self, jax_side: bool):
        self.np = jnp if jax_side else fnp
        self.lax = jax.lax if jax_side else funcad.lax
        self.top = jax if jax_side else funcad
        self.P = JP if jax_side else P
        self.NS = JNS if jax_side else NamedSharding
        self.mesh = None  # the mesh out_sharding= names (set per run)

    def s(self, *spec):
        return self.NS(self.mesh, self.P(*spec))


rng = np.random.default_rng(0)
SPD = (lambda m: m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4))(rng.normal(size=(8, 4, 4))).astype(np.float32)
SQ = SPD[0]
TRI = np.tril(SPD)
IMG, KER = rng.normal(size=(8, 3, 8, 8)).astype(np.float32), rng.normal(size=(4, 3, 3, 3)).astype(np.float32)
DN = ("NCHW", "OIHW", "NCHW")
SIG = rng.normal(size=(8, 8)).astype(np.float32)

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
}

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


def _abstract(ns, jax_side, operands):
    mesh = JAMESH if jax_side else AMESH
    ns.mesh = mesh
    return [ns.top.ShapeDtypeStruct(a.shape, a.dtype, sharding=None if spec is None else ns.NS(mesh, ns.P(*spec)))
            for a, spec in operands]


def _specs(tree) -> list:
    out = []
    for leaf in jax.tree_util.tree_leaves(tree):
        s = leaf.sharding
        spec = () if s is None else tuple(s.spec)
        out.append(tuple(p[0] if isinstance(p, tuple) and len(p) == 1 else p for p in spec)
                   + (None,) * (len(leaf.shape) - len(spec)))
    return out


def _eval_shape(jax_side, f, operands):
    ns = _NS(jax_side)
    args = _abstract(ns, jax_side, operands)
    return ns.top.eval_shape(lambda *a: f(ns, *a), *args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_result_types_match_jax(name):
    f, operands = CASES[name]
    want = _specs(_eval_shape(True, f, operands))
    got = _specs(_eval_shape(False, f, operands))
    assert got == want, name


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_ambiguous_results_raise_jaxs_error(name):
    f, operands, words = ERRORS[name]
    with pytest.raises(Exception, match=words) as jerr:
        _eval_shape(True, f, operands)
    assert type(jerr.value).__name__ == "ShardingTypeError"
    with pytest.raises(ShardingTypeError, match=words):
        _eval_shape(False, f, operands)


@pytest.mark.parametrize("name", sorted(UNEVEN))
def test_uneven_result_sizes_raise_jaxs_value_error(name):
    f, operands = UNEVEN[name]
    words = "implies that array axis 1 is partitioned 4 times, but does not evenly divide"
    with pytest.raises(ValueError, match=words):
        _eval_shape(True, f, operands)
    with pytest.raises(ValueError, match=words):
        _eval_shape(False, f, operands)


def test_custom_vjp_cotangents_keep_their_types():
    def make(lib):
        @lib.custom_vjp
        def f(a):
            return lib.numpy.sin(a)
        f.defvjp(lambda a: (lib.numpy.sin(a), a), lambda a, g: (g * lib.numpy.cos(a) * 3,))
        return lambda a: f(a).sum()
    (arg,) = _abstract(_NS(True), True, [(SIG, ("X", "Y"))])
    (farg,) = _abstract(_NS(False), False, [(SIG, ("X", "Y"))])
    want = jax.eval_shape(jax.grad(make(jax)), arg)
    got = funcad.eval_shape(funcad.grad(make(funcad)), farg)
    assert _specs(got) == _specs(want) == [("X", "Y")]


# ------------------------------------------ 8 simulated CPU devices (slow) ----

@pytest.mark.slow
def test_sharding_rules_on_eight_devices():
    if CHILD:
        pytest.skip("this is the child process")
    run_in_child(__file__)


child = pytest.mark.skipif(not CHILD, reason="runs in test_sharding_rules_on_eight_devices' subprocess")

if CHILD:
    MESH = funcad.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
    JMESH = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)


def _placed(ns, jax_side, operands):
    mesh = JMESH if jax_side else MESH
    ns.mesh = mesh
    return [ns.top.device_put(a, ns.NS(mesh, ns.P(*spec))) if spec is not None else a
            for a, spec in operands]


def _run(jax_side, f, operands, wrap=None):
    ns = _NS(jax_side)
    args = _placed(ns, jax_side, operands)
    g = lambda *a: f(ns, *a)  # noqa: E731
    return ns.top.jit(g if wrap is None else wrap(ns, g))(*args)


@child
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_types_and_layouts_match_jax(name):
    f, operands = CASES[name]
    want, got = _run(True, f, operands), _run(False, f, operands)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        if name.startswith(("qr", "svd", "eig", "schur", "hessenberg", "householder", "lu", "tridiagonal_b")):
            assert g.shape == w.shape  # bases and signs may differ between LAPACK calls
        else:
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-4)
        assert _specs([funcad.typeof(g)]) == _specs([jax.typeof(w)]), name
        assert tuple(g.sharding.spec) == tuple(w.sharding.spec), name


def _loss(ns, f):
    return lambda *a: sum(ns.np.sum(ns.np.real(o) ** 2) for o in jax.tree_util.tree_leaves(f(*a)))


GRADS = ["cholesky_batch", "tri_solve_batch", "fft_batch", "rfft_batch", "conv_batch",
         "conv_spatial", "conv_out_sharding"]


@child
@pytest.mark.parametrize("name", GRADS)
def test_cotangents_keep_their_primals_types(name):
    f, operands = CASES[name]
    grad = lambda ns, g: ns.top.grad(_loss(ns, g), argnums=tuple(range(len(operands))))  # noqa: E731
    want, got = _run(True, f, operands, grad), _run(False, f, operands, grad)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=2e-3)
        assert _specs([funcad.typeof(g)]) == _specs([jax.typeof(w)]), name


@child
def test_exported_calls_take_typed_operands():
    from funcad import export as fexport
    exp = fexport.export(funcad.jit(lambda a: a * 2 + 1))(funcad.ShapeDtypeStruct((8, 8), np.float32))
    jexp = jax.export.export(jax.jit(lambda a: a * 2 + 1))(jax.ShapeDtypeStruct((8, 8), np.float32))
    x = funcad.device_put(SIG, NamedSharding(MESH, P("X", "Y")))
    jx = jax.device_put(SIG, JNS(JMESH, JP("X", "Y")))
    got, want = funcad.jit(exp.call)(x), jax.jit(jexp.call)(jx)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))
    assert str(funcad.make_jaxpr(exp.call)(x)).count("f32[8,8] = call_exported") == 1
    assert "f32[8,8] = call_exported" in str(jax.make_jaxpr(jexp.call)(jx))
