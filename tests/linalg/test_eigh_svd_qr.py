"""Eigen, singular value and QR decompositions: the op
rows against JAX at orders 1 and 2, property checks on random well-conditioned
inputs, derivative conventions (degenerate eigenvalues, full-matrices SVD),
errors, stacks under vmap and jit, and the LAPACK lowering against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import funcad
import funcad.lax.linalg as lla
import funcad.numpy as fnp
from funcad.core.errors import FuncadTypeError, FuncadValueError, MissingRuleError
from funcad.test_util import check_grads
from tests.op_rows.linalg_eigh_svd_qr import SPECTRAL, SYMMETRIC
from tests.op_table import OPS

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

L = fnp.linalg
ROWS = [s for s in OPS if s.name.startswith("linalg_") and s.diff and s.jax_fun is not None
        and s.name in {"linalg_eigh", "linalg_eigvalsh", "linalg_lax_eigh_upper", "linalg_svd_tall",
                       "linalg_svd_wide", "linalg_svd_square_full", "linalg_svdvals", "linalg_svd_hermitian",
                       "linalg_qr_reduced_4x3", "linalg_qr_reduced_3x3", "linalg_qr_reduced_3x4",
                       "linalg_qr_complete_4x3", "linalg_qr_r", "linalg_pinv_tall", "linalg_pinv_wide",
                       "linalg_lstsq", "linalg_norm_nuc", "linalg_norm_2", "linalg_norm_-2",
                       "linalg_matrix_norm_nuc_stack", "linalg_cond"}]


def test_rows_are_found():
    assert len(ROWS) == 21


@pytest.mark.parametrize("spec", ROWS, ids=lambda s: s.name)
def test_rows_match_jax_first_order(spec):
    """grad of a weighted sum of the outputs and the jvp, against JAX's."""
    from tests.transforms.test_ad import _leaves, _row
    xs, f, jf, out = _row(spec)
    rng = _rng(1)
    ws = [rng.standard_normal(np.shape(o)) for o in _leaves(out)]
    ts = [rng.standard_normal(np.shape(x)) for x in xs]
    an = tuple(range(len(xs)))
    g = funcad.grad(lambda *a: sum(fnp.sum(o * w) for o, w in zip(_leaves(f(*a)), ws)), an)(*xs)
    jg = _oracle(jax.jit(jax.grad(lambda *a: sum(jnp.sum(o * w) for o, w in zip(_leaves(jf(*a)), ws)), an)), *xs)
    for a, b in zip(g, jg):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    for a, b in zip(_leaves(funcad.jvp(f, xs, ts)[1]),
                    _leaves(jax.jit(lambda xs, ts: jax.jvp(jf, xs, ts)[1])(tuple(xs), tuple(ts)))):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("spec", ROWS, ids=lambda s: s.name)
def test_rows_match_jax_to_second_order(spec):
    from tests.transforms.test_ad import _compare_with_jax
    _compare_with_jax(spec)


def _oracle(fn, *args):
    """JAX's answer; older JAX releases (the oldest supported, 0.6) lack some of
    these derivatives (wide and full QR, square full SVD, generalized eigh)."""
    try:
        return fn(*args)
    except NotImplementedError as e:
        pytest.skip(f"jax {jax.__version__} has no oracle here: {e}")


def _rng(seed=0):
    return np.random.default_rng(seed)


# ------------------------------------------------------------- properties ----

_SHAPES = st.tuples(st.integers(0, 2), st.integers(1, 5), st.integers(1, 5))


def _matrix(batch, m, n, seed):
    rng = _rng(seed)
    return SPECTRAL(m, n)(rng, np.float64)[0] if batch == 0 else np.stack(
        [SPECTRAL(m, n)(rng, np.float64)[0] for _ in range(batch)])


@settings(max_examples=25, deadline=None)
@given(_SHAPES, st.integers(0, 2 ** 16), st.sampled_from(["reduced", "complete"]))
def test_qr_reconstructs_with_orthonormal_q(shape, seed, mode):
    a = _matrix(*shape, seed)
    q, r = L.qr(a, mode)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), atol=1e-12)
    np.testing.assert_array_equal(np.tril(r, -1), 0)


@settings(max_examples=25, deadline=None)
@given(_SHAPES, st.integers(0, 2 ** 16), st.booleans())
def test_svd_reconstructs(shape, seed, full):
    a = _matrix(*shape, seed)
    u, s, vh = L.svd(a, full_matrices=full)
    k = s.shape[-1]
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-12)
    assert np.all(np.diff(s, axis=-1) <= 0)
    np.testing.assert_allclose(L.svd(a, compute_uv=False), s, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2 ** 16))
def test_eigh_reconstructs_and_is_orthonormal(n, seed):
    a = SYMMETRIC(n)(_rng(seed), np.float64)[0]
    w, v = L.eigh(a)
    np.testing.assert_allclose((v * w) @ v.T, a, atol=1e-12)
    np.testing.assert_allclose(v.T @ v, np.eye(n), atol=1e-12)
    assert np.all(np.diff(w) > 0)


def test_pinv_lstsq_and_rank_properties():
    a = SPECTRAL(5, 3)(_rng(), np.float64)[0]
    p = L.pinv(a)
    np.testing.assert_allclose(a @ p @ a, a, atol=1e-12)
    np.testing.assert_allclose(p @ a, np.eye(3), atol=1e-12)
    b = _rng(1).standard_normal(5)
    x, resid, rank, s = L.lstsq(a, b)
    np.testing.assert_allclose(x, np.linalg.lstsq(a, b)[0], atol=1e-12)
    np.testing.assert_allclose(resid, np.linalg.lstsq(a, b)[1], atol=1e-12)
    assert int(rank) == 3 and s.shape == (3,)
    assert int(L.matrix_rank(np.outer([1.0, 2.0, 3.0], [1.0, 1.0]))) == 1
    assert int(L.matrix_rank(np.zeros(3))) == 0 and int(L.matrix_rank(np.ones(3))) == 1
    np.testing.assert_array_equal(L.matrix_rank(np.stack([np.eye(3), np.diag([1.0, 1.0, 0.0])])), [3, 2])


def test_lstsq_numpy_resid_and_rcond():
    a = np.array([[1.0, 0.0], [0.0, 1e-9], [0.0, 0.0]])
    b = np.array([1.0, 1.0, 1.0])
    x, resid, rank, _ = L.lstsq(a, b, rcond=1e-6, numpy_resid=True)
    assert int(rank) == 1 and resid.shape == (0,)
    np.testing.assert_allclose(x, [1.0, 0.0])
    jx = jnp.linalg.lstsq(a, b, rcond=1e-6)
    np.testing.assert_allclose(L.lstsq(a, b, rcond=1e-6)[1], jx[1])


def test_hermitian_svd_matches_jax_and_reconstructs():
    a = SYMMETRIC(4)(_rng(3), np.float64)[0]
    u, s, vh = L.svd(a, hermitian=True)
    ju, js, jvh = jnp.linalg.svd(a, hermitian=True)
    np.testing.assert_allclose(s, js, atol=1e-12)
    np.testing.assert_allclose(u, ju, atol=1e-12)
    np.testing.assert_allclose(vh, jvh, atol=1e-12)
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-12)
    np.testing.assert_allclose(L.svd(a, compute_uv=False, hermitian=True), js, atol=1e-12)


def test_norms_match_numpy_for_every_ord_axis_and_keepdims():
    x = _rng().standard_normal((2, 3, 4))
    for ord_ in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        for axis in ((0, 1), (2, 0), (-1, -2)):
            for keep in (False, True):
                np.testing.assert_allclose(L.norm(x, ord_, axis, keep), np.linalg.norm(x, ord_, axis, keep),
                                           rtol=1e-12, err_msg=f"ord={ord_} axis={axis}")
    for ord_ in (None, 0, 1, 2, 3, -1.5, np.inf, -np.inf):
        np.testing.assert_allclose(L.norm(x, ord_, 1), np.linalg.norm(x, ord_, 1), rtol=1e-12)
    np.testing.assert_allclose(L.norm(x), np.linalg.norm(x))
    np.testing.assert_allclose(L.vector_norm(x, axis=(0, 2), ord=1), np.linalg.vector_norm(x, axis=(0, 2), ord=1))
    np.testing.assert_allclose(L.matrix_norm(x, ord=2, keepdims=True), np.linalg.matrix_norm(x, ord=2, keepdims=True))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_cond_for_every_p_and_singular_input():
    from tests.op_rows.linalg_eigh_svd_qr import SPECTRAL as S
    a = S(3, 3)(_rng(), np.float64)[0]
    for p in (None, 2, -2):
        np.testing.assert_allclose(L.cond(a, p), np.linalg.cond(a, p), rtol=1e-12)
    if hasattr(L, "inv"):
        for p in (1, -1, np.inf, -np.inf, "fro", "nuc"):
            np.testing.assert_allclose(L.cond(a, p), np.linalg.cond(a, p), rtol=1e-10)
    assert float(L.cond(np.array([[1.0, 0.0], [0.0, 0.0]]))) == np.inf


# ---------------------------------------------------- derivative conventions ----

@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_eigh_degenerate_eigenvalues_follow_jax():
    """At a double eigenvalue eigenvalue derivatives are finite, while anything
    that goes through the eigenvectors is inf/NaN, as in JAX."""
    a = np.diag([1.0, 1.0, 3.0])
    g = funcad.grad(lambda a: fnp.sum(L.eigvalsh(a) ** 2))(a)
    np.testing.assert_allclose(g, 2 * a)
    proj = lambda a: (lambda w, v: fnp.sum((v[:, 2:] @ v[:, 2:].T) * np.arange(9.0).reshape(3, 3)))(*L.eigh(a))  # noqa: E731
    jproj = lambda a: (lambda w, v: jnp.sum((v[:, 2:] @ v[:, 2:].T) * np.arange(9.0).reshape(3, 3)))(*jnp.linalg.eigh(a))  # noqa: E731
    assert np.all(np.isnan(funcad.grad(proj)(a))) and np.all(np.isnan(jax.grad(jproj)(a)))
    _, dv = funcad.jvp(lambda a: L.eigh(a)[1], (a,), (np.ones((3, 3)),))
    assert not np.all(np.isfinite(dv))
    _, jdv = jax.jvp(lambda a: jnp.linalg.eigh(a)[1], (a,), (np.ones((3, 3)),))
    assert not np.all(np.isfinite(jdv))


def test_eigh_without_symmetrizing_differentiates_the_triangle_it_reads():
    a = SYMMETRIC(3)(_rng(), np.float64)[0]
    for lower in (True, False):
        f = lambda a: fnp.sum(lla.eigh(a, lower=lower, symmetrize_input=False)[1] ** 3)  # noqa: E731
        g = funcad.grad(f)(a)
        ignored = np.triu(g, 1) if lower else np.tril(g, -1)
        np.testing.assert_array_equal(ignored, 0)
        check_grads(f, (a,), order=2)


def test_svd_full_matrices_derivative_error_and_square_case():
    a = SPECTRAL(4, 3)(_rng(), np.float64)[0]
    with pytest.raises(MissingRuleError, match="full_matrices=False"):
        funcad.grad(lambda a: fnp.sum(L.svd(a)[0]))(a)
    # Singular values alone are fine with full_matrices, and square matrices too (as JAX 0.12).
    g = funcad.grad(lambda a: fnp.sum(L.svd(a, compute_uv=False)))(a)
    np.testing.assert_allclose(g, jax.grad(lambda a: jnp.sum(jnp.linalg.svd(a, compute_uv=False)))(a))
    sq = SPECTRAL(3, 3)(_rng(1), np.float64)[0]
    wt = np.arange(9.0).reshape(3, 3)
    f = lambda a: (lambda u, s, vh: fnp.sum(u * u[:1] * wt + vh * vh[:, :1] * wt.T))(*L.svd(a))  # noqa: E731
    jf = lambda a: (lambda u, s, vh: jnp.sum(u * u[:1] * wt + vh * vh[:, :1] * wt.T))(*jnp.linalg.svd(a))  # noqa: E731
    g = funcad.grad(f)(sq)
    assert np.abs(g).max() > 0.1
    np.testing.assert_allclose(g, _oracle(jax.grad(jf), sq), rtol=1e-9, atol=1e-12)


def test_raw_qr_and_householder_have_no_derivative():
    a = SPECTRAL(4, 3)(_rng(), np.float64)[0]
    with pytest.raises(MissingRuleError, match="geqrf has no derivative"):
        funcad.grad(lambda a: fnp.sum(L.qr(a, "raw")[1]))(a)
    h, taus = lla.geqrf(a)
    np.testing.assert_allclose(np.abs(np.triu(h)[:3]), np.abs(np.linalg.qr(a, "r")), atol=1e-12)
    q = lla.householder_product(h, taus)
    np.testing.assert_allclose(q, np.linalg.qr(a)[0], atol=1e-12)


def test_pinv_derivative_is_golub_pereyra_and_matches_jax():
    a = SPECTRAL(4, 3)(_rng(), np.float64)[0]
    w = _rng(2).standard_normal((3, 4))
    g = funcad.grad(lambda a: fnp.sum(L.pinv(a) * w))(a)
    np.testing.assert_allclose(g, jax.grad(lambda a: jnp.sum(jnp.linalg.pinv(a) * w))(a), rtol=1e-9)
    sym = SYMMETRIC(3)(_rng(), np.float64)[0]
    w3 = _rng(4).standard_normal((3, 3))
    g = funcad.grad(lambda a: fnp.sum(L.pinv(a, hermitian=True) * w3))(sym)
    np.testing.assert_allclose(g, jax.grad(lambda a: jnp.sum(jnp.linalg.pinv(a, hermitian=True) * w3))(sym),
                               rtol=1e-9)


# -------------------------------------------------------- stacks, vmap, jit ----

def test_stacks_vmap_and_jit_agree():
    rng = _rng(5)
    stack = np.stack([SPECTRAL(4, 3)(rng, np.float64)[0] for _ in range(3)])
    syms = np.stack([SYMMETRIC(3)(rng, np.float64)[0] for _ in range(3)])

    def f(a, s):
        u, sv, vh = L.svd(a, full_matrices=False)
        q, r = L.qr(a)
        w, v = L.eigh(s)
        return sv, u @ vh, q, r, w, v * v[..., :1, :], L.pinv(a), L.norm(a, "nuc", axis=(-2, -1))

    eager = f(stack, syms)
    for got in (funcad.vmap(f)(stack, syms), funcad.jit(f)(stack, syms), funcad.jit(funcad.vmap(f))(stack, syms)):
        for g, e in zip(got, eager):
            np.testing.assert_allclose(np.asarray(g), e, atol=1e-12)
    loop = [f(stack[i], syms[i]) for i in range(3)]
    for k, e in enumerate(eager):
        np.testing.assert_allclose(e, np.stack([lp[k] for lp in loop]), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lapack_lowering_matches_numpy_exactly_enough(dtype):
    rng = _rng(6)
    a = rng.standard_normal((2, 5, 3)).astype(dtype)
    s = rng.standard_normal((2, 4, 4)).astype(dtype)
    s = s + np.swapaxes(s, -1, -2)
    tol = 1e-5 if dtype == np.float32 else 1e-12

    def f(a, s):
        return (lla.svd(a, full_matrices=True), lla.svd(a, compute_uv=False), lla.qr(a), lla.qr(a, full_matrices=False),
                lla.qr(np.swapaxes(a, -1, -2)), lla.eigh(s), lla.eigh(s, lower=False, symmetrize_input=False),
                lla.geqrf(a))
    got, want = funcad.jit(f)(a, s), f(a, s)
    for g, w in zip(funcad.tree_util.tree_leaves(got), funcad.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == dtype
        np.testing.assert_allclose(np.asarray(g), w, rtol=tol, atol=tol)


def test_empty_matrices():
    for shape in [(0, 3), (3, 0), (2, 0, 0)]:
        x = np.zeros(shape)
        for fn in (lambda x: lla.svd(x, full_matrices=False), lambda x: lla.svd(x, compute_uv=False),
                   lambda x: lla.qr(x), lambda x: lla.qr(x, full_matrices=False)):
            got, want = funcad.jit(fn)(x), fn(x)
            for g, w in zip(funcad.tree_util.tree_leaves(got), funcad.tree_util.tree_leaves(want)):
                assert np.shape(g) == np.shape(w)
                np.testing.assert_allclose(np.asarray(g), w)
    np.testing.assert_array_equal(L.pinv(np.zeros((0, 3))).shape, (3, 0))


def test_failed_decomposition_is_nan_under_jit():
    x = np.full((3, 3), np.nan)
    w = funcad.jit(lambda x: lla.eigh(x)[1])(x)
    assert np.all(np.isnan(np.asarray(w)))


# ----------------------------------------------------------------- errors ----

def test_errors_name_the_problem():
    with pytest.raises(FuncadValueError, match=r"square matrices \[..., n, n\]"):
        L.eigh(np.ones((2, 3)))
    with pytest.raises(FuncadValueError, match="at least 2 dimensions"):
        L.svd(np.ones(3))
    with pytest.raises(FuncadValueError, match="Unsupported QR decomposition mode 'economic'"):
        L.qr(np.eye(2), "economic")
    with pytest.raises(FuncadValueError, match="UPLO"):
        L.eigh(np.eye(2), UPLO="X")
    with pytest.raises(FuncadTypeError, match="float32, float64, complex64 or complex128"):
        lla.svd(np.eye(2, dtype=np.int32))
    with pytest.raises(FuncadTypeError, match="float32, float64, complex64 or complex128"):
        lla.qr(np.eye(2, dtype=np.float16))
    with pytest.raises(FuncadValueError, match="only one of rtol and rcond"):
        L.pinv(np.eye(2), rtol=1e-3, rcond=1e-3)
    with pytest.raises(FuncadValueError, match="only one of tol or rtol"):
        L.matrix_rank(np.eye(2), rtol=1e-3, tol=1e-3)
    with pytest.raises(FuncadValueError, match="Invalid order 'inf' for vector norm. Use numpy.inf"):
        L.vector_norm(np.ones(2), ord="inf")
    with pytest.raises(FuncadValueError, match="Invalid order 3 for matrix norm"):
        L.norm(np.eye(2), 3)
    with pytest.raises(FuncadValueError, match="Improper number of axes"):
        L.norm(np.ones((2, 2, 2)), 2)
    with pytest.raises(FuncadValueError, match="must be two-dimensional"):
        L.lstsq(np.ones((2, 2, 2)), np.ones((2,)))
    with pytest.raises(FuncadValueError, match="subset_by_index"):
        lla.eigh(np.eye(3), subset_by_index=(2, 1))


def test_eigh_subset_by_index_and_integer_promotion():
    a = SYMMETRIC(4)(_rng(), np.float64)[0]
    v, w = lla.eigh(a, subset_by_index=(1, 3))
    fw, fv = L.eigh(a)
    np.testing.assert_allclose(w, fw[1:3])
    np.testing.assert_allclose(v, fv[:, 1:3])
    w_int = L.eigvalsh(np.array([[2, 1], [1, 2]]))
    assert w_int.dtype == np.float64 and w_int.tolist() == [1.0, 3.0]
    q, r = L.qr(np.array([[3.0, 1.0], [4.0, 2.0]], np.float32))
    assert q.dtype == np.float32 and r.dtype == np.float32


# ------------------------------------------------------------ scipy.linalg ----

@pytest.mark.parametrize("type_", [1, 2, 3])
def test_scipy_generalized_eigh_matches_scipy_and_jax(type_):
    import jax.scipy.linalg as jsl
    import scipy.linalg as sl

    import funcad.scipy.linalg as fsl
    rng = _rng(7)
    a = SYMMETRIC(4)(rng, np.float64)[0]
    b = rng.standard_normal((4, 4))
    b = b @ b.T + 4 * np.eye(4)
    w, v = fsl.eigh(a, b, type=type_)
    sw, sv = sl.eigh(a, b, type=type_)
    np.testing.assert_allclose(w, sw, rtol=1e-10)
    np.testing.assert_allclose(np.abs(v), np.abs(sv), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(v, _oracle(lambda: jsl.eigh(a, b, type=type_))[1], rtol=1e-8, atol=1e-10)
    f = lambda a, b: fnp.sum(fsl.eigh(a, b, type=type_, eigvals_only=True) ** 2)  # noqa: E731
    jf = lambda a, b: jnp.sum(jsl.eigh(a, b, type=type_, eigvals_only=True) ** 2)  # noqa: E731
    for g, jg in zip(funcad.grad(f, (0, 1))(a, b), _oracle(jax.grad(jf, (0, 1)), a, b)):
        np.testing.assert_allclose(g, jg, rtol=1e-8, atol=1e-10)


def test_scipy_qr_modes_and_svd():
    import scipy.linalg as sl

    import funcad.scipy.linalg as fsl
    x = SPECTRAL(5, 3)(_rng(8), np.float64)[0]
    for mode in ("full", "economic", "r"):
        got, want = fsl.qr(x, mode=mode), sl.qr(x, mode=mode)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, atol=1e-12)
    (h, tau), r = fsl.qr(x, mode="raw")
    (sh, stau), sr = sl.qr(x, mode="raw")
    for g, w in ((h, sh), (tau, stau), (r, sr)):
        np.testing.assert_allclose(g, w, atol=1e-12)
    for g, w in zip(fsl.svd(x, full_matrices=False), sl.svd(x, full_matrices=False)):
        np.testing.assert_allclose(g, w, atol=1e-12)
    np.testing.assert_allclose(fsl.eigh(x.T @ x, eigvals_only=True), sl.eigh(x.T @ x, eigvals_only=True))
    for g, w in zip(fsl.qr(x, pivoting=True), sl.qr(x, pivoting=True)):  # (tests/linalg/test_linalg_schur.py)
        np.testing.assert_allclose(g, w, atol=1e-12)
    # lapack_driver is unused, as in JAX: the same (gesdd) numbers
    np.testing.assert_array_equal(fsl.svd(x, lapack_driver="gesvd")[1], fsl.svd(x)[1])
    with pytest.raises(FuncadValueError, match="type must be 1, 2, or 3"):
        fsl.eigh(np.eye(2), np.eye(2), type=4)
