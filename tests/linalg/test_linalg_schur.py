"""schur, rsf2csf, sqrtm, funm, polar, qdwh, complex expm, expm_frechet and
pivoted QR beyond the op-table rows: properties (reconstruction, shapes,
orderings), keyword variants, errors, the missing derivative of schur, batches,
edge sizes, jit against eager and JAX, to_python, the GPU lowering error."""
from __future__ import annotations

import jax
import jax.lax.linalg as jlla
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg as sla

import funcad
import funcad.lax.linalg as lla
import funcad.numpy as fnp
import funcad.scipy.linalg as fsl
from funcad.core.errors import FuncadTypeError, FuncadValueError, MissingRuleError

jax.config.update("jax_enable_x64", True)
ALL = (np.float32, np.float64, np.complex64, np.complex128)


def _mat(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _tol(dtype):
    return 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _jax(mod, name):
    """JAX's function as the oracle, or None where the installed jax predates it
    (jax 0.6 lacks several; SciPy stays the reference there)."""
    return getattr(mod, name, None)


# ------------------------------------------------------------------- schur ----

@pytest.mark.parametrize("dtype", ALL)
def test_schur_reconstructs_and_is_triangular_eager_and_jitted(dtype):
    a = _mat((2, 5, 5), dtype)
    for t, q in (lla.schur(a), [np.asarray(x) for x in funcad.jit(lla.schur)(a)]):
        assert t.dtype == q.dtype == np.dtype(dtype)
        np.testing.assert_allclose(q @ t @ _H(q), a, atol=50 * _tol(dtype))
        np.testing.assert_allclose(_H(q) @ q, np.broadcast_to(np.eye(5), a.shape), atol=50 * _tol(dtype))
        k = -1 if np.dtype(dtype).kind == "c" else -2  # 2x2 blocks for real input
        assert np.all(np.tril(t, k) == 0)
    t, q = lla.schur(a)
    tj, qj = funcad.jit(lla.schur)(a)
    np.testing.assert_array_equal(np.asarray(tj), t)  # one LAPACK routine eagerly and under jit
    np.testing.assert_array_equal(np.asarray(qj), q)


def test_schur_matches_jax_and_scipy():
    a = _mat((4, 4), np.float64, seed=3)
    t, q = lla.schur(a)
    tj, qj = jlla.schur(a)
    np.testing.assert_allclose(t, tj, atol=1e-13)
    np.testing.assert_allclose(q, qj, atol=1e-13)
    ts, qs = sla.schur(a)
    np.testing.assert_allclose(t, ts, atol=1e-13)
    np.testing.assert_allclose(q, qs, atol=1e-13)


def test_schur_returns_lists_as_jax():
    a = _mat((3, 3), np.float64)
    out = lla.schur(a)
    assert isinstance(out, list) and len(out) == 2
    only = lla.schur(a, compute_schur_vectors=False)
    assert isinstance(only, list) and len(only) == 1
    np.testing.assert_allclose(only[0], out[0], atol=1e-13)
    jitted = funcad.jit(lambda x: lla.schur(x, compute_schur_vectors=False))(a)
    np.testing.assert_allclose(np.asarray(jitted[0]), out[0], atol=1e-13)


def test_schur_has_no_derivative_as_jax():
    a = _mat((3, 3), np.float64)
    with pytest.raises(MissingRuleError, match="schur has no derivative"):
        funcad.grad(lambda x: fnp.sum(lla.schur(x)[0]))(a)
    with pytest.raises(MissingRuleError, match="schur"):
        funcad.jvp(fsl.sqrtm, (a,), (a,))


def test_schur_errors():
    with pytest.raises(FuncadValueError, match="sort_eig_vals"):
        lla.schur(np.eye(2), sort_eig_vals=True)
    with pytest.raises(FuncadTypeError, match="square"):
        lla.schur(np.ones((2, 3)))
    with pytest.raises(FuncadTypeError, match="float32, float64"):
        lla.schur(np.eye(2, dtype=np.int32))
    with pytest.raises(FuncadValueError, match="'real' or 'complex'"):
        fsl.schur(np.eye(2), output="cplx")
    with pytest.raises(FuncadValueError, match="square"):
        fsl.schur(np.ones(3))


def test_schur_select_callable_is_accepted_unused_without_sorting():
    a = _mat((3, 3), np.float64)
    t, _ = lla.schur(a, select_callable=lambda w: w.real > 0)
    np.testing.assert_array_equal(t, lla.schur(a)[0])


def test_scipy_schur_complex_output_of_real_input():
    a = np.array([[0.0, 2.0, 1.0], [-2.0, 0.0, 3.0], [0.0, 0.0, 1.0]])
    t, z = fsl.schur(a, output="complex")
    assert t.dtype == np.complex128
    np.testing.assert_allclose(np.tril(t, -1), 0, atol=0)
    w = np.diag(t)
    np.testing.assert_allclose(sorted(w.imag), [-2, 0, 2], atol=1e-12)
    np.testing.assert_allclose(sorted(w.real), [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(z @ t @ _H(z), a, atol=1e-12)
    t32, _ = fsl.schur(a.astype(np.float32), output="complex")
    assert t32.dtype == np.complex64


def test_schur_of_empty_and_one_by_one():
    for n in (0, 1):
        a = np.full((2, n, n), 3.0)
        for t, q in (lla.schur(a), funcad.jit(lla.schur)(a)):
            assert np.shape(t) == np.shape(q) == (2, n, n)
            np.testing.assert_allclose(np.asarray(t), a)
            np.testing.assert_allclose(np.asarray(q), np.ones_like(a))


def test_schur_failure_gives_nans():
    a = np.full((3, 3), np.nan)
    # LAPACK's behaviour on NaN input is NaNs either way: no exception, no garbage.
    t, q = lla.schur(a)
    assert np.isnan(t).all()
    tj, _ = funcad.jit(lla.schur)(a)
    assert np.isnan(np.asarray(tj)).all()


def test_schur_vmap_and_to_python():
    a = _mat((3, 4, 4), np.float64)
    got = funcad.vmap(lambda x: lla.schur(x)[0])(a)
    np.testing.assert_array_equal(got, np.stack([lla.schur(x)[0] for x in a]))
    src = funcad.to_python(funcad.make_jaxpr(lambda x: lla.schur(x))(a))
    ns = {}
    exec(src, ns)
    for got, want in zip(ns["f"](a), lla.schur(a)):
        np.testing.assert_allclose(got, want, atol=1e-13)


def test_schur_sparsity_is_blockwise():
    pattern = funcad.jacobian_sparsity(lambda x: lla.schur(x)[0])(np.zeros((2, 2, 2)))
    dense = np.asarray(pattern.todense())
    assert dense.shape == (8, 8)
    np.testing.assert_array_equal(dense, np.kron(np.eye(2), np.ones((4, 4))).astype(bool))


def test_schur_and_geqp3_lowering_on_gpu_says_what_to_do():
    from funcad.lowering.stablehlo import lower_jaxpr
    for f in (lla.schur, lambda x: lla.qr(x, pivoting=True)):
        closed = funcad.make_jaxpr(f)(np.eye(3))
        text = lower_jaxpr(closed, "f").text
        assert "lapack_dgees_ffi" in text or "lapack_dgeqp3_ffi" in text
        with pytest.raises(MissingRuleError, match="backend='cpu'"):
            lower_jaxpr(closed, "f", platform="gpu")


# ---------------------------------------------------------------- rsf2csf ----

def test_rsf2csf_triangularizes_and_broadcasts():
    a = _mat((2, 5, 5), np.float64, seed=7)
    t, z = fsl.schur(a)
    tc, zc = fsl.rsf2csf(t, z)
    assert tc.dtype == zc.dtype == np.complex128
    np.testing.assert_array_equal(np.tril(tc, -1), 0)
    np.testing.assert_allclose(zc @ tc @ _H(zc), a, atol=1e-12)
    for i in range(2):
        ts, zs = sla.rsf2csf(t[i], z[i])
        np.testing.assert_allclose(tc[i], ts, atol=1e-12)
        np.testing.assert_allclose(zc[i], zs, atol=1e-12)
    # a shared Z broadcasts against a stack of T
    tb, _ = fsl.rsf2csf(t, z[0])
    np.testing.assert_allclose(tb[0], tc[0], atol=1e-12)
    tj, zj = funcad.jit(fsl.rsf2csf)(t, z)
    np.testing.assert_allclose(np.asarray(tj), tc, atol=1e-12)
    np.testing.assert_allclose(np.asarray(zj), zc, atol=1e-12)


def test_rsf2csf_errors():
    with pytest.raises(FuncadValueError, match="'T' must be square"):
        fsl.rsf2csf(np.ones((2, 3)), np.eye(2))
    with pytest.raises(FuncadValueError, match="shapes must match"):
        fsl.rsf2csf(np.eye(2), np.eye(3))


# ------------------------------------------------------------ sqrtm, funm ----

@pytest.mark.parametrize("dtype", ALL)
def test_sqrtm_squares_back(dtype):
    rng = np.random.default_rng(1)
    v = rng.standard_normal((4, 4)) + 2 * np.eye(4)
    a = (v @ np.diag([1.0, 2.0, 3.0, 4.0]) @ np.linalg.inv(v)).astype(dtype)
    r = fsl.sqrtm(a)
    assert r.dtype == np.result_type(dtype, np.complex64)
    np.testing.assert_allclose(r @ r, a, atol=200 * _tol(dtype))
    np.testing.assert_allclose(np.asarray(funcad.jit(fsl.sqrtm)(a)), r, atol=50 * _tol(dtype))
    np.testing.assert_allclose(r, np.asarray(jsl.sqrtm(a)), atol=50 * _tol(dtype))


def test_sqrtm_of_negative_eigenvalues_and_batches():
    a = np.array([[-4.0, 0.0], [0.0, 9.0]])
    np.testing.assert_allclose(fsl.sqrtm(a), np.diag([2j, 3.0]), atol=1e-14)
    stack = np.stack([np.diag([1.0, 4.0]), np.diag([9.0, 16.0])])
    np.testing.assert_allclose(fsl.sqrtm(stack), np.stack([np.diag([1.0, 2.0]), np.diag([3.0, 4.0])]),
                               atol=1e-14)


def test_sqrtm_blocksize_is_a_speed_knob_only():
    a = _mat((5, 5), np.float64) + 4 * np.eye(5)
    want = fsl.sqrtm(a)
    np.testing.assert_array_equal(fsl.sqrtm(a, blocksize=64), want)
    np.testing.assert_allclose(want, sla.sqrtm(a), atol=1e-12)
    with pytest.raises(FuncadValueError, match="at least 1"):
        fsl.sqrtm(a, blocksize=0)


def test_sqrtm_of_a_singular_triangular_matrix_keeps_zeros():
    # T[i, j] == s where U[i, i] + U[j, j] == 0: JAX's rule sets 0, not 0/0.
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = fsl.sqrtm(np.zeros((3, 3)))
    np.testing.assert_array_equal(got, np.zeros((3, 3)))


def test_funm_matches_scipy_and_jax():
    a = np.array([[1.0, 2.0, 0.5], [0.0, 3.0, 1.0], [0.3, 0.0, 2.0]])
    got = fsl.funm(a, fnp.exp)
    np.testing.assert_allclose(got, sla.expm(a), rtol=1e-12)
    np.testing.assert_allclose(got, np.asarray(jsl.funm(a, jnp.exp)), rtol=1e-12)
    f, err = fsl.funm(a, fnp.cos, disp=False)
    fs, errs = sla.funm(a, np.cos, disp=False)
    np.testing.assert_allclose(f, fs, rtol=1e-12)
    np.testing.assert_allclose(err, errs, rtol=1e-6)
    fj = funcad.jit(lambda x: fsl.funm(x, fnp.cos))(a)
    np.testing.assert_allclose(np.asarray(fj), fs, rtol=1e-12)


def test_funm_errors():
    with pytest.raises(FuncadValueError, match=r"\(N, N\)"):
        fsl.funm(np.ones((2, 3, 3)), fnp.exp)


# ---------------------------------------------------------------- polar ----

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,side", [((4, 4), "right"), ((5, 3), "right"), ((3, 5), "left"),
                                        ((2, 4, 3), "right")])
def test_polar_properties(dtype, shape, side):
    a = _mat(shape, dtype, seed=2)
    for method in ("qdwh", "svd"):
        u, p = fsl.polar(a, side, method=method)
        back = u @ p if side == "right" else p @ u
        np.testing.assert_allclose(back, a, atol=100 * _tol(dtype))
        np.testing.assert_allclose(p, _H(p), atol=100 * _tol(dtype))
        assert np.linalg.eigvalsh(p).min() > -100 * _tol(dtype)
        for i in np.ndindex(shape[:-2]):  # (jax 0.6's polar takes one matrix)
            uj, pj = jsl.polar(a[i], side, method=method)
            np.testing.assert_allclose(u[i], np.asarray(uj), atol=100 * _tol(dtype))
            np.testing.assert_allclose(p[i], np.asarray(pj), atol=100 * _tol(dtype))


def test_polar_right_svd_of_wide_and_errors():
    a = _mat((3, 5), np.float64)
    u, p = fsl.polar(a, method="svd")
    np.testing.assert_allclose(u @ p, a, atol=1e-12)
    with pytest.raises(FuncadValueError, match="method='svd'"):
        fsl.polar(a)  # qdwh needs m >= n for side='right', as JAX
    with pytest.raises(FuncadValueError, match="'right' or 'left'"):
        fsl.polar(a, side="up")
    with pytest.raises(FuncadValueError, match="unknown polar decomposition method"):
        fsl.polar(a, method="newton")
    with pytest.raises(FuncadValueError, match="2-D"):
        fsl.polar(np.ones(3))


def test_polar_gradients_match_jax_svd_and_jit():
    a = _mat((4, 3), np.float64, seed=5) + np.eye(4, 3)

    def loss(fl, lib):
        return lambda x: lib.sum(fl(x)[0] * x) + lib.sum(fl(x)[1] ** 2)
    want = jax.grad(loss(lambda x: jsl.polar(x, method="svd"), jnp))(a)
    for fun in (funcad.grad(loss(fsl.polar, fnp)), funcad.jit(funcad.grad(loss(fsl.polar, fnp))),
                funcad.grad(loss(lambda x: fsl.polar(x, method="svd"), fnp))):
        np.testing.assert_allclose(np.asarray(fun(a)), np.asarray(want), rtol=1e-9, atol=1e-10)


def test_qdwh_outputs_and_options():
    a = _mat((5, 3), np.float64, seed=4)
    u, h, k, ok = lla.qdwh(a)
    uj, hj, kj, okj = jlla.qdwh(a)
    np.testing.assert_allclose(u, np.asarray(uj), atol=1e-13)
    np.testing.assert_allclose(h, np.asarray(hj), atol=1e-13)
    assert int(k) == int(kj) and bool(ok) and bool(okj)
    # too few iterations: not converged, as JAX
    _, _, k1, ok1 = lla.qdwh(a, max_iterations=1)
    _, _, kj1, okj1 = jlla.qdwh(a, max_iterations=1)
    assert (int(k1), bool(ok1)) == (int(kj1), bool(okj1)) == (1, False)
    # a padded matrix: only the leading block is decomposed
    padded = np.zeros((7, 4))
    padded[:5, :3] = a
    up, hp, _, _ = lla.qdwh(padded, dynamic_shape=(5, 3))
    ujp, hjp, _, _ = jlla.qdwh(padded, dynamic_shape=(5, 3))
    np.testing.assert_allclose(up, np.asarray(ujp), atol=1e-12)
    np.testing.assert_allclose(hp, np.asarray(hjp), atol=1e-12)
    np.testing.assert_allclose(up[:5, :3], u, atol=1e-12)
    uj2 = funcad.jit(lambda x: lla.qdwh(x)[0])(a)
    np.testing.assert_allclose(np.asarray(uj2), u, atol=1e-13)
    with pytest.raises(FuncadValueError, match="M >= N"):
        lla.qdwh(a.T)


# ------------------------------------------------------ expm, expm_frechet ----

@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0])
def test_complex_expm_matches_scipy_eager_and_jitted(dtype, scale):
    a = (scale * _mat((2, 4, 4), dtype, seed=9)).astype(dtype)
    want = np.stack([sla.expm(x.astype(np.complex128)) for x in a])
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    for got in (fsl.expm(a), np.asarray(funcad.jit(fsl.expm)(a))):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def test_complex_expm_derivatives_match_jax():
    a = 0.5 * _mat((3, 3), np.complex128, seed=11)
    e = _mat((3, 3), np.complex128, seed=12)
    got = funcad.jvp(fsl.expm, (a,), (e,))[1]
    np.testing.assert_allclose(got, np.asarray(jax.jvp(jsl.expm, (a,), (e,))[1]), rtol=1e-12)
    np.testing.assert_allclose(got, sla.expm_frechet(a, e, compute_expm=False), rtol=1e-11)
    g = funcad.grad(lambda x: fnp.sum(fnp.abs(fsl.expm(x)) ** 2))(a)
    gj = jax.grad(lambda x: jnp.sum(jnp.abs(jsl.expm(x)) ** 2))(a)
    np.testing.assert_allclose(g, np.asarray(gj), rtol=1e-11)
    h = funcad.grad(lambda x: fnp.real(fnp.trace(fsl.expm(x))), holomorphic=False)(a)
    np.testing.assert_allclose(h, np.asarray(jax.grad(lambda x: jnp.real(jnp.trace(jsl.expm(x))))(a)),
                               rtol=1e-11)


def test_expm_frechet_forms_and_errors():
    a, e = 0.3 * _mat((2, 3, 3), np.float64), _mat((2, 3, 3), np.float64, seed=1)
    ea, l = fsl.expm_frechet(a, e)
    np.testing.assert_allclose(ea, fsl.expm(a), rtol=1e-14)
    for i in range(2):
        np.testing.assert_allclose(l[i], sla.expm_frechet(a[i], e[i], compute_expm=False), rtol=1e-11)
    np.testing.assert_array_equal(fsl.expm_frechet(a, e, compute_expm=False, method="SPS"), l)
    lj = funcad.jit(lambda x, y: fsl.expm_frechet(x, y, compute_expm=False))(a, e)
    np.testing.assert_allclose(np.asarray(lj), l, rtol=1e-12)
    with pytest.raises(FuncadValueError, match="same shape"):
        fsl.expm_frechet(a, e[0])
    with pytest.raises(FuncadValueError, match="square"):
        fsl.expm_frechet(np.ones((2, 3)), np.ones((2, 3)))


# ---------------------------------------------------------------- pivoted qr ----

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(5, 5), (6, 3), (3, 6), (2, 4, 4)])
def test_qr_pivoting_properties_and_jax(dtype, shape):
    a = _mat(shape, dtype, seed=6)
    for full in (True, False):
        q, r, p = lla.qr(a, pivoting=True, full_matrices=full)
        assert p.dtype == np.int32 and p.shape == shape[:-2] + shape[-1:]
        ap = np.take_along_axis(a, np.broadcast_to(p[..., None, :], a.shape), -1)
        np.testing.assert_allclose(q @ r, ap, atol=50 * _tol(dtype))
        d = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
        assert np.all(np.diff(d, axis=-1) <= 50 * _tol(dtype))
        qj, rj, pj = jlla.qr(a, pivoting=True, full_matrices=full)
        np.testing.assert_array_equal(p, np.asarray(pj))
        np.testing.assert_allclose(q, np.asarray(qj), atol=50 * _tol(dtype))
        np.testing.assert_allclose(r, np.asarray(rj), atol=50 * _tol(dtype))
        jq, jr, jp = funcad.jit(lambda x: lla.qr(x, pivoting=True, full_matrices=full))(a)
        np.testing.assert_array_equal(np.asarray(jp), p)
        np.testing.assert_allclose(np.asarray(jq), q, atol=50 * _tol(dtype))


def test_scipy_qr_pivoting_modes_match_scipy():
    a = _mat((5, 3), np.float64, seed=8)
    for mode in ("full", "economic", "r", "raw"):
        got, want = fsl.qr(a, mode=mode, pivoting=True), sla.qr(a, mode=mode, pivoting=True)
        assert len(got) == len(want)
        flat = lambda t: [x for y in t for x in (y if isinstance(y, tuple) else (y,))]  # noqa: E731
        for g, w in zip(flat(got), flat(want)):
            np.testing.assert_allclose(np.asarray(g), w, atol=1e-13)


def test_qr_pivoting_of_empty_and_vmap_and_grad():
    q, r, p = lla.qr(np.zeros((3, 0)), pivoting=True)
    assert q.shape == (3, 3) and r.shape == (3, 0) and p.shape == (0,)
    jq, jr, jp = funcad.jit(lambda x: lla.qr(x, pivoting=True))(np.zeros((0, 2)))
    assert np.shape(jq) == (0, 0) and np.shape(jr) == (0, 2) and np.asarray(jp).tolist() == [0, 1]
    a = _mat((3, 4, 3), np.float64, seed=10)
    got = funcad.vmap(lambda x: lla.qr(x, pivoting=True)[2])(a)
    np.testing.assert_array_equal(got, np.stack([lla.qr(x, pivoting=True)[2] for x in a]))
    x = a[0] * np.array([1.0, 4.0, 16.0])
    g = funcad.grad(lambda x: fnp.sum(lla.qr(x, pivoting=True, full_matrices=False)[1] ** 3))(x)
    gj = jax.grad(lambda x: jnp.sum(jlla.qr(x, pivoting=True, full_matrices=False)[1] ** 3))(x)
    np.testing.assert_allclose(g, np.asarray(gj), rtol=1e-10)
    src = funcad.to_python(funcad.make_jaxpr(lambda x: lla.qr(x, pivoting=True))(x))
    ns = {}
    exec(src, ns)
    for got, want in zip(ns["f"](x), lla.qr(x, pivoting=True)):
        np.testing.assert_allclose(got, want, atol=1e-13)


# ------------------------------------------------------------- hessenberg ----

@pytest.mark.parametrize("dtype", ALL)
def test_hessenberg_reconstructs_and_matches_jax(dtype):
    a = _mat((2, 5, 5), dtype, seed=13)
    h, q = fsl.hessenberg(a, calc_q=True)
    np.testing.assert_array_equal(np.tril(h, -2), 0)
    np.testing.assert_allclose(q @ h @ _H(q), a, atol=50 * _tol(dtype))
    hj, qj = jsl.hessenberg(a, calc_q=True)
    np.testing.assert_allclose(h, np.asarray(hj), atol=50 * _tol(dtype))
    np.testing.assert_allclose(q, np.asarray(qj), atol=50 * _tol(dtype))
    for x, y in zip(lla.hessenberg(a), jlla.hessenberg(a)):
        np.testing.assert_allclose(x, np.asarray(y), atol=50 * _tol(dtype))
    hj2 = funcad.jit(fsl.hessenberg)(a)
    np.testing.assert_array_equal(np.asarray(hj2), h)


def test_hessenberg_edges_errors_and_no_derivative():
    h, q = fsl.hessenberg(np.zeros((0, 0)), calc_q=True)
    assert h.shape == q.shape == (0, 0)
    h1, q1 = fsl.hessenberg(np.array([[2.0]]), calc_q=True)
    assert h1.tolist() == [[2.0]] and q1.tolist() == [[1.0]]
    with pytest.raises(FuncadValueError, match="square"):
        fsl.hessenberg(np.ones((2, 3)))
    with pytest.raises(MissingRuleError, match="hessenberg has no derivative"):
        funcad.grad(lambda x: fnp.sum(fsl.hessenberg(x)))(np.eye(3))
    from funcad.lowering.stablehlo import lower_jaxpr
    closed = funcad.make_jaxpr(fsl.hessenberg)(np.eye(3))
    assert "lapack_dgehrd_ffi" in lower_jaxpr(closed, "f").text
    with pytest.raises(MissingRuleError, match="backend='cpu'"):
        lower_jaxpr(closed, "f", platform="gpu")
    src = funcad.to_python(funcad.make_jaxpr(lla.hessenberg)(np.eye(3) + 1))
    ns = {}
    exec(src, ns)
    for got, want in zip(ns["f"](np.eye(3) + 1), lla.hessenberg(np.eye(3) + 1)):
        np.testing.assert_allclose(got, want, atol=1e-13)


# --------------------------------------------------------- special matrices ----

@pytest.mark.parametrize("name,args", [
    ("toeplitz", (np.array([1.0, 2.0, 3.0]),)), ("toeplitz", (np.array([1 + 1j, 2.0]),)),
    ("toeplitz", (np.ones((2, 3)), np.arange(4.0))), ("toeplitz", (np.array(3.0),)),
    ("hankel", (np.arange(3.0),)), ("hankel", (np.ones((2, 3)), np.arange(4.0))),
    ("circulant", (np.arange(4),)), ("circulant", (np.ones((2, 3)),)),
    ("leslie", (np.array([0.1, 2.0, 1.0]), np.array([0.5, 0.8]))), ("companion", (np.array([2, 3, 4]),)),
    ("fiedler", (np.array([1, 4, 2]),)), ("fiedler_companion", (np.array([1.0, 2.0]),)),
    ("fiedler_companion", (np.arange(1.0, 8.0),)), ("fiedler_companion", (np.array([3.0]),)),
    ("convolution_matrix", (np.arange(1.0, 4.0), 5)), ("convolution_matrix", (np.arange(1.0, 4.0), 5, "same")),
    ("convolution_matrix", (np.arange(1.0, 6.0), 2, "valid")), ("convolution_matrix", (np.ones((2, 3)), 2, "same")),
    ("hilbert", (4,)), ("invhilbert", (6,)), ("pascal", (5,)), ("pascal", (4, "upper")), ("invpascal", (5,)),
    ("invpascal", (4, "lower")), ("helmert", (4,)), ("helmert", (4, True)), ("hadamard", (8,)),
    ("dft", (5,)), ("dft", (4, "sqrtn")), ("dft", (3, "n"))])
def test_special_matrices_match_jax(name, args):
    got = np.asarray(getattr(fsl, name)(*args))
    if all(np.ndim(x) <= 1 for x in args if isinstance(x, np.ndarray)):
        ref = getattr(sla, name)(*args)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    jfun = _jax(jsl, name)
    if jfun is not None:
        want = np.asarray(jfun(*args))
        assert got.shape == want.shape and got.dtype == want.dtype
        # (jax 0.6's pascal goes through lgamma: 1e-6 off)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    if not isinstance(args[0], int) and all(isinstance(x, np.ndarray) for x in args):
        np.testing.assert_allclose(np.asarray(funcad.jit(getattr(fsl, name))(*args)), got, rtol=1e-14)


def test_special_matrices_errors():
    for call, words in [(lambda: fsl.leslie(np.ones(1), np.ones(0)), "at least 2"),
                        (lambda: fsl.leslie(np.ones(3), np.ones(3)), "one less"),
                        (lambda: fsl.companion(np.ones(1)), "at least 2"),
                        (lambda: fsl.hankel(1.0), "scalar"),
                        (lambda: fsl.convolution_matrix(np.ones(3), 0), "positive"),
                        (lambda: fsl.convolution_matrix(np.ones(3), 2, "wide"), "mode"),
                        (lambda: fsl.pascal(3, "diag"), "kind"), (lambda: fsl.hadamard(6), "power of 2"),
                        (lambda: fsl.helmert(0), "positive"), (lambda: fsl.dft(3, "half"), "scale"),
                        (lambda: fsl.dft(3, dtype=np.float64), "complex")]:
        with pytest.raises(FuncadValueError, match=words):
            call()


# --------------------------------------------------------- solve_sylvester ----

@pytest.mark.parametrize("method", ["schur", "eigen"])
def test_solve_sylvester_solves_batches_and_jits(method):
    rng = np.random.default_rng(14)
    a = rng.standard_normal((2, 4, 4)) + 3 * np.eye(4)
    b = rng.standard_normal((3, 3)) + 2 * np.eye(3)
    c = rng.standard_normal((2, 4, 3))
    x = fsl.solve_sylvester(a, b, c, method=method)
    assert x.shape == (2, 4, 3) and x.dtype == np.float64
    np.testing.assert_allclose(a @ x + x @ b, c, atol=1e-12)
    for i in range(2):
        np.testing.assert_allclose(x[i], sla.solve_sylvester(a[i], b, c[i]), atol=1e-12)
        if _jax(jsl, "solve_sylvester") is not None:
            np.testing.assert_allclose(x[i], np.asarray(jsl.solve_sylvester(a[i], b, c[i], method=method)),
                                       atol=1e-12)
    xj = funcad.jit(lambda a, b, c: fsl.solve_sylvester(a, b, c, method=method))(a, b, c)
    np.testing.assert_allclose(np.asarray(xj), x, atol=1e-13)


def test_solve_sylvester_singular_and_errors():
    assert np.isnan(fsl.solve_sylvester(np.eye(2), -np.eye(2), np.eye(2))).all()
    with pytest.raises(FuncadValueError, match="Incompatible shapes"):
        fsl.solve_sylvester(np.eye(3), np.eye(2), np.ones((2, 2)))
    with pytest.raises(FuncadValueError, match="unrecognized method"):
        fsl.solve_sylvester(np.eye(2), np.eye(2), np.eye(2), method="bartels")


# -------------------------------------------------------- eigh_tridiagonal ----

def test_eigh_tridiagonal_values_vectors_and_selection():
    rng = np.random.default_rng(15)
    d, e = rng.standard_normal(6), rng.standard_normal(5)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    w, v = fsl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(t @ v, v * w, atol=1e-12)
    np.testing.assert_allclose(w, sla.eigh_tridiagonal(d, e, eigvals_only=True), atol=1e-12)
    np.testing.assert_allclose(w, np.asarray(jsl.eigh_tridiagonal(d, e, eigvals_only=True)), atol=1e-12)
    sub = fsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3))
    np.testing.assert_allclose(sub, w[1:4], atol=1e-14)
    w1, v1 = fsl.eigh_tridiagonal(np.array([2.0]), np.zeros(0))
    assert w1.tolist() == [2.0] and v1.tolist() == [[1.0]]
    ec = e + 1j * rng.standard_normal(5)
    tc = np.diag(d) + np.diag(ec, -1) + np.diag(ec.conj(), 1)
    wc, vc = fsl.eigh_tridiagonal(d.astype(complex), ec)
    np.testing.assert_allclose(tc @ vc, vc * wc, atol=1e-12)
    wj = funcad.jit(lambda d, e: fsl.eigh_tridiagonal(d, e, eigvals_only=True))(d, e)
    np.testing.assert_allclose(np.asarray(wj), w, atol=1e-14)


def test_eigh_tridiagonal_errors():
    d, e = np.ones(3), np.ones(2)
    for kw, words in [(dict(select="v", select_range=(0.0, 1.0)), "data-dependent"),
                      (dict(select="i"), "select_range must be specified"),
                      (dict(select="i", select_range=(2, 1)), "empty index range"),
                      (dict(select="x"), "'a', 'i', 'v'")]:
        with pytest.raises(FuncadValueError, match=words):
            fsl.eigh_tridiagonal(d, e, **kw)
    with pytest.raises(TypeError, match="same dtype"):
        fsl.eigh_tridiagonal(d, e.astype(np.float32))
    with pytest.raises(FuncadValueError, match="shape"):
        fsl.eigh_tridiagonal(d, np.ones(3))


# -------------------------------------------------------- tridiagonal_solve ----

def _tri(seed, dtype=np.float64, batch=()):
    rng = np.random.default_rng(seed)
    dl, d, du = (rng.standard_normal(batch + (5,)).astype(dtype) for _ in range(3))
    return dl, (d + 4).astype(dtype), du, rng.standard_normal(batch + (5, 2)).astype(dtype)


@pytest.mark.parametrize("dtype", ALL)
def test_tridiagonal_solve_matches_jax_dense_and_jit(dtype):
    dl, d, du, b = _tri(16, dtype, (3,))
    x = lla.tridiagonal_solve(dl, d, du, b)
    np.testing.assert_array_equal(x, np.asarray(jlla.tridiagonal_solve(dl, d, du, b)))
    np.testing.assert_array_equal(np.asarray(funcad.jit(lla.tridiagonal_solve)(dl, d, du, b)), x)
    for i in range(3):
        a = np.diag(d[i]) + np.diag(dl[i, 1:], -1) + np.diag(du[i, :-1], 1)
        np.testing.assert_allclose(a @ x[i], b[i], atol=50 * _tol(dtype))


def test_tridiagonal_solve_derivatives_match_jax():
    dl, d, du, b = _tri(17)

    def loss(lib, L):
        return lambda *args: lib.sum(L.tridiagonal_solve(*args) ** 3)
    want = jax.grad(loss(jnp, jlla), argnums=(0, 1, 2, 3))(dl, d, du, b)
    for fun in (funcad.grad(loss(fnp, lla), argnums=(0, 1, 2, 3)),
                funcad.jit(funcad.grad(loss(fnp, lla), argnums=(0, 1, 2, 3)))):
        for g, w in zip(fun(dl, d, du, b), want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-11, atol=1e-13)
    h = funcad.hessian(lambda d: loss(fnp, lla)(dl, d, du, b))(d)
    hj = jax.hessian(lambda d: loss(jnp, jlla)(dl, d, du, b))(d)
    np.testing.assert_allclose(h, np.asarray(hj), rtol=1e-10)
    # linear in b: its transpose solves with the transposed matrix
    ct = np.ones_like(b)
    got = funcad.linear_transpose(lambda b: lla.tridiagonal_solve(dl, d, du, b), b)(ct)[0]
    a = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    np.testing.assert_allclose(got, np.linalg.solve(a.T, ct), rtol=1e-12)


def test_tridiagonal_solve_vmap_errors_and_singular():
    dl, d, du, b = _tri(18)
    bs = np.stack([b, 2 * b])
    got = funcad.vmap(lla.tridiagonal_solve, in_axes=(None, None, None, 0))(dl, d, du, bs)
    np.testing.assert_allclose(got[1], 2 * lla.tridiagonal_solve(dl, d, du, b), rtol=1e-14)
    with pytest.raises(FuncadTypeError, match="trailing axis"):
        lla.tridiagonal_solve(dl, d, du, b[:, 0])
    with pytest.raises(FuncadTypeError, match="one float32"):
        lla.tridiagonal_solve(dl.astype(np.float32), d, du, b)
    assert np.isnan(lla.tridiagonal_solve(np.zeros(2), np.zeros(2), np.zeros(2), np.ones((2, 1)))).all()
    src = funcad.to_python(funcad.make_jaxpr(lla.tridiagonal_solve)(dl, d, du, b))
    ns = {}
    exec(src, ns)
    np.testing.assert_allclose(ns["f"](dl, d, du, b), lla.tridiagonal_solve(dl, d, du, b), rtol=1e-13)


def _singular_tri(seed, dtype, batch=3, m=6, k=2):
    """Systems T - lambda I with lambda an eigenvalue of T: singular up to rounding."""
    rng = np.random.default_rng(seed)
    cplx = np.dtype(dtype).kind == "c"
    mk = lambda *s: (rng.standard_normal(s) + (1j * rng.standard_normal(s) if cplx else 0)).astype(dtype)  # noqa: E731
    dl, d, b = mk(batch, m), mk(batch, m), mk(batch, m, k)
    du = np.concatenate([dl[:, 1:].conj(), np.zeros((batch, 1), dtype)], axis=1)  # Hermitian
    for i in range(batch):
        t = np.diag(d[i].real) + np.diag(dl[i, 1:], -1) + np.diag(du[i, :-1], 1)
        d[i] = d[i].real - np.linalg.eigvalsh(t)[i % m]
    return dl, d, du, b


_JAX_PERTURBS = hasattr(jlla, "tridiagonal_solve") and "perturb_singular" in \
    jlla.tridiagonal_solve.__code__.co_varnames


@pytest.mark.parametrize("dtype", ALL)
def test_tridiagonal_solve_perturb_singular(dtype):
    """perturb_singular: finite results for singular systems, JAX's numbers (bit for bit in
    the real dtypes, whose kernel this mirrors; within rounding for complex), eager == jit."""
    dl, d, du, b = _singular_tri(20, dtype)
    x = np.asarray(lla.tridiagonal_solve(dl, d, du, b, perturb_singular=True))
    assert np.isfinite(x).all()
    jitted = funcad.jit(lambda *a: lla.tridiagonal_solve(*a, perturb_singular=True))
    xj = np.asarray(jitted(dl, d, du, b))
    for i in range(3):  # inverse iteration: the solution lies along the null vector
        t = np.diag(d[i]) + np.diag(dl[i, 1:], -1) + np.diag(du[i, :-1], 1)
        for y in (x[i, :, 0], xj[i, :, 0]):
            y = y / np.linalg.norm(y)
            assert np.linalg.norm(t @ y) < 1e3 * _tol(dtype) * np.linalg.norm(t)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_array_equal(xj, x)
    # nonsingular systems: the same solution as without perturbation
    dl2, d2, du2, b2 = _tri(21, dtype, (3,))
    y = lla.tridiagonal_solve(dl2, d2, du2, b2, perturb_singular=True)
    np.testing.assert_allclose(y, lla.tridiagonal_solve(dl2, d2, du2, b2), rtol=100 * _tol(dtype))
    if not _JAX_PERTURBS:
        pytest.skip("the installed jax predates perturb_singular (JAX >= 0.7): no oracle")
    want = np.asarray(jlla.tridiagonal_solve(dl, d, du, b, perturb_singular=True))
    want2 = np.asarray(jlla.tridiagonal_solve(dl2, d2, du2, b2, perturb_singular=True))
    if np.dtype(dtype).kind == "f":
        np.testing.assert_array_equal(x, want)
        np.testing.assert_array_equal(y, want2)
    else:  # complex division rounds differently from the kernel's C++ complex type
        np.testing.assert_allclose(y, want2, rtol=100 * _tol(dtype))
        for i in range(3):
            u, w = x[i, :, 0], want[i, :, 0]
            assert abs(abs(np.vdot(u, w)) / (np.linalg.norm(u) * np.linalg.norm(w)) - 1) < 1e3 * _tol(dtype)


def test_tridiagonal_solve_perturb_edges_and_rules():
    # exactly singular 1x1 and 2x2, zero sub-diagonals, an empty right-hand side
    for args in [(np.zeros((1,)), np.zeros((1,)), np.zeros((1,)), np.ones((1, 2))),
                 (np.zeros(2), np.array([0.0, 1.0]), np.array([1.0, 0.0]), np.ones((2, 1))),
                 (np.array([0.0, 1.0, 1.0]), np.ones(3), np.array([1.0, 1.0, 0.0]), np.ones((3, 2)))]:
        x = lla.tridiagonal_solve(*args, perturb_singular=True)
        assert np.isfinite(x).all()
        np.testing.assert_array_equal(np.asarray(funcad.jit(
            lambda *a: lla.tridiagonal_solve(*a, perturb_singular=True))(*args)), x)
        if _JAX_PERTURBS:
            np.testing.assert_array_equal(x, np.asarray(jlla.tridiagonal_solve(*args, perturb_singular=True)))
    assert lla.tridiagonal_solve(np.ones(3), np.ones(3), np.ones(3), np.ones((3, 0)),
                                 perturb_singular=True).shape == (3, 0)
    # derivatives, vmap and to_python carry the flag
    dl, d, du, b = _tri(22)
    solve = lambda *a: fnp.sum(lla.tridiagonal_solve(*a, perturb_singular=True) ** 3)  # noqa: E731
    plain = lambda *a: fnp.sum(lla.tridiagonal_solve(*a) ** 3)  # noqa: E731
    for g, w in zip(funcad.grad(solve, argnums=(0, 1, 2, 3))(dl, d, du, b),
                    funcad.grad(plain, argnums=(0, 1, 2, 3))(dl, d, du, b)):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    jaxpr = funcad.make_jaxpr(funcad.grad(solve, argnums=1))(dl, d, du, b)
    assert str(jaxpr).count("perturb_singular=True") >= 2
    bs = np.stack([b, 2 * b])
    got = funcad.vmap(lambda b: lla.tridiagonal_solve(dl, d, du, b, perturb_singular=True))(bs)
    np.testing.assert_allclose(got[1], 2 * lla.tridiagonal_solve(dl, d, du, b), rtol=1e-13)
    sdl, sd, sdu, sb = _singular_tri(23, np.float64, batch=2)
    ns = {}
    exec(funcad.to_python(funcad.make_jaxpr(
        lambda *a: lla.tridiagonal_solve(*a, perturb_singular=True))(sdl, sd, sdu, sb)), ns)
    np.testing.assert_array_equal(ns["f"](sdl, sd, sdu, sb),
                                  lla.tridiagonal_solve(sdl, sd, sdu, sb, perturb_singular=True))


# ------------------------- symmetric_product, cholesky_update, ormqr, qr_multiply ----

def test_symmetric_product_and_cholesky_update_match_jax():
    rng = np.random.default_rng(19)
    a, c = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 3))
    for kw in (dict(), dict(alpha=2.0, beta=0.5), dict(alpha=-1.0, beta=2.0, symmetrize_output=True)):
        np.testing.assert_allclose(lla.symmetric_product(a, c, **kw),
                                   np.asarray(jlla.symmetric_product(a, c, **kw)), rtol=1e-13)
    x = rng.standard_normal((4, 9))
    r, w = np.linalg.cholesky(x @ x.T).T, rng.standard_normal(4)
    got = lla.cholesky_update(r, w)
    np.testing.assert_allclose(got, np.asarray(jlla.cholesky_update(r, w)), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got.T @ got, r.T @ r + np.outer(w, w), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(funcad.jit(lla.cholesky_update)(r, w)), got, rtol=1e-13, atol=1e-14)
    np.testing.assert_array_equal(lla.cholesky_update(r, np.zeros(4)), r)  # y == 0: no rotation
    with pytest.raises(FuncadValueError, match="same size"):
        lla.cholesky_update(r, np.ones(3))
    with pytest.raises(FuncadValueError, match="c \\[..., m, m\\]"):
        lla.symmetric_product(a, c[..., :2, :2])


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_ormqr_matches_jax_and_full_q(left, transpose, dtype):
    a = _mat((2, 5, 3), dtype, seed=20)
    h, taus = lla.geqrf(a)
    c = _mat((2, 5, 2) if left else (2, 2, 5), dtype, seed=21)
    got = lla.ormqr(h, taus, c, left=left, transpose=transpose)
    if _jax(jlla, "ormqr") is not None:
        np.testing.assert_allclose(got, np.asarray(jlla.ormqr(h, taus, c, left=left, transpose=transpose)),
                                   atol=1e-13)
    q = np.stack([sla.qr(x)[0] for x in a])
    q = _H(q) if transpose else q
    np.testing.assert_allclose(got, q @ c if left else c @ q, atol=1e-12)


def test_ormqr_errors():
    h, taus = lla.geqrf(np.ones((4, 2)))
    with pytest.raises(FuncadValueError, match="same number of rows"):
        lla.ormqr(h, taus, np.ones((3, 2)))
    with pytest.raises(FuncadValueError, match="same number of columns"):
        lla.ormqr(h, taus, np.ones((3, 2)), left=False)


@pytest.mark.parametrize("mode", ["left", "right"])
@pytest.mark.parametrize("conjugate", [False, True])
@pytest.mark.parametrize("pivoting", [False, True])
def test_qr_multiply_matches_scipy_and_jax(mode, conjugate, pivoting):
    a = _mat((5, 3), np.complex128, seed=22)
    for c in ((_mat((3, 2), np.complex128, 23), _mat((3,), np.complex128, 24)) if mode == "left" else
              (_mat((2, 5), np.complex128, 23), _mat((5,), np.complex128, 24))):
        got = fsl.qr_multiply(a, c, mode, pivoting, conjugate)
        for g, s in zip(got, sla.qr_multiply(a, c, mode, pivoting, conjugate)):
            assert np.shape(g) == np.shape(s)
            np.testing.assert_allclose(np.asarray(g), s, atol=1e-13)
        if _jax(jsl, "qr_multiply") is not None:
            for g, j in zip(got, jsl.qr_multiply(a, c, mode, pivoting, conjugate)):
                np.testing.assert_allclose(np.asarray(g), np.asarray(j), atol=1e-13)


def test_qr_multiply_errors_and_jit():
    a = _mat((4, 3), np.float64)
    with pytest.raises(FuncadValueError, match="'right' or 'left'"):
        fsl.qr_multiply(a, np.ones((2, 4)), mode="up")
    with pytest.raises(FuncadValueError, match="expected 4"):
        fsl.qr_multiply(a, np.ones((2, 3)))
    with pytest.raises(FuncadValueError, match="expected 3"):
        fsl.qr_multiply(a, np.ones((4, 2)), mode="left")
    c = np.ones((2, 4))
    got = funcad.jit(fsl.qr_multiply)(a, c)
    for g, w in zip(got, fsl.qr_multiply(a, c)):
        np.testing.assert_allclose(np.asarray(g), w, atol=1e-13)


# ------------------------------------------------------------- tridiagonal ----

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_reduces_and_matches_jax(dtype, lower):
    a = _mat((2, 5, 5), dtype, seed=25)
    a = a + _H(a)
    arr, d, e, taus = lla.tridiagonal(a, lower=lower)
    for x, y in zip((arr, d, e, taus), jlla.tridiagonal(a, lower=lower)):
        np.testing.assert_allclose(x, np.asarray(y), atol=50 * _tol(dtype))
    assert d.dtype == e.dtype == np.finfo(dtype).dtype
    # the eigenvalues of the tridiagonal are those of a
    np.testing.assert_allclose(np.stack([fsl.eigh_tridiagonal(d[i], e[i], eigvals_only=True) for i in range(2)]),
                               np.linalg.eigvalsh(a), atol=200 * _tol(dtype))
    got = funcad.jit(lambda x: lla.tridiagonal(x, lower=lower))(a)
    for x, y in zip(got, (arr, d, e, taus)):
        np.testing.assert_array_equal(np.asarray(x), y)


def test_tridiagonal_errors_gpu_and_to_python():
    with pytest.raises(FuncadTypeError, match="non-empty square"):
        lla.tridiagonal(np.zeros((0, 0)))
    with pytest.raises(MissingRuleError, match="tridiagonal has no derivative"):
        funcad.grad(lambda x: fnp.sum(lla.tridiagonal(x)[1]))(np.eye(3))
    from funcad.lowering.stablehlo import lower_jaxpr
    closed = funcad.make_jaxpr(lla.tridiagonal)(np.eye(3))
    assert "lapack_dsytrd_ffi" in lower_jaxpr(closed, "f").text
    with pytest.raises(MissingRuleError, match="backend='cpu'"):
        lower_jaxpr(closed, "f", platform="gpu")
    a = _mat((2, 3, 3), np.float64)
    a = a + _H(a)
    src = funcad.to_python(funcad.make_jaxpr(lla.tridiagonal)(a))
    ns = {}
    exec(src, ns)
    for got, want in zip(ns["f"](a), lla.tridiagonal(a)):
        np.testing.assert_allclose(got, want, atol=1e-13)


def test_every_name_of_jax_linalg_namespaces_is_here():
    # jax.lax.linalg's primitives (*_p) and implementation enums are JAX internals.
    internal = {"EigImplementation", "EighImplementation", "SvdAlgorithm"}
    lax_names = [n for n in dir(jlla) if not n.startswith("_") and not n.endswith("_p") and n not in internal
                 and n != "geqp3"]  # (public in jax 0.6 only; qr(pivoting=True) here)
    assert [n for n in lax_names if not hasattr(lla, n)] == []
    assert [n for n in dir(jsl) if not n.startswith("_") and not hasattr(fsl, n)] == []
    for mod in (lla, fsl):
        assert sorted(mod.__all__) == sorted(set(mod.__all__))
        assert all(hasattr(mod, n) for n in mod.__all__)
