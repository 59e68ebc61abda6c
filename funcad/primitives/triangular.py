"""Triangular factorizations and solves: cholesky, triangular_solve, lu.

Each works on stacks of matrices (leading batch dimensions). XLA has
`stablehlo.cholesky` and `stablehlo.triangular_solve`; LU goes through
jaxlib's LAPACK kernel (`lapack_?getrf_ffi`, see funcad/lowering/lapack.py).
The derivative rules are the standard ones (as in JAX): for L = chol(A),
dL = L Φ(L⁻¹ dA L⁻ᵀ) with Φ the lower triangle and half the diagonal; for
X = op(A)⁻¹ B, dX = -op(A)⁻¹ op(dA) X; for P A = L U, with
Y = L⁻¹ P dA U⁻¹, dL = L tril(Y, -1) and dU = triu(Y) U.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import MissingRuleError
from ..core.trace import batch_rules, jvp_rules, lowering_rules, transpose_rules, sharding_rules
from ..core.typed_sharding import linalg_rule, triangular_solve_rule
from ..lowering import lapack
from ..lowering.stablehlo import binary, broadcast, compare, select
from ._numpy_blas import trsm as numpy_trsm
from ._base import (weak_if_all_operands_weak, defpython, dtype_of, is_undefined, new_primitive, shape_of, type_error,
                    zeros_like)
from .elementwise import add, conj, const, eq, ge, le, mul, neg, select_n, sub
from .indexing import take_along_axis
from .linalg import dot_general
from .structural import broadcast_in_dim, iota, moveaxis0, pad, slice as slice_, transpose
from .structural import reshape
from .elementwise import bitwise_and

# ------------------------------------------------------------ helpers ----


def mT(x):
    """The matrix transpose of a stack (last two axes swapped)."""
    nd = len(shape_of(x))
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def mm(x, y):
    """x @ y for stacks with equal batch dimensions."""
    nd = len(shape_of(x))
    b = tuple(range(nd - 2))
    return dot_general(x, y, (((nd - 1,), (nd - 2,)), (b, b)))


def _band(x, k, lower):
    """tril(x, k) (lower) or triu(x, k) (upper) over the last two axes."""
    shape = shape_of(x)
    nd = len(shape)
    d = sub(iota(np.int32, shape, nd - 1), iota(np.int32, shape, nd - 2))  # col - row
    keep = le(d, np.array(k, np.int32)) if lower else ge(d, np.array(k, np.int32))
    return select_n(keep, zeros_like(x), x)


def tril(x, k=0):
    return _band(x, k, True)


def triu(x, k=0):
    return _band(x, k, False)


def _eye_like(x):
    shape = shape_of(x)
    nd = len(shape)
    on = eq(iota(np.int32, shape, nd - 1), iota(np.int32, shape, nd - 2))
    return select_n(on, zeros_like(x), broadcast_in_dim(const(x, 1), tuple(shape), ()))


def _is_float(aval) -> bool:
    return aval.dtype.kind in "fc" and aval.dtype.itemsize >= 4


def _square_stack(name, x):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or not _is_float(x):
        raise type_error(name, "needs a stack of square float32/float64 matrices (shape (..., n, n))", x)


def _batched_operands(vals, dims, axis_size):
    return [moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)]


# ----------------------------------------------------------- cholesky ----


def _cholesky_aval(x):
    _square_stack("cholesky", x)
    return ShapedArray(x.shape, x.dtype)


def _cholesky_impl(x):
    """The lower Cholesky factor from the lower triangle; NaNs for a matrix
    that is not positive definite (as XLA and JAX give), not an exception."""
    x = np.asarray(x)
    try:
        return np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        pass
    flat = x.reshape((-1,) + x.shape[-2:])
    out = np.empty_like(flat)
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            out[i] = np.nan
    return out.reshape(x.shape)


cholesky_p = new_primitive("cholesky", _cholesky_impl, _cholesky_aval)
weak_if_all_operands_weak(cholesky_p)  # JAX's standard weak-type rule
sharding_rules[cholesky_p] = linalg_rule("cholesky", (2,), _cholesky_aval)


def cholesky(x):
    """The lower Cholesky factor of each matrix, reading only its lower triangle."""
    return cholesky_p.bind(x)


def _cholesky_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    L = cholesky_p.bind(x)
    if t is None:
        return L, None
    # Φ(L⁻¹ dA L⁻ᴴ): the lower triangle with half its diagonal; dA is taken symmetric (Hermitian).
    tmp = triangular_solve(L, t, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    tmp = triangular_solve(L, tmp, left_side=True, lower=True)
    phi = sub(tril(tmp), mul(_half_diag(tmp), const(tmp, 0.5)))
    return L, mm(L, phi)


def _half_diag(x):
    return mul(x, _eye_like(x))


def _cholesky_batch(vals, dims, *, axis_size):
    return cholesky_p.bind(moveaxis0(vals[0], dims[0], axis_size)), 0


def _cholesky_lowering(ctx, x):
    if ctx.module.platform == "cpu":
        # LAPACK's potrf, as JAX on the CPU: XLA's own cholesky expands into a much
        # slower blocked loop there. A failed factorization (info != 0) becomes NaN.
        aval = x.aval
        batch = tuple(aval.shape[:-2])
        out, info = lapack.ffi_call(ctx, lapack.lapack_target("potrf", aval.dtype), [x],
                                    [aval, ShapedArray(batch, np.int32)],
                                    attrs={"uplo": lapack.char("L")}, aliases={0: 0})
        ok = compare(ctx, info, ctx.full(0, np.int32, batch), "EQ")
        ok = broadcast(ctx, ok, aval.shape, tuple(range(len(batch))))
        return select(ctx, ok, _mask_lower(ctx, out), ctx.full(np.nan, aval.dtype, aval.shape))
    out = ctx.op1("stablehlo.cholesky", [x], ctx.out_aval, "lower = true")
    # XLA leaves the upper triangle unspecified: zero it, as NumPy does. A
    # matrix that is not positive definite becomes all NaN, as in the impl.
    return _nan_unless_finite(ctx, _mask_lower(ctx, out))


def _nan_unless_finite(ctx, x):
    aval = x.aval
    nd = len(aval.shape)
    batch = aval.shape[:-2]
    flags = ShapedArray(aval.shape, np.bool_)
    if aval.dtype.kind == "c":  # is_finite takes real operands: both parts finite
        part = ShapedArray(aval.shape, np.finfo(aval.dtype).dtype)
        finite = binary(ctx, "stablehlo.and",
                        *[ctx.op1("stablehlo.is_finite", [ctx.op1(f"stablehlo.{p}", [x], part)], flags)
                          for p in ("real", "imag")])
    else:
        finite = ctx.op1("stablehlo.is_finite", [x], flags)
    s = ShapedArray((), np.bool_)
    region = ctx.region([s, s], lambda c, u, v: [binary(c, "stablehlo.and", u, v)])
    ok = ctx.op1("stablehlo.reduce", [finite, ctx.constant(True, np.bool_)], ShapedArray(batch, np.bool_),
                 f"dimensions = array<i64: {nd - 2}, {nd - 1}>", [region])
    ok = broadcast(ctx, ok, aval.shape, tuple(range(nd - 2)))
    return select(ctx, ok, x, ctx.full(np.nan, aval.dtype, aval.shape))


def _mask_lower(ctx, x):
    aval = x.aval
    nd = len(aval.shape)
    ishape = ShapedArray(aval.shape, np.int32)
    rows = ctx.op1("stablehlo.iota", [], ishape, f"iota_dimension = {nd - 2} : i64")
    cols = ctx.op1("stablehlo.iota", [], ishape, f"iota_dimension = {nd - 1} : i64")
    return select(ctx, compare(ctx, cols, rows, "LE"), x, ctx.full(0, aval.dtype, aval.shape))


_CHOLESKY_HELPER = '''def _cholesky(x):
    try:
        return np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        return np.full_like(x, np.nan)
'''

jvp_rules[cholesky_p] = _cholesky_jvp
batch_rules[cholesky_p] = _cholesky_batch
lowering_rules[cholesky_p] = _cholesky_lowering
defpython(cholesky_p, "_cholesky({0})", _CHOLESKY_HELPER)

# --------------------------------------------------- triangular_solve ----


def _tsolve_aval(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    _square_stack("triangular_solve", a)
    m = a.shape[-1]
    ok = (b.ndim == a.ndim and b.shape[:-2] == a.shape[:-2] and b.dtype == a.dtype
          and (b.shape[-2] if left_side else b.shape[-1]) == m)
    if not ok:
        side = "(..., m, n) with a's m rows" if left_side else "(..., n, m) with a's m columns"
        raise type_error("triangular_solve", f"b must have a's dtype and batch dimensions and shape {side} "
                         f"(left_side={left_side})", a, b)
    return ShapedArray(b.shape, b.dtype)


def _solve_one(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    # BLAS trsm, not LAPACK trtrs: a zero on the diagonal gives infs/NaNs, as
    # in XLA, instead of an exception. NumPy's own OpenBLAS where it can (one
    # thread pool for eager code, see _numpy_blas), else SciPy's.
    out = numpy_trsm(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal)
    if out is not None:
        return out
    from scipy.linalg.blas import get_blas_funcs  # loads on first use: ~0.15 s
    trsm, = get_blas_funcs(("trsm",), (a, b))
    if conjugate_a and not transpose_a:
        a = np.conj(a)
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    return trsm(1.0, a, b, side=0 if left_side else 1, lower=int(lower), trans_a=trans,
                diag=int(unit_diagonal))


def _tsolve_impl(a, b, **params):
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 2:
        return _solve_one(a, b, **params).astype(b.dtype, copy=False)
    fa, fb = a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])
    out = np.stack([_solve_one(x, y, **params) for x, y in zip(fa, fb)]) if len(fa) else fb.copy()
    return out.reshape(b.shape).astype(b.dtype, copy=False)


triangular_solve_p = new_primitive("triangular_solve", _tsolve_impl, _tsolve_aval)
weak_if_all_operands_weak(triangular_solve_p)  # JAX's standard weak-type rule
sharding_rules[triangular_solve_p] = triangular_solve_rule


def triangular_solve(a, b, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False):
    """Solve op(a) @ x = b (left_side) or x @ op(a) = b for x, a triangular;
    op(a) is aᵀ when transpose_a (conjugated with conjugate_a)."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


def _tsolve_jvp(primals, tangents, **params):
    a, b = primals
    ta, tb = tangents
    x = triangular_solve_p.bind(a, b, **params)
    out = None if tb is None else triangular_solve_p.bind(a, tb, **params)
    if ta is not None:
        # Only the triangle that is read moves x; the unit diagonal is not read either.
        k = (-1 if params["lower"] else 1) if params["unit_diagonal"] else 0
        da = _band(ta, k, params["lower"])
        if params["transpose_a"]:
            da = mT(da)
        if params["conjugate_a"] and dtype_of(da).kind == "c":
            da = conj(da)
        rhs = mm(da, x) if params["left_side"] else mm(x, da)
        dx = neg(triangular_solve_p.bind(a, rhs, **params))
        out = dx if out is None else add(out, dx)
    return x, out


def _tsolve_transpose(ct, a, b, **params):
    if is_undefined(a):
        raise type_error("triangular_solve", "is linear in b only; a cannot be transposed", a.aval)
    if ct is None:
        return [None, None]
    return [None, triangular_solve_p.bind(a, ct, **dict(params, transpose_a=not params["transpose_a"]))]


def _tsolve_batch(vals, dims, *, axis_size, **params):
    a, b = vals
    da, db = dims
    if da is None and params["left_side"] and len(shape_of(b)) == 3 and len(shape_of(a)) == 2:
        # One matrix, a batch of right-hand sides: solve them all as extra columns.
        b = moveaxis0(b, db, axis_size)
        m, n = shape_of(b)[1:]
        cols = transpose(b, (1, 0, 2))
        x = triangular_solve_p.bind(a, reshape(cols, (m, axis_size * n)), **params)
        return transpose(reshape(x, (m, axis_size, n)), (1, 0, 2)), 0
    a, b = _batched_operands(vals, dims, axis_size)
    return triangular_solve_p.bind(a, b, **params), 0


def _conj(ctx, x):
    part = ShapedArray(x.aval.shape, np.finfo(x.aval.dtype).dtype)
    re, im = ctx.op1("stablehlo.real", [x], part), ctx.op1("stablehlo.imag", [x], part)
    return ctx.op1("stablehlo.complex", [re, ctx.op1("stablehlo.negate", [im], part)], x.aval)


def _tsolve_lowering(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    complex_ = a.aval.dtype.kind == "c"
    if conjugate_a and not transpose_a and complex_:
        a = _conj(ctx, a)  # neither LAPACK nor XLA conjugates without transposing
    if ctx.module.platform == "cpu":
        # BLAS trsm, as JAX on the CPU: XLA's own triangular_solve is far slower there.
        trans = ("C" if conjugate_a and complex_ else "T") if transpose_a else "N"
        attrs = {"side": lapack.char("L" if left_side else "R"), "uplo": lapack.char("L" if lower else "U"),
                 "trans_x": lapack.char(trans), "diag": lapack.char("U" if unit_diagonal else "N")}
        return lapack.ffi_call(ctx, lapack.lapack_target("trsm", a.aval.dtype), [a, b], [ctx.out_aval],
                               attrs=attrs, aliases={1: 0})[0]
    mode = ("ADJOINT" if conjugate_a and a.aval.dtype.kind == "c" else "TRANSPOSE") if transpose_a \
        else "NO_TRANSPOSE"
    attrs = (f"left_side = {str(left_side).lower()}, lower = {str(lower).lower()}, "
             f"unit_diagonal = {str(unit_diagonal).lower()}, "
             f"transpose_a = #stablehlo<transpose {mode}>")
    return ctx.op1("stablehlo.triangular_solve", [a, b], ctx.out_aval, attrs)


_TSOLVE_HELPER = '''def _triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    from scipy.linalg.blas import get_blas_funcs
    trsm, = get_blas_funcs(("trsm",), (a, b))
    a = np.conj(a) if conjugate_a and not transpose_a else a
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    def one(a, b):
        return trsm(1.0, a, b, side=0 if left_side else 1, lower=int(lower), trans_a=trans,
                    diag=int(unit_diagonal))
    if a.ndim == 2:
        return one(a, b)
    fa, fb = a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])
    return np.stack([one(x, y) for x, y in zip(fa, fb)]).reshape(b.shape)
'''

jvp_rules[triangular_solve_p] = _tsolve_jvp
transpose_rules[triangular_solve_p] = _tsolve_transpose
batch_rules[triangular_solve_p] = _tsolve_batch
lowering_rules[triangular_solve_p] = _tsolve_lowering
defpython(triangular_solve_p, lambda eqn, a: (
    f"_triangular_solve({a[0]}, {a[1]}, {eqn.params['left_side']}, {eqn.params['lower']}, "
    f"{eqn.params['transpose_a']}, {eqn.params['conjugate_a']}, {eqn.params['unit_diagonal']})"),
    _TSOLVE_HELPER)

# ------------------------------------------------------------------ lu ----


def _lu_aval(x):
    if x.ndim < 2 or not _is_float(x):
        raise type_error("lu", "needs a stack of float32/float64 matrices (shape (..., m, n))", x)
    *batch, m, n = x.shape
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*batch, min(m, n)), np.int32),
            ShapedArray((*batch, m), np.int32)]


def pivots_to_permutation(piv, m):
    """The row permutation that LAPACK's successive row swaps `piv` (0-based) make."""
    piv = np.asarray(piv)
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), piv.shape[:-1] + (m,)).copy()
    count = int(np.prod(piv.shape[:-1], dtype=np.int64))  # -1 is ambiguous at size 0
    flat_perm = perm.reshape(count, m)
    flat_piv = piv.reshape(count, piv.shape[-1])
    for i in range(piv.shape[-1]):
        j = flat_piv[:, i]
        r = np.arange(len(flat_perm))
        a, b = flat_perm[r, i].copy(), flat_perm[r, j].copy()
        flat_perm[r, i], flat_perm[r, j] = b, a
    return flat_perm.reshape(perm.shape)


def _lu_impl(x):
    x = np.asarray(x)
    *batch, m, n = x.shape
    from scipy.linalg import get_lapack_funcs  # loads on first use, as in _solve_one
    getrf, = get_lapack_funcs(("getrf",), (x,))
    flat = x.reshape((int(np.prod(batch, dtype=np.int64)), m, n))  # -1 is ambiguous at size 0
    lu = np.empty_like(flat)
    piv = np.empty((len(flat), min(m, n)), np.int32)
    for i, a in enumerate(flat if m and n else ()):  # LAPACK refuses an empty matrix
        lu[i], p, _ = getrf(a)  # info > 0 (a zero pivot) still gives the factors, as in XLA
        piv[i] = p[:min(m, n)]
    piv = piv.reshape((*batch, min(m, n)))
    return [lu.reshape(x.shape), piv, pivots_to_permutation(piv, m)]


lu_p = new_primitive("lu", _lu_impl, _lu_aval, multiple_results=True)
weak_if_all_operands_weak(lu_p)  # JAX's standard weak-type rule
sharding_rules[lu_p] = linalg_rule("lu", (2,), _lu_aval)


def lu(x):
    """LU with partial pivoting: (lu, pivots, permutation) with
    x[..., permutation, :] = L @ U, L unit lower (below lu's diagonal), U upper."""
    return lu_p.bind(x)


def _lu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    lu_, piv, perm = lu_p.bind(x)
    if t is None:
        return [lu_, piv, perm], [None, None, None]
    *batch, m, n = shape_of(x)
    k = min(m, n)
    nd = len(shape_of(x))
    zero = const(x, 0)
    # L (m x m, unit lower, identity beyond column k) and U (n x n, identity beyond row k).
    l = tril(slice_(lu_, (0,) * nd, (*batch, m, k)), -1)
    l = add(pad(l, zero, [(0, 0, 0)] * (nd - 1) + [(0, m - k, 0)]), _eye_like(_zeros(batch + [m, m], x)))
    u = triu(slice_(lu_, (0,) * nd, (*batch, k, n)))
    u = add(pad(u, zero, [(0, 0, 0)] * (nd - 2) + [(0, n - k, 0), (0, 0, 0)]),
            _lower_right_eye(batch, n, k, x))
    rows = broadcast_in_dim(perm, tuple(shape_of(x)), tuple(range(nd - 1)))
    pt = take_along_axis(t, rows, nd - 2)
    la = triangular_solve(l, pt, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(u, la, left_side=False, lower=False)
    dlu = add(mm(l, tril(lau, -1)), mm(triu(lau), u))
    return [lu_, piv, perm], [dlu, None, None]


def _zeros(shape, like):
    return broadcast_in_dim(const(like, 0), tuple(shape), ())


def _lower_right_eye(batch, n, k, like):
    """The n x n matrix with ones on the diagonal from row k on (zeros elsewhere)."""
    shape = tuple(batch) + (n, n)
    nd = len(shape)
    r, c = iota(np.int32, shape, nd - 2), iota(np.int32, shape, nd - 1)
    on = eq(r, c)
    on = bitwise_and(on, ge(r, np.array(k, np.int32)))
    return select_n(on, _zeros(shape, like), broadcast_in_dim(const(like, 1), shape, ()))


def _lu_batch(vals, dims, *, axis_size):
    return lu_p.bind(moveaxis0(vals[0], dims[0], axis_size)), [0, 0, 0]


def _lu_lowering(ctx, x):
    if ctx.module.platform != "cpu":
        raise MissingRuleError(
            "lu (and solve, inv, det, slogdet, lu_factor... built on it) has no GPU lowering in "
            "funcad yet: XLA has no native LU and only jaxlib's CPU LAPACK kernel is wired. "
            "Run this jitted function with backend='cpu', or call it without jit")
    aval = x.aval
    *batch, m, n = aval.shape
    k = min(m, n)
    piv_aval = ShapedArray((*batch, k), np.int32)
    if 0 in aval.shape:  # nothing to factor (the swap loop's slices need k >= 1)
        perm = ctx.op1("stablehlo.iota", [], ShapedArray((*batch, m), np.int32),
                       f"iota_dimension = {len(batch)} : i64")
        return [x, ctx.full(0, np.int32, piv_aval.shape), perm]
    lu_, piv, _info = lapack.ffi_call(ctx, lapack.lapack_target("getrf", aval.dtype), [x],
                                      [aval, piv_aval, ShapedArray(tuple(batch), np.int32)],
                                      aliases={0: 0})
    piv = binary(ctx, "stablehlo.subtract", piv, ctx.full(1, np.int32, piv_aval.shape))  # 1-based
    return [lu_, piv, _permutation_loop(ctx, piv, m)]


def _permutation_loop(ctx, piv, m):
    """perm = arange(m), then swap perm[i] and perm[piv[i]] for i < k: a while
    loop whose body swaps through one-hot masks (no gathers), for any batch."""
    *batch, k = piv.aval.shape
    batch = tuple(batch)
    i32 = np.int32
    s = ShapedArray((), i32)
    perm_aval = ShapedArray(batch + (m,), i32)
    nb = len(batch)
    perm0 = ctx.op1("stablehlo.iota", [], perm_aval, f"iota_dimension = {nb} : i64")
    i0 = ctx.constant(0, i32)

    def cond(c, i, perm, piv_):
        return [compare(c, i, c.constant(k, i32), "LT")]

    def body(c, i, perm, piv_):
        idx = c.op1("stablehlo.iota", [], perm_aval, f"iota_dimension = {nb} : i64")
        at_i = compare(c, idx, broadcast(c, i, perm_aval.shape, ()), "EQ")
        # p = piv[..., i] and a = perm[..., i], each of shape batch + (1,)
        starts = [c.constant(0, i32)] * nb + [i]
        one = ShapedArray(batch + (1,), i32)
        p = c.op1("stablehlo.dynamic_slice", [piv_, *starts], one,
                  f"slice_sizes = array<i64: {', '.join(map(str, batch + (1,)))}>")
        a = c.op1("stablehlo.dynamic_slice", [perm, *starts], one,
                  f"slice_sizes = array<i64: {', '.join(map(str, batch + (1,)))}>")
        p_b = broadcast(c, p, perm_aval.shape, tuple(range(nb + 1)))
        a_b = broadcast(c, a, perm_aval.shape, tuple(range(nb + 1)))
        at_p = compare(c, idx, p_b, "EQ")
        # b = perm[..., p]: a masked sum over the last axis
        zero = c.full(0, i32, perm_aval.shape)
        masked = select(c, at_p, perm, zero)
        red = c.region([s, s], lambda cc, u, v: [binary(cc, "stablehlo.add", u, v)])
        bsum = c.op1("stablehlo.reduce", [masked, c.constant(0, i32)], ShapedArray(batch, i32),
                     f"dimensions = array<i64: {nb}>", [red])
        b_b = broadcast(c, bsum, perm_aval.shape, tuple(range(nb)))
        new = select(c, at_i, b_b, select(c, at_p, a_b, perm))
        return [binary(c, "stablehlo.add", i, c.constant(1, i32)), new, piv_]

    avals = [s, perm_aval, piv.aval]
    outs = ctx.op("stablehlo.while", [i0, perm0, piv], avals, "",
                  [ctx.region(avals, cond), ctx.region(avals, body)])
    return outs[1]


_LU_HELPER = '''def _lu(x):
    from scipy.linalg import get_lapack_funcs
    *batch, m, n = x.shape
    getrf, = get_lapack_funcs(("getrf",), (x,))
    flat = x.reshape((-1, m, n))
    lu, piv = np.empty_like(flat), np.empty((len(flat), min(m, n)), np.int32)
    for i, a in enumerate(flat if m and n else ()):  # LAPACK refuses an empty matrix
        lu[i], p, _ = getrf(a)
        piv[i] = p[:min(m, n)]
    perm = np.tile(np.arange(m, dtype=np.int32), (len(flat), 1))
    for r in range(len(flat)):
        for i, j in enumerate(piv[r]):
            perm[r, i], perm[r, j] = perm[r, j], perm[r, i]
    return [lu.reshape(x.shape), piv.reshape((*batch, min(m, n))), perm.reshape((*batch, m))]
'''

jvp_rules[lu_p] = _lu_jvp
batch_rules[lu_p] = _lu_batch
lowering_rules[lu_p] = _lu_lowering
defpython(lu_p, "_lu({0})", _LU_HELPER)
