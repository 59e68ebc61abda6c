"""The eager triangular solve runs in NumPy's own OpenBLAS (one thread pool for eager code)
and falls back to SciPy's trsm where NumPy's library is not recognised."""
import itertools

import numpy as np
import pytest

from funcad.primitives import _numpy_blas, triangular

CASES = list(itertools.product([np.float32, np.float64, np.complex64, np.complex128], *[[False, True]] * 5))


def _reference(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(len(t), dtype=t.dtype)
    t = t.conj() if conjugate_a else t
    t = t.T if transpose_a else t
    return np.linalg.solve(t, b) if left_side else np.linalg.solve(t.T, b.T).T


@pytest.mark.parametrize("dtype,left_side,lower,transpose_a,conjugate_a,unit_diagonal", CASES)
def test_every_mode_solves(dtype, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 5)) + 4 * np.eye(5)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((5, 5))
    a, b = a.astype(dtype), rng.standard_normal((5, 3) if left_side else (3, 5)).astype(dtype)
    flags = (left_side, lower, transpose_a, conjugate_a, unit_diagonal)
    out = triangular._solve_one(a, b, *flags)
    tol = 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(out, _reference(a, b, *flags), rtol=tol, atol=tol)
    assert out.dtype == dtype


def test_numpy_openblas_is_found_where_numpy_bundles_one():
    if np.__config__.CONFIG["Build Dependencies"]["blas"].get("name") != "scipy-openblas":
        pytest.skip("this NumPy is not built with its bundled OpenBLAS")
    a, b = np.eye(3) * 2.0, np.ones((3, 2))
    np.testing.assert_array_equal(_numpy_blas.trsm(a, b, True, True, False, False, False), b / 2)


def test_layouts_and_empty_operands():
    rng = np.random.default_rng(1)
    a = np.asfortranarray(np.tril(rng.standard_normal((4, 4))) + 3 * np.eye(4))
    b = rng.standard_normal((6, 4))[::2].T  # not contiguous
    out = triangular._solve_one(a, b, True, True, False, False, False)
    np.testing.assert_allclose(a @ out, b, rtol=1e-12, atol=1e-12)
    assert triangular._solve_one(np.eye(0), np.zeros((0, 3)), True, True, False, False, False).shape == (0, 3)


def test_scipy_trsm_is_the_fallback(monkeypatch):
    monkeypatch.setattr(_numpy_blas, "_trsm_function", lambda kind: None)
    a, b = np.array([[2.0, 0.0], [1.0, 4.0]]), np.array([[2.0], [9.0]])
    assert _numpy_blas.trsm(a, b, True, True, False, False, False) is None
    np.testing.assert_allclose(triangular._solve_one(a, b, True, True, False, False, False), [[1.0], [2.0]])


def test_a_zero_on_the_diagonal_gives_infs_as_xla():
    with np.errstate(divide="ignore", invalid="ignore"):
        out = triangular._solve_one(np.zeros((2, 2)), np.ones((2, 1)), True, True, False, False, False)
    assert not np.isfinite(out).any()
