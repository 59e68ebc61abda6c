"""Op-table rows of funcad.lax.linalg (cholesky, triangular_solve, lu), of
funcad.numpy.linalg's solves, determinants and products, and of
funcad.scipy.linalg's factor-and-solve functions and expm.

Inputs are well conditioned: general matrices are random plus a dominant
diagonal, SPD ones are B Bᵀ + n I. Rows that factor a symmetric matrix
without symmetrizing (SciPy's cholesky, cho_factor, solve(assume_a='pos'))
are given (a + aᵀ)/2, so finite differences in any direction agree.
"""
import numpy as np
import scipy.linalg as sla

import funcad.lax.linalg as lla
import funcad.numpy as fnp
import funcad.scipy.linalg as fsl
from tests.op_table import U, op

N = 3


def _jla():
    import jax.lax.linalg as jla
    return jla


def _jnl():
    import jax.numpy as jnp
    return jnp.linalg


def _jsl():
    import jax.scipy.linalg as jsl
    return jsl


def GEN(*shapes):
    """Well-conditioned square matrices (random, plus 3 on the diagonal); other
    shapes (right-hand sides, vectors) uniform."""
    def gen(rng, dtype):
        out = []
        for s in shapes:
            x = rng.uniform(-1, 1, s)
            if len(s) >= 2 and s[-1] == s[-2]:
                x = x + 3 * np.eye(s[-1])
            out.append(x.astype(dtype))
        return tuple(out)
    return gen


def SPD(*shapes):
    """Symmetric positive definite first argument; the others uniform."""
    def gen(rng, dtype):
        b = rng.uniform(-1, 1, shapes[0])
        a = b @ np.swapaxes(b, -1, -2) + shapes[0][-1] * np.eye(shapes[0][-1])
        return (a.astype(dtype),) + tuple(rng.uniform(-1, 1, s).astype(dtype) for s in shapes[1:])
    return gen


def _keep(f):
    """A SciPy reference whose float outputs keep the input's dtype (SciPy's det
    and others return float64 for float32 input)."""
    def ref(*a):
        out = f(*a)
        cast = lambda o: np.asarray(o).astype(a[0].dtype) if np.asarray(o).dtype.kind == "f" else o  # noqa: E731
        return tuple(cast(o) for o in out) if isinstance(out, tuple) else cast(out)
    return ref


def _sym(x):
    return (x + np.swapaxes(x, -1, -2)) / 2


def _fsym(x):
    return (x + fnp.swapaxes(x, -1, -2)) / 2


def _np_lu(x):
    lu, piv = sla.lu_factor(x)
    return lu


def _np_cholesky_sym(x):
    return np.linalg.cholesky(_sym(x))


M, V, RHS = (N, N), (N,), (N, 2)

# ---------------------------------------------------------------- lax.linalg ----
op("lax_linalg_cholesky", lla.cholesky, _np_cholesky_sym, SPD(M), lambda x: _jla().cholesky(x))
op("lax_linalg_triangular_solve_left_lower", lambda a, b: lla.triangular_solve(a, b, left_side=True, lower=True),
   lambda a, b: sla.solve_triangular(a, b, lower=True), GEN(M, RHS),
   lambda a, b: _jla().triangular_solve(a, b, left_side=True, lower=True))
op("lax_linalg_triangular_solve_right_upper_t",
   lambda a, b: lla.triangular_solve(a, b, left_side=False, lower=False, transpose_a=True),
   lambda a, b: sla.solve_triangular(a, b.T, lower=False, trans=0).T, GEN(M, (2, N)),
   lambda a, b: _jla().triangular_solve(a, b, left_side=False, lower=False, transpose_a=True))
op("lax_linalg_triangular_solve_unit", lambda a, b: lla.triangular_solve(
    a, b, left_side=True, lower=False, transpose_a=True, unit_diagonal=True),
   lambda a, b: sla.solve_triangular(a, b, lower=False, trans=1, unit_diagonal=True), GEN(M, RHS),
   lambda a, b: _jla().triangular_solve(a, b, left_side=True, lower=False, transpose_a=True,
                                        unit_diagonal=True))
op("lax_linalg_lu", lambda x: lla.lu(x)[0], _np_lu, GEN(M), lambda x: _jla().lu(x)[0])
op("lax_linalg_lu_wide", lambda x: lla.lu(x)[0], _np_lu, U((2, 4)), lambda x: _jla().lu(x)[0])
def _np_perm(x):
    piv = sla.lu_factor(x)[1]
    perm = np.arange(len(x), dtype=np.int32)
    for i, j in enumerate(piv):
        perm[i], perm[j] = perm[j], perm[i]
    return piv.astype(np.int32), perm


op("lax_linalg_lu_pivots", lambda x: lla.lu(x)[1:], _np_perm, U(M), lambda x: _jla().lu(x)[1:], diff=False)


# -------------------------------------------------------------- numpy.linalg ----
op("linalg_solve", fnp.linalg.solve, np.linalg.solve, GEN(M, RHS), lambda a, b: _jnl().solve(a, b))
op("linalg_solve_vector", fnp.linalg.solve, np.linalg.solve, GEN(M, V), lambda a, b: _jnl().solve(a, b))
op("linalg_inv", fnp.linalg.inv, np.linalg.inv, GEN(M), lambda a: _jnl().inv(a))
op("linalg_det", fnp.linalg.det, np.linalg.det, GEN(M), lambda a: _jnl().det(a))
op("linalg_det_stack", fnp.linalg.det, np.linalg.det, GEN((2, N, N)), lambda a: _jnl().det(a))
op("linalg_slogdet", lambda a: fnp.linalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1], GEN(M),
   lambda a: _jnl().slogdet(a)[1])
op("linalg_slogdet_both", lambda a: tuple(fnp.linalg.slogdet(a)), lambda a: tuple(np.linalg.slogdet(a)),
   GEN(M), lambda a: tuple(_jnl().slogdet(a)), diff=False)
op("linalg_cholesky", fnp.linalg.cholesky, _np_cholesky_sym, SPD(M), lambda a: _jnl().cholesky(a))
op("linalg_cholesky_upper", lambda a: fnp.linalg.cholesky(a, upper=True),
   lambda a: np.linalg.cholesky(_sym(a), upper=True), SPD(M), lambda a: _jnl().cholesky(a, upper=True))
op("linalg_matrix_power3", lambda a: fnp.linalg.matrix_power(a, 3), lambda a: np.linalg.matrix_power(a, 3),
   U(M, lo=-1, hi=1), lambda a: _jnl().matrix_power(a, 3))
op("linalg_matrix_power_neg2", lambda a: fnp.linalg.matrix_power(a, -2),
   lambda a: np.linalg.matrix_power(a, -2), GEN(M), lambda a: _jnl().matrix_power(a, -2))
op("linalg_multi_dot", lambda a, b, c, d: fnp.linalg.multi_dot([a, b, c, d]),
   lambda a, b, c, d: np.linalg.multi_dot([a, b, c, d]), U((3,), (3, 4), (4, 2), (2,)),
   lambda a, b, c, d: _jnl().multi_dot([a, b, c, d]))
op("linalg_tensorsolve", fnp.linalg.tensorsolve, np.linalg.tensorsolve,
   lambda rng, dt: (GEN((4, 4))(rng, dt)[0].reshape(2, 2, 2, 2), rng.uniform(-1, 1, (2, 2)).astype(dt)),
   lambda a, b: _jnl().tensorsolve(a, b))
op("linalg_tensorinv", lambda a: fnp.linalg.tensorinv(a, ind=1), lambda a: np.linalg.tensorinv(a, ind=1),
   lambda rng, dt: (GEN((4, 4))(rng, dt)[0].reshape(4, 2, 2),), lambda a: _jnl().tensorinv(a, ind=1))
op("linalg_cross", fnp.linalg.cross, np.linalg.cross, U((2, 3), (2, 3)), lambda a, b: _jnl().cross(a, b))
op("linalg_outer", fnp.linalg.outer, np.linalg.outer, U((3,), (2,)), lambda a, b: _jnl().outer(a, b))
op("linalg_trace", lambda a: fnp.linalg.trace(a, offset=1), lambda a: np.linalg.trace(a, offset=1),
   U((2, 3, 4)), lambda a: _jnl().trace(a, offset=1))
op("linalg_diagonal", lambda a: fnp.linalg.diagonal(a, offset=-1), lambda a: np.linalg.diagonal(a, offset=-1),
   U((2, 3, 4)), lambda a: _jnl().diagonal(a, offset=-1))
op("linalg_matrix_transpose", fnp.linalg.matrix_transpose, np.linalg.matrix_transpose, U((2, 3, 4)),
   lambda a: _jnl().matrix_transpose(a))
op("linalg_vecdot", fnp.linalg.vecdot, np.linalg.vecdot, U((2, 3), (3,)), lambda a, b: _jnl().vecdot(a, b))

# -------------------------------------------------------------- scipy.linalg ----
op("scipy_linalg_solve_triangular", lambda a, b: fsl.solve_triangular(a, b, lower=True),
   _keep(lambda a, b: sla.solve_triangular(a, b, lower=True)), GEN(M, RHS),
   lambda a, b: _jsl().solve_triangular(a, b, lower=True))
op("scipy_linalg_solve_triangular_t_vec", lambda a, b: fsl.solve_triangular(a, b, trans="T"),
   _keep(lambda a, b: sla.solve_triangular(a, b, trans="T")), GEN(M, V),
   lambda a, b: _jsl().solve_triangular(a, b, trans="T"))
op("scipy_linalg_cholesky", lambda a: fsl.cholesky(_fsym(a)), lambda a: sla.cholesky(_sym(a)), SPD(M),
   lambda a: _jsl().cholesky(_sym_j(a)))
op("scipy_linalg_cho_solve", lambda a, b: fsl.cho_solve(fsl.cho_factor(_fsym(a), lower=True), b),
   _keep(lambda a, b: sla.cho_solve(sla.cho_factor(_sym(a), lower=True), b)), SPD(M, RHS),
   lambda a, b: _jsl().cho_solve(_jsl().cho_factor(_sym_j(a), lower=True), b))
op("scipy_linalg_lu", lambda a: fsl.lu(a)[1:], lambda a: sla.lu(a)[1:], GEN(M), lambda a: _jsl().lu(a)[1:])
op("scipy_linalg_lu_p", lambda a: fsl.lu(a)[0], lambda a: sla.lu(a)[0], GEN(M), lambda a: _jsl().lu(a)[0],
   diff=False)
op("scipy_linalg_lu_factor", lambda a: fsl.lu_factor(a)[0], lambda a: sla.lu_factor(a)[0], GEN(M),
   lambda a: _jsl().lu_factor(a)[0])
op("scipy_linalg_lu_solve", lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b),
   _keep(lambda a, b: sla.lu_solve(sla.lu_factor(a), b)), GEN(M, RHS),
   lambda a, b: _jsl().lu_solve(_jsl().lu_factor(a), b))
op("scipy_linalg_lu_solve_t", lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b, trans=1),
   _keep(lambda a, b: sla.lu_solve(sla.lu_factor(a), b, trans=1)), GEN(M, V),
   lambda a, b: _jsl().lu_solve(_jsl().lu_factor(a), b, trans=1))
op("scipy_linalg_det", fsl.det, _keep(sla.det), GEN(M), lambda a: _jsl().det(a))
op("scipy_linalg_inv", fsl.inv, _keep(sla.inv), GEN(M), lambda a: _jsl().inv(a))
op("scipy_linalg_solve_pos", lambda a, b: fsl.solve(_fsym(a), b, assume_a="pos"),
   _keep(lambda a, b: sla.solve(_sym(a), b, assume_a="pos")), SPD(M, RHS),
   lambda a, b: _jsl().solve(_sym_j(a), b, assume_a="pos"))
op("scipy_linalg_block_diag", lambda a, b, c: fsl.block_diag(a, b, c), lambda a, b, c: sla.block_diag(a, b, c),
   U((2, 2), (3,), (1, 2)), lambda a, b, c: _jsl().block_diag(a, b, c))
op("scipy_linalg_expm", fsl.expm, _keep(sla.expm), U(M, lo=-1, hi=1), lambda a: _jsl().expm(a), rtol=1e-12)
op("scipy_linalg_expm_large", fsl.expm, _keep(sla.expm), U(M, lo=-3, hi=3), lambda a: _jsl().expm(a), rtol=1e-12)


def _sym_j(x):
    import jax.numpy as jnp
    return (x + jnp.swapaxes(x, -1, -2)) / 2
