"""Op-table rows of the Schur decomposition and what is built on it (schur,
rsf2csf, sqrtm, funm), the polar decomposition (qdwh, polar), complex expm and
expm_frechet, and column-pivoted QR.

The Schur form is LAPACK's gees output (not unique), compared directly: SciPy,
JAX and funcad run the same routine. Rows built on it are `diff=False` (JAX
defines no derivative for schur). Rows named `c_*` take complex input (or real
input of the complex dtype's real part where the output is complex), so
tests/primitives/test_complex.py checks the differentiable ones. Inputs: eigenvalues well
separated and off the negative real axis (sqrtm), singular values in [1, 3]
(polar), column norms far apart (pivoted QR, so the pivots do not change under
finite-difference steps).
"""
import numpy as np
import scipy.linalg as sla

import funcad.lax.linalg as lla
import funcad.scipy.linalg as fsl
from tests.op_table import F, op

C = (np.complex64, np.complex128)
_REAL = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


def _jsl():
    import jax.scipy.linalg as jsl
    return jsl


def _jlla():
    import jax.lax.linalg as jl
    return jl


def _real_of(dtype):
    return np.dtype(_REAL.get(np.dtype(dtype), dtype))


def _orth(rng, n, cplx=False):
    x = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if cplx else 0)
    return np.linalg.qr(x)[0]


def GENERAL(n, real_input=False):
    """A random n x n matrix of the dtype (real of the complex dtype's part with
    `real_input`), well conditioned, eigenvalues spread."""
    def gen(rng, dtype):
        dt = _real_of(dtype) if real_input else np.dtype(dtype)
        a = rng.standard_normal((n, n)) + 0.5 * n ** 0.5 * np.eye(n)
        if dt.kind == "c":
            a = a + 1j * rng.standard_normal((n, n))
        return a.astype(dt),
    return gen


def POSITIVE_SPECTRUM(n, real_input=False):
    """v diag(w) v^-1 with eigenvalues in [1, 3], gaps >= 0.4: a principal
    square root well inside its domain."""
    def gen(rng, dtype):
        dt = _real_of(dtype) if real_input else np.dtype(dtype)
        w = 1.0 + 0.45 * np.arange(n) + rng.uniform(0, 0.05, n)
        v = _orth(rng, n, dt.kind == "c") + 0.2 * rng.standard_normal((n, n))
        return ((v * w) @ np.linalg.inv(v)).astype(dt),
    return gen


def SINGULAR(m, n, lo=1.0, hi=3.0):
    """u diag(s) vh with singular values spread in [lo, hi]."""
    def gen(rng, dtype):
        dt = np.dtype(dtype)
        k = min(m, n)
        s = np.linspace(lo, hi, k) + rng.uniform(0, 0.05, k)
        u = _orth(rng, m, dt.kind == "c")[:, :k]
        vh = _orth(rng, n, dt.kind == "c")[:k]
        return ((u * s) @ vh).astype(dt),
    return gen


def COLUMNS(m, n):
    """Columns with norms 1, 2, 4, ... in a random order: geqp3's pivots are
    decided by wide margins at every step."""
    def gen(rng, dtype):
        dt = np.dtype(dtype)
        q = _orth(rng, max(m, n), dt.kind == "c")[:m, :n]
        a = q + 0.1 * rng.standard_normal((m, n))
        return (a * 2.0 ** rng.permutation(n)).astype(dt),
    return gen


def _c(dtype):
    return np.result_type(dtype, np.complex64)


# --- schur, rsf2csf -----------------------------------------------------------

def _np_schur(a, output="real"):
    t, z = sla.schur(a, output=output)
    dt = _c(a.dtype) if output == "complex" else a.dtype
    return t.astype(dt), z.astype(dt)


op("linalg_schur", lambda a: tuple(lla.schur(a)), _np_schur, GENERAL(4),
   lambda a: tuple(_jlla().schur(a)), diff=False, rtol=1e-12)
op("c_linalg_schur", lambda a: tuple(lla.schur(a)), _np_schur, GENERAL(4), lambda a: tuple(_jlla().schur(a)),
   diff=False, dtypes=C, rtol=1e-12)
op("linalg_schur_form_only", lambda a: lla.schur(a, compute_schur_vectors=False)[0],
   lambda a: sla.schur(a)[0].astype(a.dtype), GENERAL(5),
   lambda a: _jlla().schur(a, compute_schur_vectors=False)[0], diff=False, rtol=1e-12)
op("c_scipy_linalg_schur_complex", lambda a: fsl.schur(a, output="complex"),
   lambda a: _np_schur(a, "complex"), GENERAL(4, real_input=True),
   lambda a: tuple(_jsl().schur(a, output="complex")), diff=False, dtypes=C, rtol=1e-12)


def _np_rsf2csf(a):
    t, z = sla.rsf2csf(*sla.schur(a))
    return t.astype(_c(a.dtype)), z.astype(_c(a.dtype))


op("c_scipy_linalg_rsf2csf", lambda a: fsl.rsf2csf(*fsl.schur(a)), _np_rsf2csf, GENERAL(5, real_input=True),
   lambda a: tuple(_jsl().rsf2csf(*_jsl().schur(a))), diff=False, dtypes=C, rtol=1e-11)

# --- sqrtm, funm ---------------------------------------------------------------

op("c_scipy_linalg_sqrtm", fsl.sqrtm, lambda a: sla.sqrtm(a).astype(_c(a.dtype)),
   POSITIVE_SPECTRUM(4, real_input=True), lambda a: _jsl().sqrtm(a), diff=False, dtypes=C, rtol=1e-11)
op("c_scipy_linalg_sqrtm_complex", fsl.sqrtm, lambda a: sla.sqrtm(a).astype(a.dtype),
   POSITIVE_SPECTRUM(4), lambda a: _jsl().sqrtm(a), diff=False, dtypes=C, rtol=1e-11)


def _fsin(x):
    import funcad.numpy as fnp
    return fnp.sin(x)


def _jsin(x):
    import jax.numpy as jnp
    return jnp.sin(x)


op("c_scipy_linalg_funm", lambda a: fsl.funm(a, _fsin), lambda a: sla.funm(a, np.sin).astype(_c(a.dtype)),
   POSITIVE_SPECTRUM(4, real_input=True), lambda a: _jsl().funm(a, _jsin), diff=False, dtypes=C, rtol=1e-10)

# --- polar, qdwh ----------------------------------------------------------------
# JAX's QDWH runs a while_loop, which JAX cannot reverse-differentiate; the
# oracle is JAX's SVD-based polar, the same factors (to rounding) with
# derivatives. funcad differentiates its QDWH through the loops.

def _jpolar(a, side="right"):
    return _jsl().polar(a, side, method="svd")


op("scipy_linalg_polar", fsl.polar, lambda a: sla.polar(a), SINGULAR(4, 4), _jpolar, rtol=1e-11)
op("scipy_linalg_polar_tall", fsl.polar, lambda a: sla.polar(a), SINGULAR(5, 3), _jpolar, rtol=1e-11)
op("scipy_linalg_polar_wide_left", lambda a: fsl.polar(a, "left"), lambda a: sla.polar(a, "left"),
   SINGULAR(3, 4), lambda a: _jpolar(a, "left"), rtol=1e-11)
op("scipy_linalg_polar_left_svd", lambda a: fsl.polar(a, "left", method="svd"), lambda a: sla.polar(a, "left"),
   SINGULAR(3, 5), lambda a: _jsl().polar(a, "left", method="svd"), rtol=1e-11)
op("c_scipy_linalg_polar", fsl.polar, lambda a: sla.polar(a), SINGULAR(4, 3), _jpolar, dtypes=C, rtol=1e-11)
op("linalg_qdwh", lambda a: lla.qdwh(a)[:2], lambda a: sla.polar(a), SINGULAR(4, 3), _jpolar, rtol=1e-11)

# --- complex expm, expm_frechet ----------------------------------------------------

op("c_scipy_linalg_expm", fsl.expm, sla.expm, GENERAL(3), lambda a: _jsl().expm(a), dtypes=C, rtol=1e-11)


def _frechet_args(rng, dtype):
    (a,), (e,) = GENERAL(3)(rng, dtype), GENERAL(3)(rng, dtype)
    return (0.3 * a).astype(dtype), e


op("scipy_linalg_expm_frechet", lambda a, e: fsl.expm_frechet(a, e, compute_expm=False),
   lambda a, e: sla.expm_frechet(a, e, compute_expm=False).astype(a.dtype), _frechet_args,
   lambda a, e: _jsl().expm_frechet(a, e, compute_expm=False), rtol=1e-11)
op("c_scipy_linalg_expm_frechet", lambda a, e: fsl.expm_frechet(a, e),
   lambda a, e: tuple(x.astype(a.dtype) for x in sla.expm_frechet(a, e)), _frechet_args,
   lambda a, e: _jsl().expm_frechet(a, e), dtypes=C, rtol=1e-11)

# --- pivoted QR ----------------------------------------------------------------------

# JAX's pivoted-QR jvp of a wide matrix uses the unpermuted trailing columns
# (x2 of x, not of x[:, p]), so its gradient there is not the derivative
# (finite differences agree with funcad's). The oracle for that row is JAX's
# QR of the permuted columns, the pivots held fixed: the same values.

def _jqr_permuted(a, mode):
    import jax
    p = _jsl().qr(jax.lax.stop_gradient(a), mode=mode, pivoting=True)[2]
    return _jsl().qr(a[:, p], mode=mode)


for _name, (_m, _n), _mode in (("", (4, 4), "full"), ("_tall_economic", (5, 3), "economic"),
                                ("_wide", (3, 5), "full")):
    _jfun = (lambda a, mode=_mode: _jqr_permuted(a, mode)) if _m < _n else \
        (lambda a, mode=_mode: _jsl().qr(a, mode=mode, pivoting=True)[:2])
    op(f"scipy_linalg_qr_pivoting{_name}", lambda a, mode=_mode: fsl.qr(a, mode=mode, pivoting=True)[:2],
       lambda a, mode=_mode: sla.qr(a, mode=mode, pivoting=True)[:2], COLUMNS(_m, _n), _jfun, rtol=1e-11)
# (economic: jax 0.6 cannot differentiate the full QR of a tall matrix)
op("c_linalg_qr_pivoting", lambda a: lla.qr(a, pivoting=True, full_matrices=False)[:2],
   lambda a: tuple(sla.qr(a, mode="economic", pivoting=True)[:2]), COLUMNS(4, 3),
   lambda a: _jlla().qr(a, pivoting=True, full_matrices=False)[:2], dtypes=C, rtol=1e-11)

# --- special matrices (gathers and elementwise ops: differentiable, batched) ----------

from tests.op_table import AWAY, U  # noqa: E402

op("scipy_linalg_toeplitz", fsl.toeplitz, sla.toeplitz, U((4,), (3,)), lambda c, r: _jsl().toeplitz(c, r))
op("scipy_linalg_hankel", fsl.hankel, sla.hankel, U((3,), (4,)), lambda c, r: _jsl().hankel(c, r))
op("scipy_linalg_circulant", fsl.circulant, sla.circulant, U((4,)), lambda c: _jsl().circulant(c))
op("scipy_linalg_leslie", fsl.leslie, sla.leslie, U((4,), (3,)), lambda f, s: _jsl().leslie(f, s))
op("scipy_linalg_companion", fsl.companion, sla.companion, AWAY((4,), lo=0.5),
   lambda a: _jsl().companion(a))
op("scipy_linalg_fiedler_companion", fsl.fiedler_companion, sla.fiedler_companion, AWAY((5,), lo=0.5),
   lambda a: _jsl().fiedler_companion(a))
op("scipy_linalg_convolution_matrix", lambda a: fsl.convolution_matrix(a, 4, "same"),
   lambda a: sla.convolution_matrix(a, 4, "same"), U((3,)), lambda a: _jsl().convolution_matrix(a, 4, "same"))

# --- hessenberg (gehrd; not differentiable, as in JAX) ----------------------------------


def _np_hessenberg(a):
    h, q = sla.hessenberg(a, calc_q=True)
    return h.astype(a.dtype), q.astype(a.dtype)


op("scipy_linalg_hessenberg", lambda a: fsl.hessenberg(a, calc_q=True), _np_hessenberg, GENERAL(5),
   lambda a: _jsl().hessenberg(a, calc_q=True), diff=False, rtol=1e-11)
op("c_scipy_linalg_hessenberg", lambda a: fsl.hessenberg(a, calc_q=True), _np_hessenberg, GENERAL(4),
   lambda a: _jsl().hessenberg(a, calc_q=True), diff=False, dtypes=C, rtol=1e-11)

# --- solve_sylvester (Bartels-Stewart on the Schur forms; not differentiable) ----------


def _sylvester_args(rng, dtype):
    (a,), (b,) = GENERAL(4)(rng, dtype), GENERAL(3)(rng, dtype)
    (c,) = U((4, 3))(rng, _real_of(dtype))
    return a + 2 * np.eye(4, dtype=dtype), b + 2 * np.eye(3, dtype=dtype), c.astype(dtype)


op("scipy_linalg_solve_sylvester", fsl.solve_sylvester,
   lambda a, b, c: sla.solve_sylvester(a, b, c).astype(a.dtype), _sylvester_args,
   lambda a, b, c: _jsl().solve_sylvester(a, b, c), diff=False, rtol=1e-11)
op("c_scipy_linalg_solve_sylvester_eigen", lambda a, b, c: fsl.solve_sylvester(a, b, c, method="eigen"),
   lambda a, b, c: sla.solve_sylvester(a, b, c).astype(a.dtype), _sylvester_args,
   lambda a, b, c: _jsl().solve_sylvester(a, b, c, method="eigen"), diff=False, dtypes=C, rtol=1e-10)

# --- eigh_tridiagonal (the symmetric eigensolver on the assembled matrix) ---------------

def _jnp_eigvalsh_tridiagonal(d, e):
    import jax.numpy as jnp
    return jnp.linalg.eigvalsh(jnp.diag(d) + jnp.diag(e, 1) + jnp.diag(e, -1))


op("scipy_linalg_eigh_tridiagonal", lambda d, e: fsl.eigh_tridiagonal(d, e, eigvals_only=True),
   lambda d, e: sla.eigh_tridiagonal(d, e, eigvals_only=True).astype(d.dtype),
   lambda rng, dtype: ((2.0 * np.arange(5) + rng.uniform(0, 0.3, 5)).astype(dtype),
                       rng.uniform(0.2, 0.6, 4).astype(dtype)),
   # (JAX's bisection is a while_loop it cannot reverse-differentiate: its
   # eigvalsh of the assembled matrix is the oracle, the same values)
   lambda d, e: _jnp_eigvalsh_tridiagonal(d, e), rtol=1e-11)

# --- tridiagonal_solve (gtsv; linear in b, differentiable in the diagonals) --------------


def _tridiagonal_args(rng, dtype):
    dt = np.dtype(dtype)
    dl, du = (rng.uniform(-1, 1, 4).astype(dt) for _ in range(2))
    d = (rng.uniform(3, 4, 4) * rng.choice([-1.0, 1.0], 4)).astype(dt)
    dl[0], du[-1] = 0, 0
    return dl, d, du, rng.uniform(-2, 2, (4, 2)).astype(dt)


def _np_tridiagonal_solve(dl, d, du, b):
    a = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    return np.linalg.solve(a, b).astype(b.dtype)


op("linalg_tridiagonal_solve", lla.tridiagonal_solve, _np_tridiagonal_solve, _tridiagonal_args,
   lambda dl, d, du, b: _jlla().tridiagonal_solve(dl, d, du, b), rtol=1e-11)
op("c_linalg_tridiagonal_solve", lla.tridiagonal_solve, _np_tridiagonal_solve,
   lambda rng, dtype: tuple(x + 1j * (0.3 * x) for x in _tridiagonal_args(rng, _real_of(dtype))),
   lambda dl, d, du, b: _jlla().tridiagonal_solve(dl, d, du, b), dtypes=C, rtol=1e-11)

# --- symmetric_product, cholesky_update, ormqr, qr_multiply (compositions) ---------------
# JAX defines no derivative for cholesky_update or ormqr, so their rows have no
# JAX oracle (tests/linalg/test_linalg_schur.py compares their values with JAX's);
# funcad's are compositions, differentiable. qr_multiply factors a with geqrf
# (no derivative, as in JAX).


def _np_cholesky_update(r, w):
    return np.linalg.cholesky(r.T @ r + np.outer(w, w)).T.astype(r.dtype)


def _chol_update_args(rng, dtype):
    x = rng.standard_normal((4, 8))
    r = np.linalg.cholesky(x @ x.T / 8 + np.eye(4)).T
    return r.astype(dtype), rng.uniform(0.3, 1.0, 4).astype(dtype)


op("linalg_symmetric_product", lambda a, c: lla.symmetric_product(a, c, alpha=2.0, beta=0.5),
   lambda a, c: 2.0 * a @ a.T + 0.5 * c, U((3, 4), (3, 3)),
   lambda a, c: 2.0 * a @ a.T + 0.5 * c)  # (JAX's symmetric_product has no derivative)
op("linalg_cholesky_update", lla.cholesky_update, _np_cholesky_update, _chol_update_args, rtol=1e-11)


def _ormqr_args(rng, dtype):
    (x,) = COLUMNS(5, 3)(rng, dtype)
    h, taus = sla.qr(x, mode="raw")[0]
    return h.astype(dtype), taus.astype(dtype), rng.uniform(-1, 1, (5, 2)).astype(dtype)


def _np_ormqr(h, taus, c):
    """Q c = H_0 (H_1 (... H_{k-1} c)), H_i = I - tau_i v_i v_i^H."""
    rows = np.arange(h.shape[0])[:, None]
    out = c.copy()
    for i in reversed(range(len(taus))):
        v = np.where(rows > i, h[:, i:i + 1], 0) + (rows == i)
        out = out - taus[i] * v @ (v.conj().T @ out)
    return out.astype(c.dtype)


op("linalg_ormqr", lla.ormqr, _np_ormqr, _ormqr_args, rtol=1e-11)
op("scipy_linalg_qr_multiply", lambda a, c: fsl.qr_multiply(a, c), lambda a, c: sla.qr_multiply(a, c),
   lambda rng, dtype: COLUMNS(4, 3)(rng, dtype) + U((2, 4))(rng, dtype),
   lambda a, c: _jsl().qr_multiply(a, c), diff=False, rtol=1e-11)
op("c_scipy_linalg_qr_multiply_left", lambda a, c: fsl.qr_multiply(a, c, "left", conjugate=True),
   lambda a, c: sla.qr_multiply(a, c, "left", conjugate=True),
   lambda rng, dtype: COLUMNS(4, 3)(rng, dtype) + (rng.uniform(-1, 1, (3, 2)).astype(dtype),),
   lambda a, c: _jsl().qr_multiply(a, c, "left", conjugate=True), diff=False, dtypes=C, rtol=1e-11)

# --- tridiagonal (sytrd/hetrd; not differentiable, as in JAX) ----------------------------

op("linalg_tridiagonal", lambda a: lla.tridiagonal(a)[1:3],
   lambda a: tuple(x.astype(np.finfo(a.dtype).dtype) for x in sla.lapack.get_lapack_funcs(
       "hetrd" if a.dtype.kind == "c" else "sytrd", dtype=a.dtype)(a, lower=1)[1:3]),
   GENERAL(4), lambda a: _jlla().tridiagonal(a)[1:3], diff=False, dtypes=F + C, rtol=1e-11)
