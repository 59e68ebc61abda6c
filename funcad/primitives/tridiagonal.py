"""tridiagonal_solve: A X = B for a stack of tridiagonal A, as
lax.linalg.tridiagonal_solve; and tridiagonal, the reduction of a Hermitian
matrix to tridiagonal form (LAPACK's sytrd/hetrd), as lax.linalg.tridiagonal.

A is given by its three diagonals, each [..., m] (JAX's layout): dl[i] =
A[i, i-1] (dl[0] unused), d[i] = A[i, i], du[i] = A[i, i+1] (du[m-1]
unused); B is [..., m, n]. The impl and the lowering run LAPACK's gtsv (LU
with partial pivoting; SciPy's eagerly, jaxlib's `lapack_?gtsv_ffi` kernel
under jit, CPU only). A singular system gives NaNs. Linear in B (its
transpose solves with the transposed matrix); the jvp in the diagonals is
that of a solve, -A^-1 dA X (JAX's rules).
"""
from __future__ import annotations

import inspect

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadTypeError, MissingRuleError
from ..core.trace import batch_rules, jvp_rules, lowering_rules, transpose_rules, sharding_rules
from ..core.typed_sharding import linalg_rule
from ..lowering import lapack
from . import elementwise as E
from ._base import weak_if_all_operands_weak, check_eagerly, defpython, dtype_of, is_undefined, new_primitive, shape_of, zeros_tangent
from .decompositions import _INEXACT, _NAN, _lapack, _nan_if_failed
from ._gtsv_perturbed import gtsv_perturbed
from .callback import _lower as _lower_callback
from .structural import moveaxis0, pad, reshape, slice as _slice

_PERTURBED = "tridiagonal_solve_perturbed_ffi"  # jaxlib's CPU kernel, jaxlib >= 0.7


def _aval(dl, d, du, b, *, perturb_singular=False):
    ok = (dl.shape == d.shape == du.shape and len(b.shape) >= 2 and b.shape[:-1] == d.shape
          and dl.dtype == d.dtype == du.dtype == b.dtype and b.dtype in _INEXACT)
    if not ok:
        raise FuncadTypeError(
            f"tridiagonal_solve got {dl.str_short()}, {d.str_short()}, {du.str_short()}, {b.str_short()}: "
            "it takes three diagonals [..., m] and right-hand sides b [..., m, n], all of one float32, "
            "float64, complex64 or complex128 dtype (b with a trailing axis; use b[..., None] for a vector)")
    return ShapedArray(b.shape, b.dtype)


def _impl(dl, d, du, b, *, perturb_singular=False):
    if perturb_singular:
        return gtsv_perturbed(dl, d, du, b)
    dl, d, du, b = (np.asarray(x) for x in (dl, d, du, b))
    out = np.empty_like(b)
    m = d.shape[-1]
    if m == 0 or b.shape[-1] == 0:
        return out
    gtsv = _lapack("gtsv", b.dtype)
    for idx in np.ndindex(d.shape[:-1]):
        *_, x, info = gtsv(dl[idx][1:], d[idx], du[idx][:-1], b[idx])
        out[idx] = x if info == 0 else _NAN[b.dtype.kind]
    return out


tridiagonal_solve_p = new_primitive("tridiagonal_solve", _impl, _aval)
weak_if_all_operands_weak(tridiagonal_solve_p)  # JAX's standard weak-type rule
sharding_rules[tridiagonal_solve_p] = linalg_rule("tridiagonal_solve", (1, 1, 1, 2), _aval)


def tridiagonal_solve(dl, d, du, b, perturb_singular: bool = False):
    """X with A X = b, A tridiagonal with diagonals (dl, d, du); with
    `perturb_singular`, tiny pivots are perturbed instead of giving NaNs."""
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


def _product(dl, d, du, x):
    """A X for the tridiagonal A of (dl, d, du): row i is dl[i] x[i-1] +
    d[i] x[i] + du[i] x[i+1]."""
    nd = len(shape_of(x))
    *batch, m, n = shape_of(x)
    batch = tuple(batch)
    col = lambda v: reshape(v, tuple(shape_of(v)) + (1,))  # noqa: E731
    zero = np.zeros((), dtype_of(x))
    out = E.mul(col(d), x)
    if m < 2:
        return out
    none, lead = [(0, 0, 0)] * (nd - 2), (0,) * (nd - 2)
    above = pad(_slice(x, lead + (0, 0), batch + (m - 1, n)), zero, none + [(1, 0, 0), (0, 0, 0)])
    below = pad(_slice(x, lead + (1, 0), batch + (m, n)), zero, none + [(0, 1, 0), (0, 0, 0)])
    return E.add(out, E.add(E.mul(col(dl), above), E.mul(col(du), below)))


def _jvp(primals, tangents, *, perturb_singular):
    dl, d, du, b = primals
    tdl, td, tdu, tb = tangents
    x = tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular)
    if tdl is None and td is None and tdu is None:
        rhs = tb
    else:
        z = [t if t is not None else zeros_tangent(p) for t, p in zip((tdl, td, tdu), (dl, d, du))]
        rhs = E.neg(_product(*z, x))
        rhs = rhs if tb is None else E.add(tb, rhs)
    return x, (None if rhs is None else
               tridiagonal_solve_p.bind(dl, d, du, rhs, perturb_singular=perturb_singular))


def _transpose(ct, dl, d, du, b, *, perturb_singular):
    if is_undefined(dl) or is_undefined(d) or is_undefined(du):
        raise MissingRuleError("tridiagonal_solve is linear in b only; its diagonals cannot be transposed")
    if ct is None:
        return [None, None, None, None]
    nd = len(shape_of(d))
    none = [(0, 0, 0)] * (nd - 1)
    zero = np.zeros((), dtype_of(d))
    m = shape_of(d)[-1]
    if m == 0:
        return [None, None, None, tridiagonal_solve_p.bind(dl, d, du, ct, perturb_singular=perturb_singular)]
    lead = (0,) * (nd - 1)
    batch = tuple(shape_of(d)[:-1])
    # A^T has subdiagonal du shifted down one and superdiagonal dl shifted up one.
    dl_t = pad(_slice(du, lead + (0,), batch + (m - 1,)), zero, none + [(1, 0, 0)])
    du_t = pad(_slice(dl, lead + (1,), batch + (m,)), zero, none + [(0, 1, 0)])
    return [None, None, None, tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


def _batch(vals, dims, *, axis_size, perturb_singular):
    return tridiagonal_solve_p.bind(*[moveaxis0(v, dd, axis_size) for v, dd in zip(vals, dims)],
                                    perturb_singular=perturb_singular), 0


def _lowering(ctx, dl, d, du, b, *, perturb_singular):
    if ctx.module.platform != "cpu":
        raise MissingRuleError(
            "tridiagonal_solve has no GPU lowering in funcad yet: only jaxlib's CPU LAPACK kernel "
            "(gtsv) is wired. Run this jitted function with backend='cpu', or call it without jit")
    if 0 in b.aval.shape[-2:]:
        return b
    if perturb_singular:
        if _PERTURBED in lapack.register_lapack():
            return lapack.ffi_call(ctx, _PERTURBED, [dl, d, du, b], [b.aval])[0]
        # jaxlib < 0.7 ships no such kernel: XLA calls back into the NumPy solve
        return _lower_callback(ctx, dl, d, du, b, callback=gtsv_perturbed,
                               result_avals=(b.aval,), vmap_method=None)[0]
    info = ShapedArray(b.aval.shape[:-2], np.int32)
    *_, x, info = lapack.ffi_call(ctx, lapack.lapack_target("gtsv", b.aval.dtype), [dl, d, du, b],
                                  [dl.aval, d.aval, du.aval, b.aval, info],
                                  aliases={0: 0, 1: 1, 2: 2, 3: 3})
    return _nan_if_failed(ctx, info, x)


jvp_rules[tridiagonal_solve_p] = _jvp
transpose_rules[tridiagonal_solve_p] = _transpose
batch_rules[tridiagonal_solve_p] = _batch
lowering_rules[tridiagonal_solve_p] = _lowering
_HELPER = '''def _tridiagonal_solve(dl, d, du, b):
    import scipy.linalg.lapack as sl
    out = np.empty_like(b)
    f = sl.get_lapack_funcs("gtsv", dtype=b.dtype)
    for i in np.ndindex(d.shape[:-1]):
        out[i] = f(dl[i][1:], d[i], du[i][:-1], b[i])[3]
    return out
'''
defpython(tridiagonal_solve_p, lambda eqn, a: (
    f"gtsv_perturbed({', '.join(a)})" if eqn.params["perturb_singular"]
    else f"_tridiagonal_solve({', '.join(a)})"), _HELPER + "\n\n" + inspect.getsource(gtsv_perturbed))

# ------------------------------------------------------------ tridiagonal ----
# [a, d, e, taus]: the tridiagonal T = Q^H A Q (diagonal d, off-diagonal e,
# both real) in a's diagonal and first sub- (lower) or super-diagonal, Q's
# Householder reflectors beyond it, their scalar factors in taus. Only the
# `lower` (or upper) triangle of the input is read. No derivative (as JAX).

_TRD = {"f": "sytrd", "c": "hetrd"}


def _trd_aval(x, *, lower):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.shape[-1] == 0 or x.dtype not in _INEXACT:
        raise FuncadTypeError(f"tridiagonal got {x.str_short()}: it takes a stack of non-empty square "
                              "float32, float64, complex64 or complex128 matrices [..., n, n]")
    real = np.finfo(x.dtype).dtype
    *b, n = x.shape[:-1]
    b = tuple(b)
    return [ShapedArray(x.shape, x.dtype), ShapedArray(b + (n,), real), ShapedArray(b + (n - 1,), real),
            ShapedArray(b + (n - 1,), x.dtype)]


def _trd_impl(x, *, lower):
    x = np.asarray(x)
    outs = [np.empty(a.shape, a.dtype) for a in _trd_aval(ShapedArray(x.shape, x.dtype), lower=lower)]
    trd = _lapack(_TRD[x.dtype.kind], x.dtype)
    for idx in np.ndindex(x.shape[:-2]):
        *vals, info = trd(x[idx], lower=int(lower))
        for o, v in zip(outs, vals):
            o[idx] = v if info == 0 else _NAN[o.dtype.kind]
    return outs


tridiagonal_p = new_primitive("tridiagonal", _trd_impl, _trd_aval, multiple_results=True)
weak_if_all_operands_weak(tridiagonal_p)  # JAX's standard weak-type rule
sharding_rules[tridiagonal_p] = linalg_rule("tridiagonal", (2,), _trd_aval)


def tridiagonal(x, lower: bool = True):
    """[a, d, e, taus]: LAPACK's sytrd/hetrd of each Hermitian matrix of x."""
    return tridiagonal_p.bind(x, lower=bool(lower))


def _trd_lowering(ctx, x, *, lower):
    if ctx.module.platform != "cpu":
        raise MissingRuleError(
            "tridiagonal has no GPU lowering in funcad yet: only jaxlib's CPU LAPACK kernel "
            "(sytrd/hetrd) is wired. Run this jitted function with backend='cpu', or call it without jit")
    info = ShapedArray(x.aval.shape[:-2], np.int32)
    *outs, info = lapack.ffi_call(ctx, lapack.lapack_target(_TRD[x.aval.dtype.kind], x.aval.dtype), [x],
                                  [*ctx.out_avals, info], attrs={"uplo": lapack.char("L" if lower else "U")},
                                  aliases={0: 0})
    return [_nan_if_failed(ctx, info, o) for o in outs]


def _trd_no_jvp(primals, tangents, **params):
    raise MissingRuleError("tridiagonal has no derivative: its Householder representation is not "
                           "differentiated (as in JAX); differentiate eigh or eigvalsh instead")


jvp_rules[tridiagonal_p] = _trd_no_jvp
batch_rules[tridiagonal_p] = lambda vals, dims, *, axis_size, lower: (
    tridiagonal_p.bind(moveaxis0(vals[0], dims[0], axis_size), lower=lower), [0, 0, 0, 0])
lowering_rules[tridiagonal_p] = _trd_lowering
_TRD_HELPER = '''def _tridiagonal(x, lower):
    import scipy.linalg.lapack as sl
    f = sl.get_lapack_funcs("hetrd" if x.dtype.kind == "c" else "sytrd", dtype=x.dtype)
    res = [f(x[i], lower=int(lower))[:4] for i in np.ndindex(x.shape[:-2])]
    return [np.array([r[k] for r in res]).reshape(x.shape[:-2] + res[0][k].shape) for k in range(4)]
'''
defpython(tridiagonal_p, "_tridiagonal({0}, {lower})", _TRD_HELPER)

check_eagerly(tridiagonal_solve_p, tridiagonal_p)
