"""The Schur decomposition (schur, as lax.linalg.schur), the column-pivoted
QR factorization (geqp3, behind qr(pivoting=True)) and the Hessenberg
reduction (hessenberg, as lax.linalg.hessenberg).

`schur(x)` of a stack of square float or complex matrices returns the Schur
form T and, when asked, the Schur vectors Q with x = Q T Q^H: T is upper
triangular for complex input and quasi upper triangular (2x2 blocks for
complex-conjugate eigenvalue pairs) for real input. The impl and the lowering
run the same LAPACK routine (gees; SciPy's eagerly, jaxlib's
`lapack_?gees_ffi` kernel under jit), so the two agree on the (non-unique)
form. A matrix whose gees fails gives NaNs, as in JAX. JAX defines no
derivative for it, nor for geqp3; both raise a clear error under jvp/grad.

`geqp3(x)` is LAPACK's column-pivoted Householder QR, every column free to
pivot: [a, pivots, taus] with R in a's upper triangle, the reflectors below,
and 0-based `pivots` with x[..., :, pivots] = Q R.

`hessenberg(x)` is LAPACK's gehrd: [a, taus], the upper Hessenberg form H in
a's upper triangle and first subdiagonal, the Householder vectors of Q (x = Q
H Q^H) below, as `householder_product(a[..., 1:, :-1], taus)` reads them. No
derivative (as in JAX).
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadTypeError, MissingRuleError
from ..core.trace import jvp_rules, lowering_rules, sharding_rules
from ..core.typed_sharding import linalg_rule
from ..lowering import lapack
from ..lowering.stablehlo import binary
from ._base import weak_if_all_operands_weak, check_eagerly, defpython, new_primitive
from .decompositions import _INEXACT, _NAN, _batch_rule, _lapack, _nan_if_failed, _no_derivative


def _cpu_only(ctx, name):
    if ctx.module.platform != "cpu":
        raise MissingRuleError(
            f"{name} has no GPU lowering in funcad: XLA has no native {name} and only jaxlib's CPU "
            "LAPACK kernel is wired (JAX's is CPU-only too). Run this jitted function with "
            "backend='cpu', or call it without jit")


# ------------------------------------------------------------------ schur ----

def _schur_aval(x, *, compute_schur_vectors):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.dtype not in _INEXACT:
        raise FuncadTypeError(f"schur got {x.str_short()}: it takes a stack of square float32, "
                              "float64, complex64 or complex128 matrices [..., n, n]; convert with "
                              ".astype(np.float64) or pass a square matrix")
    out = ShapedArray(x.shape, x.dtype)
    return [out, out] if compute_schur_vectors else [out]


def _no_select(*args):
    return 0


def _schur_impl(x, *, compute_schur_vectors):
    x = np.asarray(x)
    t, q = np.empty_like(x), np.empty_like(x)
    if x.shape[-1]:
        gees = _lapack("gees", x.dtype)
        for idx in np.ndindex(x.shape[:-2]):
            res = gees(_no_select, x[idx], compute_v=int(compute_schur_vectors), sort_t=0)
            ok = res[-1] == 0
            t[idx] = res[0] if ok else _NAN[x.dtype.kind]
            if compute_schur_vectors:
                q[idx] = res[-3] if ok else _NAN[x.dtype.kind]
    return [t, q] if compute_schur_vectors else [t]


schur_p = new_primitive("schur", _schur_impl, _schur_aval, multiple_results=True)
weak_if_all_operands_weak(schur_p)  # JAX's standard weak-type rule
sharding_rules[schur_p] = linalg_rule("schur", (2,), _schur_aval)


def schur(x, compute_schur_vectors: bool = True):
    """[T, Q] (or [T]): the Schur form and vectors of each square matrix of x."""
    return schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors))


def _schur_lowering(ctx, x, *, compute_schur_vectors):
    _cpu_only(ctx, "schur")
    aval = x.aval
    batch = aval.shape[:-2]
    if aval.shape[-1] == 0:
        return [x] * (2 if compute_schur_vectors else 1)
    w = ShapedArray(aval.shape[:-1], aval.dtype)
    info = ShapedArray(batch, np.int32)
    ws = [w, w] if aval.dtype.kind == "f" else [w]
    # Results: T, Q, the eigenvalues (real and imaginary parts for real input),
    # the number of selected eigenvalues (none: no sorting) and LAPACK's info.
    t, q, *_, info = lapack.ffi_call(
        ctx, lapack.lapack_target("gees", aval.dtype), [x], [aval, aval, *ws, info, info],
        attrs={"mode": lapack.char("V" if compute_schur_vectors else "N"),
               "sort": lapack.char("N")}, aliases={0: 0})
    outs = [t, q] if compute_schur_vectors else [t]
    return [_nan_if_failed(ctx, info, o) for o in outs]


jvp_rules[schur_p] = _no_derivative(
    "schur", "the Schur form is not unique, and JAX defines no derivative for it either; "
    "differentiate a function of the matrix that does not depend on the Schur basis "
    "(eigvals, expm, ...)")
_batch_rule(schur_p)
lowering_rules[schur_p] = _schur_lowering
_SCHUR_HELPER = '''def _schur(x, vectors):
    import scipy.linalg
    t, q = np.empty_like(x), np.empty_like(x)
    for i in np.ndindex(x.shape[:-2]):
        t[i], q[i] = scipy.linalg.schur(x[i])
    return [t, q] if vectors else [t]
'''
defpython(schur_p, "_schur({0}, {compute_schur_vectors})", _SCHUR_HELPER)

# ------------------------------------------------------------------ geqp3 ----


def _geqp3_aval(x):
    if x.ndim < 2 or x.dtype not in _INEXACT:
        raise FuncadTypeError(f"geqp3 got {x.str_short()}: it takes a stack of float32, float64, "
                              "complex64 or complex128 matrices [..., m, n]; convert with "
                              ".astype(np.float64)")
    *b, m, n = x.shape
    b = tuple(b)
    return [ShapedArray(x.shape, x.dtype), ShapedArray(b + (n,), np.int32),
            ShapedArray(b + (min(m, n),), x.dtype)]


def _geqp3_impl(x):
    x = np.asarray(x)
    *b, m, n = x.shape
    b = tuple(b)
    a, piv, taus = np.empty_like(x), np.zeros(b + (n,), np.int32), np.zeros(b + (min(m, n),), x.dtype)
    if m == 0 or n == 0:
        a[...] = x
        piv[...] = np.arange(n, dtype=np.int32)
        return [a, piv, taus]
    geqp3_ = _lapack("geqp3", x.dtype)
    for idx in np.ndindex(b):
        h, jpvt, tau, _, info = geqp3_(x[idx])
        a[idx], piv[idx], taus[idx] = h, jpvt - 1, tau  # LAPACK's pivots are 1-based
    return [a, piv, taus]


geqp3_p = new_primitive("geqp3", _geqp3_impl, _geqp3_aval, multiple_results=True)
weak_if_all_operands_weak(geqp3_p)  # JAX's standard weak-type rule
sharding_rules[geqp3_p] = linalg_rule("geqp3", (2,), _geqp3_aval)


def geqp3(x):
    """LAPACK's geqp3: [a, pivots, taus], x[..., :, pivots] = Q R (0-based pivots)."""
    return geqp3_p.bind(x)


def _geqp3_lowering(ctx, x):
    _cpu_only(ctx, "geqp3 (qr with pivoting=True)")
    a_aval, p_aval, t_aval = ctx.out_avals
    *_, m, n = x.aval.shape
    if m == 0 or n == 0:
        iota = ctx.op1("stablehlo.iota", [], p_aval, f"iota_dimension = {len(p_aval.shape) - 1} : i64")
        return [x, iota, ctx.full(0, t_aval.dtype, t_aval.shape)]
    jpvt = ctx.full(0, np.int32, p_aval.shape)  # all columns free
    a, piv, taus = lapack.ffi_call(ctx, lapack.lapack_target("geqp3", x.aval.dtype), [x, jpvt],
                                   [a_aval, p_aval, t_aval], aliases={0: 0, 1: 1})
    return [a, binary(ctx, "stablehlo.subtract", piv, ctx.full(1, np.int32, p_aval.shape)), taus]


jvp_rules[geqp3_p] = _no_derivative("geqp3", "its Householder representation is not differentiated "
                                    "(as in JAX); differentiate qr(a, pivoting=True) instead")
_batch_rule(geqp3_p)
lowering_rules[geqp3_p] = _geqp3_lowering
_GEQP3_HELPER = '''def _geqp3(x):
    import scipy.linalg.lapack as sl
    *b, m, n = x.shape
    a, piv = np.empty_like(x), np.zeros((*b, n), np.int32)
    taus = np.zeros((*b, min(m, n)), x.dtype)
    f = sl.get_lapack_funcs("geqp3", dtype=x.dtype)
    for i in np.ndindex(tuple(b)):
        a[i], p, taus[i] = f(x[i])[:3]
        piv[i] = p - 1
    return [a, piv, taus]
'''
defpython(geqp3_p, "_geqp3({0})", _GEQP3_HELPER)

# ------------------------------------------------------------- hessenberg ----


def _hessenberg_aval(x):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.dtype not in _INEXACT:
        raise FuncadTypeError(f"hessenberg got {x.str_short()}: it takes a stack of square float32, "
                              "float64, complex64 or complex128 matrices [..., n, n]; convert with "
                              ".astype(np.float64) or pass a square matrix")
    return [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape[:-1][:-1] + (max(x.shape[-1] - 1, 0),), x.dtype)]


def _hessenberg_impl(x):
    x = np.asarray(x)
    n = x.shape[-1]
    a, taus = np.empty_like(x), np.zeros(x.shape[:-2] + (max(n - 1, 0),), x.dtype)
    if n == 0:
        return [a, taus]
    gehrd = _lapack("gehrd", x.dtype)
    for idx in np.ndindex(x.shape[:-2]):
        h, tau, info = gehrd(x[idx])
        ok = info == 0
        a[idx] = h if ok else _NAN[x.dtype.kind]
        taus[idx] = tau[:n - 1] if ok else _NAN[x.dtype.kind]
    return [a, taus]


hessenberg_p = new_primitive("hessenberg", _hessenberg_impl, _hessenberg_aval, multiple_results=True)
weak_if_all_operands_weak(hessenberg_p)  # JAX's standard weak-type rule
sharding_rules[hessenberg_p] = linalg_rule("hessenberg", (2,), _hessenberg_aval)


def hessenberg(x):
    """LAPACK's gehrd: [a, taus], H in a's upper Hessenberg part, Q's reflectors below."""
    return hessenberg_p.bind(x)


def _hessenberg_lowering(ctx, x):
    _cpu_only(ctx, "hessenberg")
    a_aval, t_aval = ctx.out_avals
    n = x.aval.shape[-1]
    if n == 0:
        return [x, ctx.full(0, t_aval.dtype, t_aval.shape)]
    a, taus, info = lapack.ffi_call(
        ctx, lapack.lapack_target("gehrd", x.aval.dtype), [x],
        [a_aval, t_aval, ShapedArray(x.aval.shape[:-2], np.int32)],
        attrs={"low": lapack.i32(1), "high": lapack.i32(n)}, aliases={0: 0})
    return [_nan_if_failed(ctx, info, a), _nan_if_failed(ctx, info, taus)]


jvp_rules[hessenberg_p] = _no_derivative("hessenberg", "its Householder representation is not "
                                         "differentiated (as in JAX)")
_batch_rule(hessenberg_p)
lowering_rules[hessenberg_p] = _hessenberg_lowering
_HESSENBERG_HELPER = '''def _hessenberg(x):
    import scipy.linalg.lapack as sl
    n = x.shape[-1]
    a, taus = np.empty_like(x), np.zeros((*x.shape[:-2], max(n - 1, 0)), x.dtype)
    f = sl.get_lapack_funcs("gehrd", dtype=x.dtype)
    for i in np.ndindex(x.shape[:-2]):
        a[i], t, _ = f(x[i])
        taus[i] = t[:n - 1]
    return [a, taus]
'''
defpython(hessenberg_p, "_hessenberg({0})", _HESSENBERG_HELPER)

check_eagerly(schur_p, geqp3_p, hessenberg_p)
