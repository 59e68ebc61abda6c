"""Matrix decompositions: eigh, svd, qr (with geqrf and householder_product).

Each primitive takes a stack of matrices `[..., m, n]` and states every rule:
a NumPy impl (LAPACK through numpy.linalg, so eager results carry the same
signs as XLA's), a shape rule, a jvp written with funcad ops, a batching rule
(the batch axis joins the stack) and a lowering to jaxlib's LAPACK kernels
(syevd, gesdd, geqrf + orgqr) through `funcad/lowering/lapack.py`. When a
kernel reports failure (`info != 0`) the lowered result is NaN, as in JAX.

Derivatives follow JAX's conventions:

- eigh: eigenvector `v[:, i]` is LAPACK's (unit norm, sign as returned); the
  jvp is first-order nondegenerate perturbation theory: where two eigenvalues
  are equal, eigenvalue derivatives stay finite but everything computed from
  the eigenvectors gets inf/NaN derivatives (as in JAX; even a projector on a
  whole eigenspace, whose derivative exists, is not special-cased). The primitive reads one triangle (`lower`); its tangent is that
  triangle's symmetric completion, so it is the exact derivative even of a
  non-symmetric input (JAX assumes the tangent symmetric).
- svd: the rule of JAX (`full_matrices=False`); with `full_matrices=True` the
  extra columns of u or rows of vh are not determined by the input, so the
  jvp of a non-square full SVD with `compute_uv=True` raises.
- qr: JAX's rules for tall, square and wide inputs; `full_matrices=True` for
  a tall input differentiates the completed basis as JAX does.
- geqrf and householder_product (LAPACK's raw Householder form) have no
  derivative, as in JAX.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadTypeError, MissingRuleError
from ..core.staging import trace_to_jaxpr
from ..core.trace import batch_rules, jvp_rules, lowering_rules, sharding_rules
from ..core.typed_sharding import linalg_rule
from ..lowering import lapack
from ..lowering.stablehlo import broadcast, compare, select
from . import elementwise as E
from ._base import weak_if_all_operands_weak, check_eagerly, const, defpython, dtype_of, new_primitive, shape_of
from .linalg import dot_general
from .indexing import take_along_axis
from .reductions import reduce_sum
from .structural import broadcast_in_dim, concatenate, moveaxis0, pad, reshape, slice, transpose
from .triangular import lu, mm, mT, triangular_solve

# ----------------------------------------------------------------- helpers ----


_INEXACT = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def _check_matrix(name, x, square=False):
    if x.ndim < 2 or x.dtype not in _INEXACT or (square and x.shape[-1] != x.shape[-2]):
        what = "square matrices [..., n, n]" if square else "matrices [..., m, n]"
        raise FuncadTypeError(f"{name} got {x.str_short()}: it takes a stack of float32, float64, complex64 "
                              f"or complex128 {what}; convert with .astype(np.float64)"
                              f"{' or pass a square matrix' if square else ''}")


def _real_dtype(dtype):
    """float32 for complex64, float64 for complex128, a real dtype itself."""
    return E._REAL_OF.get(np.dtype(dtype), np.dtype(dtype))


def H(x):
    """The conjugate transpose of a stack (the transpose where x is real)."""
    return mT(E.conj(x)) if dtype_of(x).kind == "c" else mT(x)


def _like(x, y):
    """Real x converted to y's (complex) dtype; x itself where the dtypes agree."""
    return x if dtype_of(x) == dtype_of(y) else E.convert_element_type(x, dtype_of(y))


def _re(x):
    return E.real(x) if dtype_of(x).kind == "c" else x


def _diag(x):
    """The diagonal of each square matrix of a stack, as [..., n]."""
    n = shape_of(x)[-1]
    return reduce_sum(E.mul(x, np.eye(n, dtype=dtype_of(x))), (len(shape_of(x)) - 1,))


def _row(v):
    """[..., k] -> [..., 1, k]."""
    s = tuple(shape_of(v))
    return reshape(v, s[:-1] + (1,) + s[-1:])


def _col(v):
    """[..., k] -> [..., k, 1]."""
    s = tuple(shape_of(v))
    return reshape(v, s + (1,))


def _slice_last2(x, rows, cols):
    """x[..., rows[0]:rows[1], cols[0]:cols[1]]."""
    s = tuple(shape_of(x))
    lo = (0,) * (len(s) - 2) + (rows[0], cols[0])
    hi = s[:-2] + (rows[1], cols[1])
    return slice(x, lo, hi)


def _tri_mask(m, n, k, dtype, lower=True):
    """np.tril (or np.triu) of ones, as a constant."""
    ones = np.ones((m, n), dtype)
    return np.tril(ones, k) if lower else np.triu(ones, k)


def _lapack(name, dtype):
    import scipy.linalg.lapack as sl  # SciPy loads on a decomposition's first eager call
    return sl.get_lapack_funcs((name,), dtype=np.dtype(dtype))[0]


def _per_matrix(x, fn, outs):
    """Apply `fn` (one matrix -> (results, info)) to each matrix of the stack x;
    `outs` lists each result's (trailing shape, dtype). A matrix whose LAPACK call
    fails (info != 0) gives NaNs, as the lowered kernels do."""
    batch = x.shape[:-2]
    res = [np.empty(batch + tuple(s), d) for s, d in outs]
    for idx in np.ndindex(batch):
        vals, info = fn(x[idx])
        for r, v in zip(res, vals):
            r[idx] = _NAN[r.dtype.kind] if info != 0 else v
    return res


def _batch_rule(prim):
    def rule(vals, dims, *, axis_size, **params):
        outs = prim.bind(*[moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)], **params)
        return outs, ([0] * len(outs) if prim.multiple_results else 0)
    batch_rules[prim] = rule


def _lower_fun(fun):
    """A lowering rule that lowers `fun` (a composition of primitives) in place."""
    def rule(ctx, *args, **params):
        closed = trace_to_jaxpr(lambda *xs: list(fun(*xs, **params)), [a.aval for a in args], "lower")
        return ctx.call(closed, args)
    return rule


# A failed kernel's results, as JAX shows them: NaN in both parts of a complex.
_NAN = {"f": np.nan, "c": complex(np.nan, np.nan)}


def _nan_if_failed(ctx, info, x):
    """x where LAPACK's info is 0, NaN where the kernel failed on that matrix."""
    batch = info.aval.shape
    ok = compare(ctx, info, ctx.full(0, np.int32, batch), "EQ")
    ok = broadcast(ctx, ok, x.aval.shape, range(len(batch)))
    return select(ctx, ok, x, ctx.full(_NAN[x.aval.dtype.kind], x.aval.dtype, x.aval.shape))


def _no_derivative(name, why):
    def rule(primals, tangents, **params):
        raise MissingRuleError(f"{name} has no derivative: {why}")
    return rule


# -------------------------------------------------------------------- eigh ----

def _eigh_aval(x, *, lower, sort_eigenvalues):
    _check_matrix("eigh", x, square=True)
    return [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape[:-1], _real_dtype(x.dtype))]


def _eigh_impl(x, *, lower, sort_eigenvalues):
    # SciPy's LAPACK, which jaxlib's kernels also call: the same eigenvector signs
    # eagerly and under jit (NumPy's own LAPACK build may flip some in float32).
    x = np.asarray(x)
    n = x.shape[-1]
    evd = _lapack("heevd" if x.dtype.kind == "c" else "syevd", x.dtype)
    wdt = _real_dtype(x.dtype)

    def one(a):
        w, v, info = evd(a, compute_v=1, lower=int(lower))
        return (v, w), info
    return _per_matrix(x, one, [((n, n), x.dtype), ((n,), wdt)]) if n else [x.copy(), np.zeros(x.shape[:-1], wdt)]


eigh_p = new_primitive("eigh", _eigh_impl, _eigh_aval, multiple_results=True)
weak_if_all_operands_weak(eigh_p)  # JAX's standard weak-type rule
sharding_rules[eigh_p] = linalg_rule("eigh", (2,), _eigh_aval)


def eigh(x, lower: bool = True, sort_eigenvalues: bool = True):
    """(v, w) with x @ v = v * w, reading only x's `lower` (or upper) triangle;
    eigenvalues ascending (LAPACK always sorts them)."""
    return eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues))


def _symmetric_completion(t, lower):
    """The symmetric (Hermitian) matrix whose strict `lower` (or upper) triangle
    is t's, with t's (real part of the) diagonal: the tangent the one-triangle
    primitive sees (LAPACK ignores a Hermitian diagonal's imaginary part)."""
    n = shape_of(t)[-1]
    dt = dtype_of(t)
    strict = E.mul(t, _tri_mask(n, n, -1 if lower else 1, dt, lower))
    diag = E.mul(t, np.eye(n, dtype=dt))
    if dt.kind == "c":
        diag = _like(E.real(diag), diag)
    return E.add(E.add(strict, H(strict)), diag)


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues):
    (a,), (a_dot,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower, sort_eigenvalues=sort_eigenvalues)
    if a_dot is None:
        return [v, w], [None, None]
    n = shape_of(a)[-1]
    eye = np.eye(n, dtype=dtype_of(a))
    a_dot = _symmetric_completion(a_dot, lower)
    # F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it (inf where eigenvalues tie).
    wc = _like(w, a)
    f = E.sub(E.div(const(a, 1), E.add(E.sub(_row(wc), _col(wc)), eye)), eye)
    vh_adot_v = mm(mm(H(v), a_dot), v)
    dv = mm(v, E.mul(f, vh_adot_v))
    dw = _re(_diag(vh_adot_v))
    return [v, w], [dv, dw]


def _eigh_lowering(ctx, x, *, lower, sort_eigenvalues):
    v_aval, w_aval = ctx.out_avals
    batch = x.aval.shape[:-2]
    if x.aval.shape[-1] == 0:
        return [ctx.full(0, v_aval.dtype, v_aval.shape), ctx.full(0, w_aval.dtype, w_aval.shape)]
    v, w, info = lapack.ffi_call(
        ctx, lapack.lapack_target("heevd" if x.aval.dtype.kind == "c" else "syevd", x.aval.dtype), [x],
        [v_aval, w_aval, ShapedArray(batch, np.int32)],
        attrs={"mode": lapack.char("V"), "uplo": lapack.char("L" if lower else "U")}, aliases={0: 0})
    return [_nan_if_failed(ctx, info, v), _nan_if_failed(ctx, info, w)]


jvp_rules[eigh_p] = _eigh_jvp
_batch_rule(eigh_p)
lowering_rules[eigh_p] = _eigh_lowering
defpython(eigh_p, lambda eqn, a: f"np.linalg.eigh({a[0]}, UPLO={'L' if eqn.params['lower'] else 'U'!r})[::-1]")

# --------------------------------------------------------------------- svd ----


def _svd_shapes(shape, full_matrices):
    *b, m, n = shape
    k = min(m, n)
    return tuple(b) + (k,), tuple(b) + (m, m if full_matrices else k), tuple(b) + (n if full_matrices else k, n)


def _svd_aval(x, *, full_matrices, compute_uv, driver="gesdd"):
    _check_matrix("svd", x)
    s, u, vt = _svd_shapes(x.shape, full_matrices)
    outs = [ShapedArray(s, _real_dtype(x.dtype))]
    if compute_uv:
        outs += [ShapedArray(u, x.dtype), ShapedArray(vt, x.dtype)]
    return outs


def _svd_impl(x, *, full_matrices, compute_uv, driver="gesdd"):
    x = np.asarray(x)
    if 0 in x.shape[-2:]:  # NumPy's answer: no singular values, identity bases
        if not compute_uv:
            return [np.linalg.svd(x, compute_uv=False)]
        u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
        return [s, u, vt]
    s_sh, u_sh, vt_sh = (sh[len(x.shape) - 2:] for sh in _svd_shapes(x.shape, full_matrices))
    kernel = _lapack(driver, x.dtype)

    def one(a):
        u, s, vt, info = kernel(a, compute_uv=int(compute_uv), full_matrices=int(full_matrices))
        return ((s, u, vt) if compute_uv else (s,)), info
    outs = [(s_sh[-1:], _real_dtype(x.dtype))] + ([(u_sh, x.dtype), (vt_sh, x.dtype)] if compute_uv else [])
    return _per_matrix(x, one, outs)


svd_p = new_primitive("svd", _svd_impl, _svd_aval, multiple_results=True)
weak_if_all_operands_weak(svd_p)  # JAX's standard weak-type rule
sharding_rules[svd_p] = linalg_rule("svd", (2,), _svd_aval)


def svd(x, full_matrices: bool = True, compute_uv: bool = True, driver: str = "gesdd"):
    """[s, u, vt] (or [s]) with x = u * s @ vt, singular values descending; `driver` is
    LAPACK's kernel, 'gesdd' (divide and conquer) or 'gesvd' (QR iteration)."""
    return svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv), driver=driver)


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, driver="gesdd"):
    (a,), (da,) = primals, tangents
    *_, m, n = shape_of(a)
    if compute_uv and full_matrices and m != n:
        raise MissingRuleError(
            f"the derivative of svd(full_matrices=True) of a non-square {m}x{n} matrix is undefined: "
            f"its {max(m, n) - min(m, n)} extra singular vectors are any orthonormal completion. "
            "Use full_matrices=False (as JAX requires), or compute_uv=False for singular values only")
    outs = svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv, driver=driver)
    if da is None:
        return outs, [None] * len(outs)
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True, driver=driver) if not (compute_uv and m == n) else outs
    ut, v = H(u), H(vt)
    ds_mat = mm(mm(ut, da), v)
    ds = _re(_diag(ds_mat))
    if not compute_uv:
        return outs, [ds]
    # JAX's rule; for complex input u and v get conjugate transposes, and the
    # phase freedom of each singular pair is fixed by du_dv_diag, as in JAX.
    k = min(m, n)
    eye = np.eye(k, dtype=dtype_of(a))
    sc = _like(s, a)
    s_row = _row(sc)
    s_col = _col(sc)
    s_diffs = E.mul(E.add(s_row, s_col), E.sub(s_row, s_col))
    f = E.sub(E.div(const(a, 1), E.add(s_diffs, eye)), eye)
    dss = E.mul(s_row, ds_mat)
    sds = E.mul(s_col, ds_mat)
    zero = E.convert_element_type(E.eq(s, const(s, 0)), dtype_of(a))
    s_inv = E.sub(E.div(const(a, 1), E.add(sc, zero)), zero)
    du_dv_diag = E.mul(E.mul(const(a, 0.5), E.sub(ds_mat, H(ds_mat))), E.mul(_row(s_inv), eye))
    du = mm(u, E.add(E.mul(f, E.add(dss, H(dss))), du_dv_diag))
    dv = mm(v, E.mul(f, E.add(sds, H(sds))))
    if m > n:
        dav = mm(da, v)
        du = E.add(du, E.div(E.sub(dav, mm(u, mm(ut, dav))), s_row))
    if n > m:
        dahu = mm(H(da), u)
        dv = E.add(dv, E.div(E.sub(dahu, mm(v, mm(vt, dahu))), s_row))
    return outs, [ds, du, H(dv)]


def _eye_hlo(ctx, dtype, shape):
    """Identity matrices of `shape` [..., m, n] (ones where row == column)."""
    it = ShapedArray(shape, np.int32)
    r = ctx.op1("stablehlo.iota", [], it, f"iota_dimension = {len(shape) - 2} : i64")
    c = ctx.op1("stablehlo.iota", [], it, f"iota_dimension = {len(shape) - 1} : i64")
    return ctx.op1("stablehlo.convert", [compare(ctx, r, c, "EQ")], ShapedArray(shape, dtype))


def _svd_lowering(ctx, x, *, full_matrices, compute_uv, driver="gesdd"):
    *batch, m, n = x.aval.shape
    batch = tuple(batch)
    s_shape, u_shape, vt_shape = _svd_shapes(x.aval.shape, full_matrices)
    dt = x.aval.dtype
    if m == 0 or n == 0:  # NumPy's answer: no singular values, identity bases where square
        s = ctx.full(0, _real_dtype(dt), s_shape)
        if not compute_uv:
            return [s]
        return [s, _eye_hlo(ctx, dt, u_shape), _eye_hlo(ctx, dt, vt_shape)]
    mode = "N" if not compute_uv else ("A" if full_matrices else "S")
    avals = [x.aval, ShapedArray(s_shape, _real_dtype(dt)), ShapedArray(u_shape, dt), ShapedArray(vt_shape, dt),
             ShapedArray(batch, np.int32)]
    _, s, u, vt, info = lapack.ffi_call(ctx, lapack.lapack_target(driver, dt), [x], avals,
                                        attrs={"mode": lapack.char(mode)}, aliases={0: 0})
    outs = [s, u, vt] if compute_uv else [s]
    return [_nan_if_failed(ctx, info, o) for o in outs]


jvp_rules[svd_p] = _svd_jvp
_batch_rule(svd_p)
lowering_rules[svd_p] = _svd_lowering


def _svd_source(eqn, a):
    p = eqn.params
    if p.get("driver", "gesdd") != "gesdd":  # NumPy's svd is gesdd; SciPy's takes the driver
        uv = "" if p["compute_uv"] else ", compute_uv=False"
        call = (f"__import__('scipy.linalg', fromlist=['svd']).svd({a[0]}, full_matrices={p['full_matrices']}"
                f"{uv}, lapack_driver={p['driver']!r})")
        return f"(lambda r: [r[1], r[0], r[2]])({call})" if p["compute_uv"] else f"[{call}]"
    if not p["compute_uv"]:
        return f"[np.linalg.svd({a[0]}, compute_uv=False)]"
    return f"(lambda r: [r[1], r[0], r[2]])(np.linalg.svd({a[0]}, full_matrices={p['full_matrices']}))"


defpython(svd_p, _svd_source)

# ---------------------------------------------- geqrf, householder_product ----


def _geqrf_aval(x):
    _check_matrix("geqrf", x)
    return [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape[:-1][:-1] + (min(x.shape[-2:]),), x.dtype)]


def _geqrf_impl(x):
    x = np.asarray(x)
    if 0 in x.shape[-2:]:
        return [x.copy(), np.zeros(x.shape[:-2] + (min(x.shape[-2:]),), x.dtype)]
    geqrf = _lapack("geqrf", x.dtype)

    def one(a):
        h, tau, _, info = geqrf(a)
        return (h, tau), info
    return _per_matrix(x, one, [(x.shape[-2:], x.dtype), ((min(x.shape[-2:]),), x.dtype)])


geqrf_p = new_primitive("geqrf", _geqrf_impl, _geqrf_aval, multiple_results=True)
weak_if_all_operands_weak(geqrf_p)  # JAX's standard weak-type rule
sharding_rules[geqrf_p] = linalg_rule("geqrf", (2,), _geqrf_aval)


def geqrf(x):
    """LAPACK's geqrf: [a, taus], R in a's upper triangle, Householder vectors below."""
    return geqrf_p.bind(x)


def _geqrf_lowering(ctx, x):
    a_aval, t_aval = ctx.out_avals
    if 0 in x.aval.shape[-2:]:
        return [x, ctx.full(0, t_aval.dtype, t_aval.shape)]
    return lapack.ffi_call(ctx, lapack.lapack_target("geqrf", x.aval.dtype), [x], [a_aval, t_aval],
                           aliases={0: 0})


jvp_rules[geqrf_p] = _no_derivative("geqrf", "its Householder representation is not differentiated "
                                    "(as in JAX); differentiate qr(a) instead")
_batch_rule(geqrf_p)
lowering_rules[geqrf_p] = _geqrf_lowering
_GEQRF_HELPER = '''def _geqrf(x):
    h, tau = np.linalg.qr(x, mode="raw")
    return [np.swapaxes(h, -1, -2).astype(x.dtype), tau.astype(x.dtype)]
'''
defpython(geqrf_p, "_geqrf({0})", _GEQRF_HELPER)


# LAPACK's Q from Householder reflectors: orgqr for real, ungqr for complex matrices.
_ORGQR = {"f": "orgqr", "c": "ungqr"}


def _hh_aval(a, taus):
    _check_matrix("householder_product", a)
    m, n = a.shape[-2:]
    if m < n or taus.shape[:-1] != a.shape[:-2] or taus.shape[-1] > n or taus.dtype != a.dtype:
        raise FuncadTypeError(f"householder_product got {a.str_short()}, {taus.str_short()}: a must be "
                              "[..., m, n] with m >= n and taus [..., k] with k <= n, of a's dtype")
    return ShapedArray(a.shape, a.dtype)


def _hh_impl(a, taus):
    a, taus = np.asarray(a), np.asarray(taus)
    out = np.empty_like(a)
    if 0 in a.shape[-2:]:
        return out
    orgqr = _lapack(_ORGQR[a.dtype.kind], a.dtype)
    for idx in np.ndindex(a.shape[:-2]):
        out[idx] = orgqr(a[idx], taus[idx])[0]
    return out


householder_product_p = new_primitive("householder_product", _hh_impl, _hh_aval)
weak_if_all_operands_weak(householder_product_p)  # JAX's standard weak-type rule
sharding_rules[householder_product_p] = linalg_rule("householder_product", (2, 1), _hh_aval)


def householder_product(a, taus):
    """The product of the Householder reflectors (I - tau_i v_i v_i^T) stored in a's
    lower trapezoid: LAPACK's orgqr, the m x n orthonormal Q of a geqrf result."""
    return householder_product_p.bind(a, taus)


def _hh_lowering(ctx, a, taus):
    if 0 in a.aval.shape[-2:]:
        return a
    return lapack.ffi_call(ctx, lapack.lapack_target(_ORGQR[a.aval.dtype.kind], a.aval.dtype), [a, taus], [a.aval],
                           aliases={0: 0})[0]


jvp_rules[householder_product_p] = _no_derivative(
    "householder_product", "as in JAX; differentiate qr(a) instead")
_batch_rule(householder_product_p)
lowering_rules[householder_product_p] = _hh_lowering
_HH_HELPER = '''def _householder_product(a, taus):
    import scipy.linalg.lapack as sl
    out = np.empty_like(a)
    f = sl.get_lapack_funcs("ungqr" if a.dtype.kind == "c" else "orgqr", dtype=a.dtype)
    for i in np.ndindex(a.shape[:-2]):
        out[i] = f(a[i], taus[i])[0]
    return out
'''
defpython(householder_product_p, "_householder_product({0}, {1})", _HH_HELPER)

# ---------------------------------------------------------------------- qr ----


def _qr_aval(x, *, full_matrices):
    _check_matrix("qr", x)
    *b, m, n = x.shape
    k = m if full_matrices else min(m, n)
    return [ShapedArray(tuple(b) + (m, k), x.dtype), ShapedArray(tuple(b) + (k, n), x.dtype)]


def _qr_impl(x, *, full_matrices):
    x = np.asarray(x)
    *b, m, n = x.shape
    if m == 0 or n == 0:
        q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
        return [q, r]
    k = m if full_matrices else min(m, n)
    geqrf, orgqr = _lapack("geqrf", x.dtype), _lapack(_ORGQR[x.dtype.kind], x.dtype)

    def one(a):  # as the lowering: geqrf, then orgqr on the reflectors (padded to m columns)
        h, tau, _, info = geqrf(a)
        refl = h[:, :m] if m < n else (np.pad(h, ((0, 0), (0, m - n))) if full_matrices else h)
        q, _, info2 = orgqr(refl, tau)
        return (q, np.triu(h[:k])), info or info2
    return _per_matrix(x, one, [((m, k), x.dtype), ((k, n), x.dtype)])


qr_p = new_primitive("qr", _qr_impl, _qr_aval, multiple_results=True)
weak_if_all_operands_weak(qr_p)  # JAX's standard weak-type rule
sharding_rules[qr_p] = linalg_rule("qr", (2,), _qr_aval)


def qr(x, full_matrices: bool = True):
    """[q, r] with x = q @ r, q orthonormal columns, r upper triangular (LAPACK's signs)."""
    return qr_p.bind(x, full_matrices=bool(full_matrices))


def _qr_composition(x, *, full_matrices):
    """qr from geqrf and householder_product: how it lowers to LAPACK."""
    *b, m, n = shape_of(x)
    nb = len(b)
    if m == 0 or n == 0:
        k = m if full_matrices else min(m, n)
        eye = broadcast_in_dim(np.eye(m, k, dtype=dtype_of(x)), tuple(b) + (m, k), (nb, nb + 1))
        return [eye, broadcast_in_dim(np.zeros((), dtype_of(x)), tuple(b) + (k, n), ())]
    a, taus = geqrf(x)
    if m < n:
        q = householder_product(_slice_last2(a, (0, m), (0, m)), taus)
    elif full_matrices:
        q = householder_product(pad(a, np.zeros((), dtype_of(x)), [(0, 0, 0)] * (nb + 1) + [(0, m - n, 0)]), taus)
    else:
        q = householder_product(a, taus)
        a = _slice_last2(a, (0, n), (0, n))
    r = E.mul(a, _tri_mask(*shape_of(a)[-2:], 0, dtype_of(x), lower=False))
    return [q, r]


def _lu_solve(a, b):
    """x with a @ x = b, for square a [..., n, n] and b [..., n, p], by pivoted LU."""
    lu_, _, perm = lu(a)
    nd = len(shape_of(b))
    perm = broadcast_in_dim(perm, tuple(shape_of(b)), tuple(range(nd - 1)))
    y = triangular_solve(lu_, take_along_axis(b, perm, nd - 2), left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, y, left_side=True, lower=False)


def _thin_qr_jvp(q, r, dx):
    """dq, dr of a thin QR (q [..., m, n], r [..., n, n])."""
    n = shape_of(r)[-1]
    dx_rinv = triangular_solve(r, dx, left_side=False, lower=False)
    qt_dx_rinv = mm(H(q), dx_rinv)
    low = E.mul(qt_dx_rinv, _tri_mask(n, n, -1, dtype_of(q)))
    do = E.sub(low, H(low))  # skew-Hermitian
    if dtype_of(q).kind == "c":  # r's real diagonal leaves do's diagonal the imaginary part of qt_dx_rinv's
        do = E.add(do, E.mul(np.eye(n, dtype=dtype_of(q)), E.sub(qt_dx_rinv, _like(E.real(qt_dx_rinv), q))))
    dq = E.add(mm(q, E.sub(do, qt_dx_rinv)), dx_rinv)
    dr = mm(E.sub(qt_dx_rinv, do), r)
    return dq, dr


def _qr_jvp(primals, tangents, *, full_matrices):
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, full_matrices=full_matrices)
    if dx is None:
        return [q, r], [None, None]
    *b, m, n = shape_of(x)
    if m < n:
        # x = [x1 x2] with x1 square: x1 = q r1 and r2 = q^T x2.
        dq, dr1 = _thin_qr_jvp(q, _slice_last2(r, (0, m), (0, m)), _slice_last2(dx, (0, m), (0, m)))
        dr2 = E.add(mm(H(dq), _slice_last2(x, (0, m), (m, n))), mm(H(q), _slice_last2(dx, (0, m), (m, n))))
        return [q, r], [dq, concatenate([dr1, dr2], len(b) + 1)]
    q_mn = _slice_last2(q, (0, m), (0, n)) if full_matrices else q
    r_nn = _slice_last2(r, (0, n), (0, n)) if full_matrices else r
    dq_mn, dr_nn = _thin_qr_jvp(q_mn, r_nn, dx)
    if not full_matrices or m == n:
        return [q, r], [dq_mn, dr_nn]
    # The completed columns q_mp move with q_mn (arXiv:2409.13374, eqs. 32-33):
    # z = q_pn (q_nn - I)^-1, dq_mp = dq_mn z^H - (q_mn + q_mp z)(dq_pn - z dq_nn)^H.
    q_nn, q_pn = _slice_last2(q_mn, (0, n), (0, n)), _slice_last2(q_mn, (n, m), (0, n))
    q_mp = _slice_last2(q, (0, m), (n, m))
    dq_nn, dq_pn = _slice_last2(dq_mn, (0, n), (0, n)), _slice_last2(dq_mn, (n, m), (0, n))
    z_h = _lu_solve(H(E.sub(q_nn, np.eye(n, dtype=dtype_of(x)))), H(q_pn))
    z = H(z_h)
    dq_mp = E.sub(mm(dq_mn, z_h), mm(E.add(q_mn, mm(q_mp, z)), H(E.sub(dq_pn, mm(z, dq_nn)))))
    zeros = broadcast_in_dim(np.zeros((), dtype_of(x)), tuple(b) + (m - n, n), ())
    return [q, r], [concatenate([dq_mn, dq_mp], len(b) + 1), concatenate([dr_nn, zeros], len(b))]


jvp_rules[qr_p] = _qr_jvp
_batch_rule(qr_p)
lowering_rules[qr_p] = _lower_fun(_qr_composition)
defpython(qr_p, lambda eqn, a: f"list(np.linalg.qr({a[0]}, mode={'complete' if eqn.params['full_matrices'] else 'reduced'!r}))")

# NumPy would accept integer or float16 matrices silently: check the types eagerly too.
check_eagerly(eigh_p, svd_p, qr_p, geqrf_p, householder_product_p)
