"""Linear algebra (cholesky, triangular_solve, lu and what is built on them):
properties on random well-conditioned inputs, keyword variants, errors, edge
values (singular and indefinite matrices), dtypes, stacks under vmap and jit,
and derivatives that the op table cannot express."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given, settings, strategies as st

import funcad
import funcad.lax.linalg as lla
import funcad.numpy as fnp
import funcad.scipy.linalg as fsl
from funcad.core.errors import FuncadError, FuncadTypeError, FuncadValueError

L = fnp.linalg


def _gen(rng, shape, dtype=np.float64):
    x = rng.uniform(-1, 1, shape) + 3 * np.eye(shape[-1])
    return x.astype(dtype)


def _spd(rng, shape, dtype=np.float64):
    b = rng.uniform(-1, 1, shape)
    return (b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


# ------------------------------------------------------------- properties ----

sizes = st.integers(1, 6)
batches = st.sampled_from([(), (2,), (2, 3)])
seeds = st.integers(0, 2 ** 31 - 1)


@settings(max_examples=25, deadline=None)
@given(n=sizes, batch=batches, seed=seeds)
def test_solve_inverts_matmul(n, batch, seed):
    rng = np.random.default_rng(seed)
    a = _gen(rng, batch + (n, n))
    x = rng.standard_normal(batch + (n, 2))
    np.testing.assert_allclose(L.solve(a, a @ x), x, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(L.inv(a) @ a, np.broadcast_to(np.eye(n), a.shape), atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(n=sizes, batch=batches, seed=seeds)
def test_exp_slogdet_is_det_and_matches_numpy(n, batch, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (n, n))
    sign, logdet = L.slogdet(a)
    np.testing.assert_allclose(sign * np.exp(logdet), L.det(a), rtol=1e-9)
    np.testing.assert_allclose(L.det(a), np.linalg.det(a), rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(sign, np.linalg.slogdet(a)[0])


@settings(max_examples=25, deadline=None)
@given(n=sizes, batch=batches, seed=seeds)
def test_factorizations_reconstruct(n, batch, seed):
    rng = np.random.default_rng(seed)
    s = _spd(rng, batch + (n, n))
    c = L.cholesky(s)
    np.testing.assert_allclose(c @ np.swapaxes(c, -1, -2), s, rtol=1e-10, atol=1e-10)
    assert np.all(np.triu(c, 1) == 0)
    a = rng.standard_normal(batch + (n, n + 1))
    lu, piv, perm = lla.lu(a)
    k = min(a.shape[-2:])
    low = np.tril(lu, -1)[..., :, :k] + np.eye(n, k)
    up = np.triu(lu)[..., :k, :]
    np.testing.assert_allclose(np.take_along_axis(a, perm[..., None], -2), low @ up, atol=1e-10)
    assert piv.dtype == np.int32 and perm.dtype == np.int32
    np.testing.assert_array_equal(lla.lu_pivots_to_permutation(piv, n), perm)


@settings(max_examples=15, deadline=None)
@given(n=sizes, seed=seeds, trans=st.sampled_from([0, 1, 2]))
def test_scipy_factor_and_solve(n, seed, trans):
    rng = np.random.default_rng(seed)
    a, s = _gen(rng, (n, n)), _spd(rng, (n, n))
    b = rng.standard_normal((n, 3))
    op = a if trans == 0 else a.T
    np.testing.assert_allclose(op @ fsl.lu_solve(fsl.lu_factor(a), b, trans=trans), b, atol=1e-9)
    for lower in (False, True):
        np.testing.assert_allclose(s @ fsl.cho_solve(fsl.cho_factor(s, lower=lower), b), b, atol=1e-9)
    p, l, u = fsl.lu(a)
    np.testing.assert_allclose(p @ l @ u, a, atol=1e-12)


# ------------------------------------------------------- keyword variants ----

def test_cholesky_keywords():
    rng = np.random.default_rng(0)
    s = _spd(rng, (4, 4))
    lower_only = np.tril(s) + 100 * np.triu(np.ones((4, 4)), 1)  # garbage above the diagonal
    np.testing.assert_allclose(lla.cholesky(lower_only, symmetrize_input=False), np.linalg.cholesky(s))
    np.testing.assert_allclose(L.cholesky(s, upper=True), np.linalg.cholesky(s).T)
    np.testing.assert_allclose(fsl.cholesky(s), sla.cholesky(s))
    np.testing.assert_allclose(fsl.cholesky(s, lower=True), sla.cholesky(s, lower=True))


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve_every_flag_eager_and_jit(left_side, lower, transpose_a, unit_diagonal):
    rng = np.random.default_rng(1)
    a = _gen(rng, (2, 4, 4))
    b = rng.standard_normal((2, 4, 3) if left_side else (2, 3, 4))
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    x = lla.triangular_solve(a, b, **kw)
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t[0]))[None] * 0 - t * np.eye(4) + np.eye(4)
    op = np.swapaxes(t, -1, -2) if transpose_a else t
    np.testing.assert_allclose(op @ x if left_side else x @ op, b, atol=1e-10)
    np.testing.assert_allclose(np.asarray(funcad.jit(lambda a, b: lla.triangular_solve(a, b, **kw))(a, b)),
                               x, rtol=1e-12, atol=1e-12)


def test_solve_triangular_trans_letters_and_conjugate_is_transpose_for_reals():
    rng = np.random.default_rng(2)
    a, b = _gen(rng, (3, 3)), rng.standard_normal(3)
    for t in ("T", "C", 1, 2):
        np.testing.assert_allclose(fsl.solve_triangular(a, b, trans=t), sla.solve_triangular(a, b, trans=1))


def test_solve_keeps_numpy_vector_rules():
    rng = np.random.default_rng(3)
    a = _gen(rng, (2, 3, 3))
    v = rng.standard_normal(3)
    x = L.solve(a, v)  # one vector for every matrix of the stack
    assert x.shape == (2, 3)
    np.testing.assert_allclose(np.einsum("bij,bj->bi", a, x), np.broadcast_to(v, (2, 3)), atol=1e-12)
    assert L.solve(a, rng.standard_normal((1, 3, 2))).shape == (2, 3, 2)  # batch dims broadcast


def test_matrix_power_and_multi_dot_edge_cases():
    a = np.array([[1.0, 1.0], [0.0, 1.0]])
    np.testing.assert_array_equal(L.matrix_power(np.stack([a, 2 * a]), 0), np.broadcast_to(np.eye(2), (2, 2, 2)))
    np.testing.assert_allclose(L.matrix_power(a, -3), np.linalg.matrix_power(a, -3))
    assert L.matrix_power(np.arange(4).reshape(2, 2), 2).dtype == np.int64  # integers stay integers
    dims = [(10, 100), (100, 5), (5, 50)]
    ms = [np.random.default_rng(i).standard_normal(s) for i, s in enumerate(dims)]
    np.testing.assert_allclose(L.multi_dot(ms), np.linalg.multi_dot(ms), rtol=1e-12)
    assert float(L.multi_dot([np.ones(3), np.ones((3, 3)), np.ones(3)])) == 9.0


def test_expm_keywords_and_values():
    np.testing.assert_allclose(fsl.expm(np.diag([1.0, -2.0])), np.diag(np.exp([1.0, -2.0])), rtol=1e-14)
    big = 50 * np.ones((2, 2))
    assert np.isnan(fsl.expm(big, max_squarings=2)).all()
    assert np.isfinite(fsl.expm(big)).all()
    a = np.triu(np.random.default_rng(4).uniform(-1, 1, (4, 4)))
    np.testing.assert_allclose(fsl.expm(a, upper_triangular=True), sla.expm(a), rtol=1e-12)
    f32 = fsl.expm(a.astype(np.float32))
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, sla.expm(a), rtol=1e-5)


def test_block_diag_shapes_and_promotion():
    out = fsl.block_diag(np.float32(1.0), np.array([2, 3]), np.ones((2, 1), np.float32))
    np.testing.assert_array_equal(out, sla.block_diag(1.0, [2, 3], np.ones((2, 1))))
    assert out.dtype == np.float64


# ------------------------------------------------------------- edge values ----

def test_singular_and_indefinite_inputs_give_nans_not_exceptions():
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    for f in (L.solve, lambda a, b: np.asarray(funcad.jit(L.solve)(a, b))):
        x = f(sing, np.ones(2))
        assert not np.isfinite(x).all()
    assert L.det(sing) == 0.0
    sign, logdet = L.slogdet(sing)
    assert sign == 0.0 and logdet == -np.inf
    indefinite = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert np.isnan(L.cholesky(indefinite)).all()
    assert np.isnan(np.asarray(funcad.jit(L.cholesky)(indefinite))).all()
    stack = np.stack([indefinite, np.eye(2)])  # only the bad matrix becomes NaN
    out = L.cholesky(stack)
    assert np.isnan(out[0]).all() and np.array_equal(out[1], np.eye(2))


def test_det_gradient_at_singular_matrices_matches_jax():
    jax = _jax()
    import jax.numpy as jnp
    rank2 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    rank1 = np.ones((3, 3))
    for a in (rank2, rank1):
        g = funcad.grad(L.det)(a)
        assert np.isfinite(g).all()
        np.testing.assert_allclose(g, jax.grad(jnp.linalg.det)(a), atol=1e-12)
        np.testing.assert_allclose(np.asarray(funcad.jit(funcad.grad(L.det))(a)), g, atol=1e-12)
    np.testing.assert_allclose(funcad.grad(L.det)(rank2), [[4, 4, -4], [-2, -2, 2], [0, 0, 0]], atol=1e-12)


def test_slogdet_gradient_is_inverse_transpose_and_sign_has_none():
    a = _gen(np.random.default_rng(5), (4, 4))
    np.testing.assert_allclose(funcad.grad(lambda x: L.slogdet(x)[1])(a), np.linalg.inv(a).T, rtol=1e-10)
    np.testing.assert_array_equal(funcad.grad(lambda x: L.slogdet(x)[0])(a), np.zeros((4, 4)))


# ------------------------------------------------------------------- dtypes ----

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_are_kept(dtype):
    rng = np.random.default_rng(6)
    a, s = _gen(rng, (3, 3), dtype), _spd(rng, (3, 3), dtype)
    b = rng.standard_normal((3, 2)).astype(dtype)
    outs = [L.solve(a, b), L.inv(a), L.det(a), L.slogdet(a)[1], L.cholesky(s), lla.lu(a)[0],
            fsl.solve_triangular(a, b), fsl.cho_solve(fsl.cho_factor(s), b), fsl.expm(a / 4)]
    for out in outs:
        assert np.asarray(out).dtype == dtype
    jitted = funcad.jit(lambda a, s, b: [L.solve(a, b), L.det(a), L.cholesky(s), lla.lu(a)[0]])(a, s, b)
    for out, want in zip(jitted, [outs[0], outs[2], outs[4], outs[5]]):
        assert np.asarray(out).dtype == dtype
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_integer_inputs_promote_to_float64_as_numpy():
    a = np.array([[2, 1], [1, 3]])
    assert L.solve(a, np.array([1, 2])).dtype == np.float64
    assert L.det(a).dtype == np.float64 and float(L.det(a)) == pytest.approx(5.0)
    assert L.inv(a).dtype == np.float64


# ---------------------------------------------------------------- errors ----

@pytest.mark.parametrize("fn", [L.solve, L.inv, L.det, L.slogdet, L.cholesky, fsl.expm,
                                fsl.cho_factor, fsl.det])  # lu_factor takes rectangular ones, as JAX's
def test_non_square_input_is_refused(fn):
    args = (np.ones((2, 3)), np.ones(2)) if fn is L.solve else (np.ones((2, 3)),)
    with pytest.raises(FuncadValueError, match=r"square|\(\.\.\., n, n\)"):
        fn(*args)


def test_errors_name_the_problem():
    with pytest.raises(FuncadValueError, match="b has 3 rows"):
        L.solve(np.eye(2), np.ones((3, 1)))
    with pytest.raises(FuncadValueError, match=r"solve\(a, b\[\.\.\., None\]\)"):
        L.solve(np.ones((2, 3, 3)) + np.eye(3), np.ones((2, 3)))  # a batch of vectors: ambiguous
    with pytest.raises(FuncadValueError, match="trans must be"):
        fsl.solve_triangular(np.eye(2), np.ones(2), trans="X")
    with pytest.raises(FuncadValueError, match="assume_a"):
        fsl.solve(np.eye(2), np.ones(2), assume_a="banded")
    with pytest.raises(FuncadValueError, match="'lu'"):
        L.slogdet(np.eye(2), method="qr")
    with pytest.raises(FuncadTypeError, match="integer"):
        L.matrix_power(np.eye(2), 1.5)
    with pytest.raises(FuncadValueError, match="ind"):
        L.tensorinv(np.ones((2, 2)), ind=0)
    with pytest.raises(FuncadValueError, match="one-dimensional"):
        L.outer(np.ones((2, 2)), np.ones(2))
    with pytest.raises(FuncadValueError, match="3-vectors"):
        L.cross(np.ones(2), np.ones(2))
    with pytest.raises(FuncadValueError, match="at least two"):
        L.multi_dot([np.ones(2)])
    with pytest.raises(FuncadValueError, match="at most 2 dimensions"):
        fsl.block_diag(np.ones((1, 1, 1)))
    with pytest.raises(FuncadTypeError, match=r"triangular_solve got f64\[3,3\], f64\[2,2\]"):
        lla.triangular_solve(np.eye(3), np.ones((2, 2)), left_side=True)
    with pytest.raises(FuncadTypeError, match="float32/float64"):
        lla.cholesky(np.eye(2, dtype=np.int32), symmetrize_input=False)
    with pytest.raises(FuncadTypeError, match="permutation_size"):
        lla.lu_pivots_to_permutation(np.array([0, 1, 2], np.int32), 2)


def test_errors_under_jit_too():
    with pytest.raises(FuncadError):
        funcad.jit(L.inv)(np.ones((2, 3)))


# ------------------------------------------------------- vmap and jit ----

def test_vmap_over_stacks_matches_loops():
    rng = np.random.default_rng(7)
    a = _gen(rng, (4, 3, 3))
    b = rng.standard_normal((4, 3, 2))
    np.testing.assert_allclose(funcad.vmap(L.solve)(a, b), np.stack([np.linalg.solve(x, y) for x, y in zip(a, b)]))
    # One matrix, a batch of right-hand sides (solved as extra columns).
    low = np.tril(a[0])
    got = funcad.vmap(lambda y: lla.triangular_solve(low, y, left_side=True, lower=True), in_axes=0)(b)
    np.testing.assert_allclose(got, np.stack([sla.solve_triangular(low, y, lower=True) for y in b]), rtol=1e-12)
    c = np.moveaxis(b, 0, 2)  # (3, 2, 4): the batch last
    got = funcad.vmap(lambda y: lla.triangular_solve(low, y, left_side=True, lower=True), in_axes=2)(c)
    np.testing.assert_allclose(got, np.stack([sla.solve_triangular(low, c[..., j], lower=True)
                                              for j in range(4)]), rtol=1e-12)
    dets = funcad.vmap(funcad.vmap(L.det))(np.stack([a, a + 1]))
    np.testing.assert_allclose(dets, np.linalg.det(np.stack([a, a + 1])), rtol=1e-10)
    grads = funcad.vmap(funcad.grad(lambda x: L.slogdet(x)[1]))(a)
    np.testing.assert_allclose(grads, np.swapaxes(np.linalg.inv(a), -1, -2), rtol=1e-10)


def test_jit_of_stacked_and_rectangular_lu_matches_eager():
    rng = np.random.default_rng(8)
    for shape in [(2, 3, 4, 4), (2, 3, 5), (5, 3), (1, 1)]:
        a = rng.standard_normal(shape)
        eager = lla.lu(a)
        jitted = funcad.jit(lla.lu)(a)
        for e, j in zip(eager, jitted):
            np.testing.assert_allclose(np.asarray(j), e, rtol=1e-12, atol=1e-12)


def test_triangular_solve_transpose_rule():
    rng = np.random.default_rng(9)
    a = _gen(rng, (3, 3))
    for kw in [dict(left_side=True, lower=True), dict(left_side=False, lower=False, transpose_a=True)]:
        b = rng.standard_normal((3, 2) if kw["left_side"] else (2, 3))
        f = lambda y: lla.triangular_solve(a, y, **kw)  # noqa: E731
        c = rng.standard_normal(b.shape)
        (ct,) = funcad.linear_transpose(f, b)(c)
        assert np.vdot(f(b), c) == pytest.approx(np.vdot(b, ct), rel=1e-12)


def _nlml(np_, solve_triangular):
    def f(params, x, y):
        ell, s2, noise = np_.exp(params[0]), np_.exp(params[1]), np_.exp(params[2])
        sq = np_.sum(x * x, axis=1)
        d2 = np_.maximum(sq[:, None] + sq[None, :] - 2.0 * (x @ x.T), 0.0)
        k = s2 * np_.exp(-0.5 * d2 / ell ** 2) + noise * np_.eye(x.shape[0])
        chol = np_.linalg.cholesky(k)
        alpha = solve_triangular(chol, y, lower=True)
        return 0.5 * np_.sum(alpha * alpha) + np_.sum(np_.log(np_.diagonal(chol)))
    return f


def test_gp_likelihood_gradient_and_hessian_match_jax_eager_and_jit():
    jax = _jax()
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    rng = np.random.default_rng(10)
    p, x = np.array([0.3, 0.1, -2.0]), rng.uniform(-3, 3, (12, 3))
    y = np.sin(x).sum(1)
    jf = _nlml(jnp, jsl.solve_triangular)
    want, want_h = jax.jit(lambda *a: (jax.grad(jf)(*a), jax.hessian(jf)(*a)))(p, x, y)
    f = funcad.grad(_nlml(fnp, fsl.solve_triangular))
    np.testing.assert_allclose(f(p, x, y), want, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(funcad.jit(f)(p, x, y)), want, rtol=1e-9)
    h = funcad.hessian(_nlml(fnp, fsl.solve_triangular))(p, x, y)
    np.testing.assert_allclose(h, want_h, rtol=1e-8)


def test_lu_lowering_for_gpu_says_what_to_do():
    from funcad.core.errors import MissingRuleError
    from funcad.lowering.stablehlo import lower_jaxpr
    closed = funcad.make_jaxpr(L.solve)(np.eye(2), np.ones(2))
    assert "lapack_dgetrf_ffi" in lower_jaxpr(closed, "f").text
    with pytest.raises(MissingRuleError, match="backend='cpu'"):
        lower_jaxpr(closed, "f", platform="gpu")
    # cholesky and triangular_solve are XLA's own ops, on every platform.
    closed = funcad.make_jaxpr(lambda a, b: fsl.cho_solve(fsl.cho_factor(a), b))(np.eye(2), np.ones(2))
    text = lower_jaxpr(closed, "f", platform="gpu").text
    assert "stablehlo.cholesky" in text and "stablehlo.triangular_solve" in text
