"""Op-table rows of the general eigendecomposition (eig, eigvals, roots, poly of
a matrix), polyfit, and the decompositions on complex matrices.

Rows named `c_*` take complex dtypes (also those whose input is real and whose
output is complex, as in tests/op_rows/complex.py), so tests/primitives/test_complex.py
checks their derivatives (finite differences at order 2, JAX's grad/jvp and
second derivatives). Inputs have well separated eigenvalues (gaps >= 0.5), so
LAPACK's eigenvalue order does not change under the finite-difference steps
and the derivatives are smooth.
"""
import numpy as np
import scipy.linalg

import funcad.lax.linalg as lla
import funcad.numpy as fnp
from tests.op_table import op

C = (np.complex64, np.complex128)
_REAL = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


def _jnp():
    import jax.numpy as jnp
    return jnp


def _jlla():
    import jax.lax.linalg as jl
    return jl


def _basis(rng, n):
    """A well-conditioned random basis: orthogonal plus a small perturbation."""
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return q + 0.2 * rng.standard_normal((n, n))


def NONSYM(n, complex_input=False, pair=True):
    """A non-symmetric n x n matrix v diag(w) v^-1 with eigenvalues >= 0.6 apart:
    real (with one complex-conjugate pair when `pair`) for a real input of the
    complex dtype's real part, complex ones for a complex input."""
    def gen(rng, dtype):
        w = 0.7 * (np.arange(n) - n / 2) + rng.uniform(0, 0.1, n)
        if complex_input:
            w = w + 1j * rng.uniform(-1, 1, n)
            v = _basis(rng, n) + 1j * 0.3 * rng.standard_normal((n, n))
            return ((v * w) @ np.linalg.inv(v)).astype(dtype),
        t = np.diag(w) + np.triu(0.4 * rng.standard_normal((n, n)), 1)
        if pair:  # a 2x2 block with eigenvalues w0 +- 0.8i
            t[:2, :2] = [[w[0], 0.8], [-0.8, w[0]]]
            t[2:, 2:] += 2.0 * np.eye(n - 2)
        v = _basis(rng, n)
        return ((v @ t) @ np.linalg.inv(v)).astype(_REAL[np.dtype(dtype)]),
    return gen


def _row(name, fun, ref, gen, jax_fun, diff=True, rtol=None):
    op("c_linalg_" + name, fun, ref, gen, jax_fun, diff, C, rtol)


# --- eig, eigvals -------------------------------------------------------------
# The vectors carry geev's gauge (unit norm, largest component real), fixed by
# the input, so they are compared directly.

def _eig_all(a):
    return tuple(lla.eig(a, enable_eigvec_derivs=True))


def _np_eig_all(a):
    w, vl, vr = scipy.linalg.eig(a, left=True, right=True)
    return w, vl, vr


def _jax_eig_all(a):
    _need_eigvec_flag()
    return tuple(_jlla().eig(a, enable_eigvec_derivs=True))


def _need_eigvec_flag():
    import inspect
    import pytest
    if "enable_eigvec_derivs" not in inspect.signature(_jlla().eig).parameters:
        pytest.skip("this JAX has no enable_eigvec_derivs: no eigenvector derivatives to compare")


def _jax_eigvals(a):
    """JAX's eigenvalues, differentiable beyond first order: JAX's eigenvalue jvp
    calls eig again, which has second derivatives only with enable_eigvec_derivs
    (funcad's eigvals has them always)."""
    _need_eigvec_flag()
    return _jlla().eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False,
                       enable_eigvec_derivs=True)[0]


_row("eigvals", fnp.linalg.eigvals, np.linalg.eigvals, NONSYM(4), _jax_eigvals)
_row("eigvals_complex", fnp.linalg.eigvals, np.linalg.eigvals, NONSYM(3, complex_input=True), _jax_eigvals)
_row("eig_vectors", _eig_all, _np_eig_all, NONSYM(4), _jax_eig_all, rtol=1e-4)
_row("eig_vectors_complex", _eig_all, _np_eig_all, NONSYM(3, complex_input=True), _jax_eig_all, rtol=1e-4)
def _gauge_free(wv):
    """(w, v * v[0]): NumPy's LAPACK build may flip an eigenvector's sign."""
    w, v = wv
    return w, v * v[..., :1, :]


_row("eig_right", lambda a: _gauge_free(fnp.linalg.eig(a)), lambda a: _gauge_free(np.linalg.eig(a)),
     NONSYM(3, pair=False), lambda a: _gauge_free(_jnp().linalg.eig(a)), diff=False)
_row("eig_batched", lambda a: fnp.linalg.eigvals(a), np.linalg.eigvals,
     lambda r, d: (np.stack([NONSYM(3)(r, d)[0], NONSYM(3, pair=False)(r, d)[0]]),),
     _jax_eigvals)


# --- polynomials --------------------------------------------------------------

def _roots_in(rng, dtype):
    """Coefficients of a polynomial with roots >= 0.6 apart (a complex pair among them)."""
    r = np.array([-1.6, 0.2 + 0.9j, 0.2 - 0.9j, 1.3]) + rng.uniform(0, 0.1, 4)
    return (np.real(np.poly(r)).astype(_REAL[np.dtype(dtype)]),)


def _jax_roots(p):
    """JAX's roots algorithm (companion matrix eigenvalues) with eigenvalues
    differentiable to second order (see _jax_eigvals); test_linalg_complex
    compares with jnp.roots itself at first order."""
    jnp = _jnp()
    a = jnp.diag(jnp.ones((p.size - 2,), p.dtype), -1).at[0, :].set(-p[1:] / p[0])
    return _jax_eigvals(a)


_row("roots", lambda p: fnp.roots(p, strip_zeros=False), np.roots, _roots_in, _jax_roots)
# NumPy's poly is real where the roots come in conjugate pairs; JAX's (and funcad's) stays complex.
_row("poly_of_matrix", fnp.poly, lambda a: np.poly(a).astype(np.result_type(a.dtype, np.complex64)),
     NONSYM(3, pair=False), lambda a: _jnp().poly(_jax_eigvals(a)), rtol=1e-4)

_X = np.linspace(-1.0, 2.0, 9)
_X7 = np.linspace(-1.0, 1.0, 7)


def _as(dtype, out):
    """np.polyfit's float64 results in the input's dtype (JAX keeps float32)."""
    return tuple(o.astype(dtype) for o in out) if isinstance(out, tuple) else out.astype(dtype)


op("polyfit", lambda y: fnp.polyfit(_X.astype(y.dtype), y, 3), lambda y: _as(y.dtype, np.polyfit(_X, y, 3)),
   lambda rng, dt: (rng.standard_normal(9).astype(dt),),
   lambda y: _jnp().polyfit(_X.astype(y.dtype), y, 3), rtol=1e-4)
op("polyfit_weighted_2d", lambda y, w: fnp.polyfit(_X7.astype(y.dtype), y, 2, w=w),
   lambda y, w: _as(y.dtype, np.polyfit(_X7, y, 2, w=w)),
   lambda rng, dt: (rng.standard_normal((7, 2)).astype(dt), rng.uniform(0.5, 1.5, 7).astype(dt)),
   lambda y, w: _jnp().polyfit(_X7.astype(y.dtype), y, 2, w=w), rtol=1e-4)
op("polyfit_cov", lambda y: fnp.polyfit(_X.astype(y.dtype), y, 2, cov=True),
   lambda y: _as(y.dtype, np.polyfit(_X, y, 2, cov=True)),
   lambda rng, dt: (rng.standard_normal(9).astype(dt),),
   lambda y: _jnp().polyfit(_X.astype(y.dtype), y, 2, cov=True), rtol=1e-4)


# --- complex eigh, svd, qr and what is built on them --------------------------

def _unitary(rng, n):
    q, r = np.linalg.qr(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    return q * (np.diag(r) / np.abs(np.diag(r)))


def HERMITIAN(n, gap=0.6):
    """A Hermitian n x n matrix with eigenvalues gap apart (both signs)."""
    def gen(rng, dtype):
        w = gap * (np.arange(n) - n / 2) + rng.uniform(0, 0.1, n)
        v = _unitary(rng, n)
        return ((v * w) @ v.conj().T).astype(dtype),
    return gen


def CSPECTRAL(m, n, lo=0.6, gap=0.6):
    """A complex m x n matrix u diag(s) vh, singular values lo, lo + gap, ... shuffled."""
    def gen(rng, dtype):
        k = min(m, n)
        s = lo + gap * rng.permutation(k) + rng.uniform(0, 0.1, k)
        return (_unitary(rng, m)[:, :k] @ np.diag(s) @ _unitary(rng, n)[:k, :]).astype(dtype),
    return gen


def _phase_free(v):
    """Each column times the conjugate of its first entry: unchanged by a column's phase."""
    return v * v[..., :1, :].conj()


def _herm(a):
    return (a + np.swapaxes(a, -1, -2).conj()) / 2


def _svd_free(m):
    def f(a):
        u, s, vh = m.linalg.svd(a, full_matrices=False)
        return s, u @ vh
    return f


_row("eigh", lambda a: (lambda w, v: (w, _phase_free(v)))(*fnp.linalg.eigh(a)),
     lambda a: (lambda w, v: (w, _phase_free(v)))(*np.linalg.eigh(_herm(a))), HERMITIAN(4),
     lambda a: (lambda w, v: (w, _phase_free(v)))(*_jnp().linalg.eigh(a)), rtol=1e-5)
_row("eigvalsh", fnp.linalg.eigvalsh, lambda a: np.linalg.eigvalsh(_herm(a)), HERMITIAN(3),
     lambda a: _jnp().linalg.eigvalsh(a))
_row("svd_tall", _svd_free(fnp), _svd_free(np), CSPECTRAL(4, 3), _svd_free(_jnp()), rtol=1e-5)
_row("svd_wide", _svd_free(fnp), _svd_free(np), CSPECTRAL(2, 3), _svd_free(_jnp()), rtol=1e-5)
_row("svdvals", lambda a: fnp.linalg.svd(a, compute_uv=False), lambda a: np.linalg.svd(a, compute_uv=False),
     CSPECTRAL(3, 3), lambda a: _jnp().linalg.svd(a, compute_uv=False))
_row("pinv", fnp.linalg.pinv, np.linalg.pinv, CSPECTRAL(4, 3), lambda a: _jnp().linalg.pinv(a), rtol=1e-4)
_row("lstsq", lambda a, b: fnp.linalg.lstsq(a, b)[0], lambda a, b: np.linalg.lstsq(a, b)[0],
     lambda r, d: CSPECTRAL(4, 3)(r, d) + (CSPECTRAL(4, 2)(r, d)[0],),
     lambda a, b: _jnp().linalg.lstsq(a, b)[0], rtol=1e-4)
_row("norm_nuc", lambda a: fnp.linalg.norm(a, "nuc"), lambda a: np.linalg.norm(a, "nuc"), CSPECTRAL(3, 2),
     lambda a: _jnp().linalg.norm(a, "nuc"))
def _jax_qr(mode):
    """JAX's qr; the oldest supported JAX has no wide or complete QR derivative."""
    def f(a):
        import pytest
        try:
            return tuple(_jnp().linalg.qr(a, mode=mode))
        except NotImplementedError as e:
            pytest.skip(f"this JAX has no oracle here: {e}")
    return f


_row("qr_tall", lambda a: tuple(fnp.linalg.qr(a)), lambda a: tuple(np.linalg.qr(a)), CSPECTRAL(4, 3),
     _jax_qr("reduced"), rtol=1e-5)
_row("qr_wide", lambda a: tuple(fnp.linalg.qr(a)), lambda a: tuple(np.linalg.qr(a)), CSPECTRAL(2, 3),
     _jax_qr("reduced"), rtol=1e-5)
_row("qr_complete", lambda a: tuple(fnp.linalg.qr(a, mode="complete")),
     lambda a: tuple(np.linalg.qr(a, mode="complete")), CSPECTRAL(4, 2), _jax_qr("complete"), rtol=1e-5)


# --- complex cholesky, triangular solves, LU and what is built on them --------

def HPD(n):
    """A Hermitian positive definite n x n matrix (eigenvalues in [1, 3])."""
    def gen(rng, dtype):
        w = np.linspace(1.0, 3.0, n) + rng.uniform(0, 0.1, n)
        v = _unitary(rng, n)
        return ((v * w) @ v.conj().T).astype(dtype),
    return gen


def _skip(why):
    import pytest
    pytest.skip(why)


def _fsl():
    import funcad.scipy.linalg as fsl
    return fsl


def _jsl():
    import jax.scipy.linalg as jsl
    return jsl


def _and_rhs(gen, shape):
    def g(rng, dtype):
        b = rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
        return gen(rng, dtype) + (b.astype(dtype),)
    return g


def _tri(n, lower):
    def gen(rng, dtype):
        a = CSPECTRAL(n, n)(rng, dtype)[0] + 2 * np.eye(n)
        return ((np.tril(a) if lower else np.triu(a)).astype(dtype),)
    return gen


_row("cholesky", fnp.linalg.cholesky, lambda a: np.linalg.cholesky(_herm(a)), HPD(3),
     lambda a: _jnp().linalg.cholesky(a))
_row("cholesky_upper", lambda a: fnp.linalg.cholesky(a, upper=True),
     lambda a: np.linalg.cholesky(_herm(a)).conj().T, HPD(3), lambda a: _jnp().linalg.cholesky(a, upper=True))
_row("solve", fnp.linalg.solve, np.linalg.solve, _and_rhs(CSPECTRAL(3, 3), (3, 2)),
     lambda a, b: _jnp().linalg.solve(a, b))
_row("inv", fnp.linalg.inv, np.linalg.inv, CSPECTRAL(3, 3), lambda a: _jnp().linalg.inv(a))
_row("det", fnp.linalg.det, np.linalg.det, CSPECTRAL(3, 3), lambda a: _jnp().linalg.det(a))
_row("slogdet", lambda a: tuple(fnp.linalg.slogdet(a)), lambda a: tuple(np.linalg.slogdet(a)),
     CSPECTRAL(3, 3), lambda a: tuple(_jnp().linalg.slogdet(a)))
for _lower, _trans in ((True, 0), (False, 1), (True, 2), (False, "C")):
    _row(f"solve_triangular_{'l' if _lower else 'u'}{_trans}",
         (lambda lo, tr: lambda a, b: _fsl().solve_triangular(a, b, trans=tr, lower=lo))(_lower, _trans),
         (lambda lo, tr: lambda a, b: scipy.linalg.solve_triangular(a, b, trans=tr, lower=lo))(_lower, _trans),
         _and_rhs(_tri(3, _lower), (3, 2)),
         (lambda lo, tr: lambda a, b: _jsl().solve_triangular(a, b, trans=tr, lower=lo))(_lower, _trans))
# cho_factor reads one triangle without symmetrizing (as SciPy's and JAX's): the
# rows pass it a Hermitian matrix, so that its derivative is the one defined.
for _lower in (False, True):
    _row(f"cho_solve_{'lower' if _lower else 'upper'}",
         (lambda lo: lambda a, b: _fsl().cho_solve(_fsl().cho_factor(_herm(a), lower=lo), b))(_lower),
         (lambda lo: lambda a, b: scipy.linalg.cho_solve(scipy.linalg.cho_factor(_herm(a), lower=lo), b))(_lower),
         _and_rhs(HPD(3), (3, 2)),
         (lambda lo: lambda a, b: _jsl().cho_solve(_jsl().cho_factor(_herm(a), lower=lo), b))(_lower))
_row("lu_factor", lambda a: _fsl().lu_factor(a)[0], lambda a: scipy.linalg.lu_factor(a)[0],
     CSPECTRAL(3, 3), lambda a: _jsl().lu_factor(a)[0])
_row("lu_solve", lambda a, b: _fsl().lu_solve(_fsl().lu_factor(a), b),
     lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b), _and_rhs(CSPECTRAL(3, 3), (3, 2)),
     lambda a, b: _jsl().lu_solve(_jsl().lu_factor(a), b))
_row("lu", lambda a: tuple(_fsl().lu(a)), lambda a: tuple(scipy.linalg.lu(a)), CSPECTRAL(3, 3),
     lambda a: tuple(_jsl().lu(a)))
_row("solve_pos", lambda a, b: _fsl().solve(_herm(a), b, assume_a="pos"),
     lambda a, b: scipy.linalg.solve(_herm(a), b, assume_a="pos"), _and_rhs(HPD(3), (3, 2)),
     lambda a, b: _skip("JAX's solve(assume_a='pos') transposes without conjugating in reverse mode "
                        "(its grad of a complex Hermitian solve disagrees with finite differences; funcad's agrees)"))
