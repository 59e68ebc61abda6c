"""funcad.lax.linalg's SvdAlgorithm, EighImplementation and EigImplementation, as JAX's
on the CPU: gesvd for SvdAlgorithm.QR bit-for-bit with JAX eagerly and under jit, its
derivative, and JAX's refusals (Jacobi/polar SVD, Jacobi/QDWH eigh, GPU eig kernels,
partial subset_by_index)."""
from __future__ import annotations

import os
import sys
import warnings

import jax
import numpy as np
import pytest
from jax import lax as jl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import funcad  # noqa: E402
import funcad.lax as fl  # noqa: E402

jax.config.update("jax_enable_x64", True)
A = np.random.default_rng(0).standard_normal((2, 5, 4))


@pytest.mark.parametrize("alg", [None, "DEFAULT", "QR", "DIVIDE_AND_CONQUER"])
@pytest.mark.parametrize("full", [True, False])
def test_svd_algorithms_are_jaxs_kernels(alg, full):
    fa = None if alg is None else fl.linalg.SvdAlgorithm[alg]
    ja = None if alg is None else jl.linalg.SvdAlgorithm[alg]
    want = jl.linalg.svd(A, full_matrices=full, algorithm=ja)
    for got in (fl.linalg.svd(A, full_matrices=full, algorithm=fa),
                funcad.jit(lambda x: fl.linalg.svd(x, full_matrices=full, algorithm=fa))(A)):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    s_only = fl.linalg.svd(A, compute_uv=False, algorithm=fa)
    np.testing.assert_array_equal(s_only, jl.linalg.svd(A, compute_uv=False, algorithm=ja))


def test_gesvd_differs_from_gesdd_and_differentiates_as_jax():
    b = np.random.default_rng(1).standard_normal((40, 30))
    u1 = np.asarray(fl.linalg.svd(b, algorithm=fl.linalg.SvdAlgorithm.QR)[0])
    u2 = np.asarray(fl.linalg.svd(b)[0])
    assert not np.array_equal(u1, u2)  # two kernels, not one under two names
    f = lambda L: lambda x: L.linalg.svd(x, full_matrices=False, algorithm=L.linalg.SvdAlgorithm.QR)[1].sum()  # noqa: E731
    np.testing.assert_allclose(funcad.grad(f(fl))(A[0]), jax.grad(f(jl))(A[0]), rtol=1e-12)
    src = funcad.to_python(funcad.make_jaxpr(lambda x: fl.linalg.svd(x, algorithm=fl.linalg.SvdAlgorithm.QR))(A[0]))
    assert "lapack_driver='gesvd'" in src


def _error(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001  (the class and text are compared)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", ["svd_jacobi", "svd_polar", "svd_subset_full", "svd_subset",
                                  "eigh_jacobi", "eigh_qdwh", "eig_magma", "eig_cusolver"])
def test_refusals_match_jax(case):
    sq = A[0, :4] @ A[0, :4].T

    def call(L):
        la = L.linalg
        return {"svd_jacobi": lambda: la.svd(A, algorithm=la.SvdAlgorithm.JACOBI),
                "svd_polar": lambda: la.svd(A, algorithm=la.SvdAlgorithm.POLAR),
                "svd_subset_full": lambda: la.svd(A, subset_by_index=(0, 2)),
                "svd_subset": lambda: la.svd(A, full_matrices=False, subset_by_index=(0, 2)),
                "eigh_jacobi": lambda: la.eigh(sq, implementation=la.EighImplementation.JACOBI),
                "eigh_qdwh": lambda: la.eigh(sq, implementation=la.EighImplementation.QDWH),
                "eig_magma": lambda: la.eig(sq, implementation=la.EigImplementation.MAGMA),
                "eig_cusolver": lambda: la.eig(sq, implementation=la.EigImplementation.CUSOLVER)}[case]
    ours, theirs = _error(call(fl)), _error(call(jl))
    assert ours is not None and ours == theirs


def test_accepted_choices_and_use_magma():
    sq = A[0, :4] @ A[0, :4].T
    for impl in (None, fl.linalg.EighImplementation.QR):
        v, w = fl.linalg.eigh(sq, implementation=impl)
        np.testing.assert_allclose(w, jl.linalg.eigh(sq)[1], rtol=1e-12)
    w = fl.linalg.eig(sq, implementation=fl.linalg.EigImplementation.LAPACK)[0]
    np.testing.assert_array_equal(w, jl.linalg.eig(sq)[0])
    with pytest.warns(DeprecationWarning, match="use_magma is deprecated"):
        fl.linalg.eig(sq, use_magma=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fl.linalg.svd(A, full_matrices=False, subset_by_index=(0, 4))  # all of them: fine
    np.testing.assert_array_equal(funcad.scipy.linalg.svd(A[0], lapack_driver="gesvd")[1],
                                  jax.scipy.linalg.svd(A[0], lapack_driver="gesvd")[1])  # unused, as JAX
