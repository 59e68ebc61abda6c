"""eig, eigvals, roots, polyfit and the complex decompositions: what the op rows
(tests/op_rows/linalg_complex.py) cannot express: keywords, edge values,
errors, left eigenvectors, jit against eager, vmap, to_python."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp

import funcad
import funcad.lax.linalg as lla
import funcad.numpy as fnp
from funcad.core.errors import ConcretizationError, FuncadTypeError, MissingRuleError
from tests.op_rows.linalg_complex import NONSYM

jax.config.update("jax_enable_x64", True)

_HAS_EIGVEC_FLAG = "enable_eigvec_derivs" in __import__("inspect").signature(jax.lax.linalg.eig).parameters


def _a(dtype=np.complex128, complex_input=False, n=4, seed=0):
    return NONSYM(n, complex_input=complex_input)(np.random.default_rng(seed), dtype)[0]


# --------------------------------------------------------------------- eig ----

@pytest.mark.parametrize("dtype,complex_input", [(np.complex64, False), (np.complex128, False),
                                                 (np.complex64, True), (np.complex128, True)])
def test_eig_is_an_eigendecomposition_and_jit_agrees(dtype, complex_input):
    a = _a(dtype, complex_input)
    w, vl, vr = lla.eig(a)
    assert w.dtype == vl.dtype == vr.dtype == np.dtype(dtype)
    tol = 1e-4 if dtype == np.complex64 else 1e-11
    np.testing.assert_allclose(a @ vr, vr * w, atol=tol)
    np.testing.assert_allclose(vl.conj().T @ a, w[:, None] * vl.conj().T, atol=tol)
    # geev's normalisation: unit norm, largest-magnitude component real.
    np.testing.assert_allclose(np.linalg.norm(vr, axis=0), 1, atol=tol)
    big = vr[np.argmax(np.abs(vr), axis=0), np.arange(4)]
    np.testing.assert_allclose(big.imag, 0, atol=tol)
    for got, want in zip(funcad.jit(lla.eig)(a), (w, vl, vr)):
        np.testing.assert_allclose(got, want, atol=tol)
    for got, want in zip(jax.lax.linalg.eig(a), (w, vl, vr)):
        np.testing.assert_allclose(got, want, atol=tol)


@pytest.mark.parametrize("left,right", [(False, False), (True, False), (False, True)])
def test_eig_computes_only_what_is_asked(left, right):
    a = _a(np.complex128)
    outs = lla.eig(a, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    assert len(outs) == 1 + left + right
    jitted = funcad.jit(lambda a: lla.eig(a, compute_left_eigenvectors=left,
                                          compute_right_eigenvectors=right))(a)
    want = jax.lax.linalg.eig(a, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    for o, j, w in zip(outs, jitted, want):
        np.testing.assert_allclose(o, w, atol=1e-12)
        np.testing.assert_allclose(j, w, atol=1e-12)


def test_numpy_eig_dtypes_follow_jax():
    for dt, want in [(np.float32, np.complex64), (np.float64, np.complex128), (np.int64, np.complex128),
                     (np.complex64, np.complex64)]:
        a = np.array([[2, 1], [0, 3]], dt)
        w, v = fnp.linalg.eig(a)
        assert w.dtype == v.dtype == fnp.linalg.eigvals(a).dtype == want
        assert jnp.linalg.eig(a)[0].dtype == want
    w, v = fnp.linalg.eig(np.array([[2.0, 1.0], [0.0, 3.0]]))
    np.testing.assert_allclose(w, [2, 3])
    assert isinstance(fnp.linalg.eig(np.eye(2)), fnp.linalg.EigResult)


def test_eig_of_a_stack_and_vmap():
    a = np.stack([_a(np.complex128, seed=s) for s in range(3)])
    w, vr = fnp.linalg.eig(a)
    for k in range(3):
        wk, vk = fnp.linalg.eig(a[k])
        np.testing.assert_allclose(w[k], wk, atol=1e-12)
        np.testing.assert_allclose(vr[k], vk, atol=1e-12)
    vw, vv = funcad.vmap(fnp.linalg.eig)(a)
    np.testing.assert_allclose(vw, w, atol=1e-12)
    np.testing.assert_allclose(vv, vr, atol=1e-12)
    np.testing.assert_allclose(funcad.jit(fnp.linalg.eigvals)(a), w, atol=1e-12)


def test_eig_edge_values():
    for f in (fnp.linalg.eigvals, funcad.jit(fnp.linalg.eigvals)):
        assert f(np.zeros((0, 0))).shape == (0,)
        assert f(np.zeros((2, 0, 0), np.float32)).dtype == np.complex64
        bad = f(np.array([[np.inf, 1.0], [1.0, 1.0]]))  # geev fails: NaN + NaN j, as JAX
        assert np.isnan(bad.real).all() and np.isnan(bad.imag).all()
    w, vl, vr = funcad.jit(lla.eig)(np.zeros((0, 0)))
    assert w.shape == (0,) and vl.shape == vr.shape == (0, 0)
    np.testing.assert_allclose(fnp.linalg.eigvals(np.array([[0.0, -1.0], [1.0, 0.0]])), [1j, -1j])


def test_eig_errors():
    with pytest.raises(FuncadTypeError, match="square"):
        lla.eig(np.ones((2, 3)))
    with pytest.raises(FuncadTypeError, match="float32, float64"):
        lla.eig(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="square"):
        fnp.linalg.eig(np.ones((2, 3)))
    with pytest.raises(MissingRuleError, match="enable_eigvec_derivs=True"):
        funcad.jvp(lambda a: lla.eig(a)[0], (np.eye(2),), (np.eye(2),))
    with pytest.raises(MissingRuleError, match="enable_eigvec_derivs=True"):
        funcad.grad(lambda a: fnp.real(fnp.linalg.eig(a)[1]).sum())(np.diag([1.0, 2.0]))


def test_eigenvalue_derivatives_match_jax():
    a = _a(np.complex128)
    t = np.random.default_rng(3).standard_normal(a.shape)
    got = funcad.jvp(fnp.linalg.eigvals, (a,), (t,))[1]
    want = jax.jvp(jnp.linalg.eigvals, (a,), (t,))[1]
    np.testing.assert_allclose(got, want, atol=1e-12)
    g = funcad.grad(lambda a: fnp.abs(fnp.linalg.eigvals(a)).sum())(a)
    np.testing.assert_allclose(g, jax.grad(lambda a: jnp.abs(jnp.linalg.eigvals(a)).sum())(a), atol=1e-12)
    np.testing.assert_allclose(funcad.jit(funcad.grad(lambda a: fnp.abs(fnp.linalg.eigvals(a)).sum()))(a), g,
                               atol=1e-12)


def test_eigenvalue_hessian_exists_where_jax_needs_the_flag():
    a = _a(np.complex128, n=3)
    f = lambda a: fnp.real(fnp.linalg.eigvals(a) ** 2).sum()  # = trace(a @ a): hessian known
    h = funcad.hessian(f)(a)
    want = np.einsum("il,jk->ijkl", np.eye(3), np.eye(3)) * 2
    np.testing.assert_allclose(h, want, atol=1e-9)


@pytest.mark.skipif(not _HAS_EIGVEC_FLAG, reason="this JAX has no eigenvector derivatives")
@pytest.mark.parametrize("complex_input", [False, True])
def test_eigenvector_derivatives_match_jax_and_finite_differences(complex_input):
    a = _a(np.complex128, complex_input)
    rng = np.random.default_rng(4)
    t = rng.standard_normal(a.shape) + (1j * rng.standard_normal(a.shape) if complex_input else 0)
    f = lambda a: tuple(lla.eig(a, enable_eigvec_derivs=True))
    got = funcad.jvp(f, (a,), (t,))[1]
    want = jax.jvp(lambda a: tuple(jax.lax.linalg.eig(a, enable_eigvec_derivs=True)), (a,), (t,))[1]
    eps = 1e-6
    fd = [(p - m) / (2 * eps) for p, m in zip(f(a + eps * t), f(a - eps * t))]
    for g, w, d in zip(got, want, fd):
        np.testing.assert_allclose(g, w, atol=1e-10)
        np.testing.assert_allclose(g, d, atol=1e-6)


def test_eig_to_python_runs():
    a = _a(np.complex128, n=3)
    src = funcad.to_python(funcad.make_jaxpr(lambda a: lla.eig(a))(a))
    ns = {}
    exec(src, ns)
    for got, want in zip(ns["f"](a), lla.eig(a)):
        np.testing.assert_allclose(got, want, atol=1e-12)


# ------------------------------------------------------------------- roots ----

@pytest.mark.parametrize("p", [[1.0, -3.0, 2.0], [0.0, 0.0, 1.0, 2.0, 5.0], [1, 2, 3, 0],
                               np.float32([2, 1, 1]), [0.0, 0.0], [3.0], [], 2.0])
def test_roots_matches_jax(p):
    for strip in (True, False):
        got = fnp.roots(p, strip_zeros=strip)
        want = jnp.roots(jnp.asarray(p), strip_zeros=strip)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=1e-6, equal_nan=True)
    jitted = funcad.jit(lambda p: fnp.roots(p, strip_zeros=False))(np.asarray(p))
    np.testing.assert_allclose(jitted, jnp.roots(jnp.asarray(p), strip_zeros=False), atol=1e-6, equal_nan=True)


def test_roots_needs_strip_zeros_false_under_jit():
    with pytest.raises(ConcretizationError, match="strip_zeros=False"):
        funcad.jit(fnp.roots)(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="rank-1"):
        fnp.roots(np.ones((2, 2)))


def test_roots_gradient_matches_jax():
    p = np.array([1.0, -1.0, 0.5, 2.0])
    f = lambda m: lambda p: m.abs(m.roots(p)).sum()
    np.testing.assert_allclose(funcad.grad(f(fnp))(p), jax.grad(f(jnp))(p), atol=1e-12)


def test_poly_of_a_matrix_matches_jax():
    a = _a(np.complex128, n=3)
    np.testing.assert_allclose(fnp.poly(a), jnp.poly(a), atol=1e-12)
    np.testing.assert_allclose(funcad.jit(fnp.poly)(a), jnp.poly(a), atol=1e-12)


# ----------------------------------------------------------------- polyfit ----

_X = np.linspace(-1.0, 2.0, 12)
_Y = np.random.default_rng(5).standard_normal((12, 3))
_W = np.random.default_rng(6).uniform(0.5, 1.5, 12)


@pytest.mark.parametrize("kw", [{}, {"full": True}, {"cov": True}, {"cov": "unscaled"}, {"w": _W},
                                {"w": _W, "cov": True}, {"rcond": 1e-3}, {"rcond": 1e-3, "full": True}],
                         ids=lambda kw: ",".join(kw) or "plain")
@pytest.mark.parametrize("two_d", [False, True])
def test_polyfit_matches_jax(kw, two_d):
    y = _Y if two_d else _Y[:, 0]
    got = fnp.polyfit(_X, y, 3, **kw)
    want = jnp.polyfit(_X, y, 3, **kw)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    if kw.get("cov") is True and two_d and np.shape(want[1]) != np.shape(np.polyfit(_X, y, 3, **kw)[1]):
        pytest.skip("this JAX's scaled covariance of a 2-D fit has NumPy's shape wrong (newer JAX fixed it)")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    if not kw.get("full"):
        np.testing.assert_allclose(np.polyfit(_X, y, 3, **kw)[0] if "cov" in kw else np.polyfit(_X, y, 3, **kw),
                                   got[0] if "cov" in kw else got[0], rtol=1e-9)


def test_polyfit_under_jit_and_int_input():
    f = funcad.jit(lambda x, y: fnp.polyfit(x, y, 2, full=True))
    for g, w in zip(f(_X, _Y[:, 0]), jnp.polyfit(_X, _Y[:, 0], 2, full=True)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    # NumPy fits integer data (JAX refuses it for want of a default rcond).
    np.testing.assert_allclose(fnp.polyfit(np.arange(5), np.arange(5) ** 2, 2), [1, 0, 0], atol=1e-12)


def test_polyfit_errors():
    with pytest.raises(ValueError, match="deg >= 0"):
        fnp.polyfit(_X, _Y[:, 0], -1)
    with pytest.raises(TypeError, match="1D vector for x"):
        fnp.polyfit(np.ones((2, 2)), np.ones(2), 1)
    with pytest.raises(TypeError, match="same length"):
        fnp.polyfit(_X, np.ones(3), 1)
    with pytest.raises(TypeError, match="1-d array for weights"):
        fnp.polyfit(_X, _Y[:, 0], 1, w=np.ones((12, 1)))
    with pytest.raises(ValueError, match="must exceed order"):
        fnp.polyfit(_X[:3], _Y[:3, 0], 2, cov=True)
    with pytest.raises(FuncadTypeError, match="deg must be a Python int"):
        fnp.polyfit(_X, _Y[:, 0], 1.5)
