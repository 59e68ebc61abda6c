"""The general (non-symmetric) eigendecomposition: eig, as lax.linalg.eig.

`eig(x)` of a stack of square float or complex matrices returns the complex
eigenvalues w and, when asked, the left eigenvectors vl (vl[:, j]^H x =
w[j] vl[:, j]^H) and the right ones vr (x vr[:, j] = w[j] vr[:, j]), always
complex (complex64 for float32/complex64 input, complex128 otherwise). The
impl and the lowering run the same LAPACK routine (geev; SciPy's eagerly,
jaxlib's `lapack_?geev_ffi` kernel under jit), so eigenvalue order and the
eigenvector normalisation agree: each vector has unit 2-norm and its
largest-magnitude component real. A matrix whose geev fails gives NaNs.

Derivatives follow JAX's conventions: eigenvalues are differentiable
(first-order perturbation theory, dw = diag(vr^-1 dx vr)); eigenvectors only
with `enable_eigvec_derivs=True`, differentiating the geev normalisation
above. That is valid only where eigenvalues are distinct and no eigenvector
has two components tied for largest magnitude, which cannot be checked
statically; without the flag the jvp of a call that returns eigenvectors
raises. Eigenvalues alone are differentiable to any order (their tangent is
gauge-invariant); JAX's stop at the first.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadTypeError, MissingRuleError
from ..core.trace import jvp_rules, lowering_rules, sharding_rules
from ..core.typed_sharding import linalg_rule
from ..lowering import lapack
from . import elementwise as E
from ._base import weak_if_all_operands_weak, check_eagerly, const, defpython, dtype_of, new_primitive, shape_of
from .decompositions import _NAN, _batch_rule, _col, _diag, _lu_solve, _nan_if_failed, _row, mT, mm
from .reductions import argmax, reduce_sum
from .structural import broadcast_in_dim, concatenate, slice as _slice

_INEXACT = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def _eig_aval(x, *, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.dtype not in _INEXACT:
        raise FuncadTypeError(f"eig got {x.str_short()}: it takes a stack of square float32, float64, "
                              "complex64 or complex128 matrices [..., n, n]; convert with "
                              ".astype(np.float64) or pass a square matrix")
    c = E._complex_dtype(x.dtype)
    n_vecs = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    return [ShapedArray(x.shape[:-1], c)] + [ShapedArray(x.shape, c)] * n_vecs


def _geev_one(a, left, right):
    """geev on one matrix: (w, vl, vr, info), complex, real pairs unpacked."""
    import scipy.linalg.lapack as sl  # SciPy loads on eig's first eager call
    geev = sl.get_lapack_funcs("geev", dtype=a.dtype)
    c = E._complex_dtype(a.dtype)
    if a.dtype.kind == "c":
        w, vl, vr, info = geev(a, compute_vl=int(left), compute_vr=int(right))
        return w, vl, vr, info
    wr, wi, vl, vr, info = geev(a, compute_vl=int(left), compute_vr=int(right))
    w = (wr + 1j * wi).astype(c)

    def unpack(v):
        # geev stores a complex pair's vectors as (re, im) in adjacent columns.
        out = v.astype(c)
        j = 0
        while j < len(wi):
            if wi[j] != 0 and j + 1 < len(wi):
                out[:, j] = v[:, j] + 1j * v[:, j + 1]
                out[:, j + 1] = v[:, j] - 1j * v[:, j + 1]
                j += 2
            else:
                j += 1
        return out
    return w, unpack(vl), unpack(vr), info


def _eig_impl(x, *, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs):
    x = np.asarray(x)
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    c = E._complex_dtype(x.dtype)
    batch, n = x.shape[:-2], x.shape[-1]
    w = np.empty(batch + (n,), c)
    vl, vr = np.empty(x.shape, c), np.empty(x.shape, c)
    for idx in np.ndindex(batch):
        if n == 0:
            continue
        wi, vli, vri, info = _geev_one(x[idx], left, right)
        nan = None if info == 0 else _NAN["c"]
        w[idx] = wi if nan is None else nan
        if left:
            vl[idx] = vli if nan is None else nan
        if right:
            vr[idx] = vri if nan is None else nan
    return [w] + ([vl] if left else []) + ([vr] if right else [])


eig_p = new_primitive("eig", _eig_impl, _eig_aval, multiple_results=True)
weak_if_all_operands_weak(eig_p)  # JAX's standard weak-type rule
sharding_rules[eig_p] = linalg_rule("eig", (2,), _eig_aval)


def eig(x, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False):
    """[w] + [vl] + [vr] (those asked for): the eigenvalues and eigenvectors of
    each square matrix of the stack x, complex."""
    return eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors),
                      enable_eigvec_derivs=bool(enable_eigvec_derivs))


# ------------------------------------------------------------------ jvp ----

def _csolve(a, b):
    """x with a @ x = b for complex a [..., n, n], b [..., n, p], by the real
    system [[Re a, -Im a], [Im a, Re a]] [Re x; Im x] = [Re b; Im b]."""
    nd = len(shape_of(a))
    ar, ai, br, bi = E.real(a), E.imag(a), E.real(b), E.imag(b)
    big = concatenate([concatenate([ar, E.neg(ai)], nd - 1), concatenate([ai, ar], nd - 1)], nd - 2)
    x = _lu_solve(big, concatenate([br, bi], nd - 2))
    *batch, n, p = shape_of(b)
    zeros = (0,) * (nd - 2)
    xr = _slice(x, zeros + (0, 0), tuple(batch) + (n, p))
    xi = _slice(x, zeros + (n, 0), tuple(batch) + (2 * n, p))
    return E.complex(xr, xi)


def _vec_jvp(w, v, da):
    """(dw, dv) for right eigenvectors v of a (a v = v diag(w)) under geev's
    normalisation: unit 2-norm, largest-magnitude component real."""
    n = shape_of(w)[-1]
    nd = len(shape_of(v))
    eye = np.eye(n, dtype=dtype_of(v))
    # F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it.
    f = E.sub(E.div(const(v, 1), E.add(E.sub(_row(w), _col(w)), eye)), eye)
    p = mm(_csolve(v, da), v)
    dw = _diag(p)
    u = mm(v, E.mul(f, p))
    # dv_j = u_j + c_j v_j; the two real normalisation constraints fix c_j:
    # c_j = -Re(v_j^H u_j) - i Im(u[k_j, j]) / v[k_j, j], k_j = argmax_i |v[i, j]|.
    k = argmax(E.abs(v), nd - 2, np.int32)
    rows = broadcast_in_dim(np.arange(n, dtype=np.int32), shape_of(v), (nd - 2,))
    mask = E.convert_element_type(E.eq(rows, _row(k)), dtype_of(v))
    re = E.neg(E.real(reduce_sum(E.mul(E.conj(v), u), (nd - 2,))))
    im = E.neg(E.div(E.imag(reduce_sum(E.mul(mask, u), (nd - 2,))),
                     E.real(reduce_sum(E.mul(mask, v), (nd - 2,)))))
    return dw, E.add(u, E.mul(v, _row(E.complex(re, im))))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs):
    (a,), (da,) = primals, tangents
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    if (left or right) and not enable_eigvec_derivs:
        raise MissingRuleError(
            "eig: derivatives of non-symmetric eigenvectors are valid only where the eigenvalues are "
            "distinct and no eigenvector has two components tied for largest magnitude, which "
            "cannot be checked; pass enable_eigvec_derivs=True to opt in (as in JAX), or ask for "
            "eigenvalues only (compute_left_eigenvectors=False, compute_right_eigenvectors=False)")
    # Eigenvalue tangents diag(vr^-1 da vr) do not depend on the eigenvectors'
    # gauge, so their own derivatives are defined: eigenvalues alone are
    # differentiable to any order (JAX's stop at the first).
    outs = eig(a, left, True, enable_eigvec_derivs or not (left or right))
    w, vr = outs[0], outs[-1]
    primal_out = [w] + ([outs[1]] if left else []) + ([vr] if right else [])
    if da is None:
        return primal_out, [None] * len(primal_out)
    da = E.convert_element_type(da, dtype_of(vr)) if dtype_of(da) != dtype_of(vr) else da
    if not (left or right):
        return primal_out, [_diag(mm(_csolve(vr, da), vr))]
    dw, dvr = _vec_jvp(w, vr, da)
    tangents_out = [dw]
    if left:
        _, dvl = _vec_jvp(E.conj(w), outs[1], E.conj(mT(da)))
        tangents_out.append(dvl)
    if right:
        tangents_out.append(dvr)
    return primal_out, tangents_out


# -------------------------------------------------------------- lowering ----

def _eig_lowering(ctx, x, *, compute_left_eigenvectors, compute_right_eigenvectors,
                  enable_eigvec_derivs):
    outs = ctx.out_avals
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    dt = x.aval.dtype
    batch = x.aval.shape[:-2]
    if x.aval.shape[-1] == 0:
        return [ctx.full(0, o.dtype, o.shape) for o in outs]
    c = E._complex_dtype(dt)
    vec = ShapedArray(x.aval.shape, c)
    real = dt.kind != "c"
    w_avals = [ShapedArray(x.aval.shape[:-1], dt)] * (2 if real else 1)
    res = lapack.ffi_call(
        ctx, lapack.lapack_target("geev", dt), [x], w_avals + [vec, vec, ShapedArray(batch, np.int32)],
        attrs={"compute_left": lapack.char("V" if left else "N"),
               "compute_right": lapack.char("V" if right else "N")})
    *w, vl, vr, info = res
    if real:
        w = [ctx.op1("stablehlo.complex", w, outs[0])]
    picked = w + ([vl] if left else []) + ([vr] if right else [])
    return [_nan_if_failed(ctx, info, v) for v in picked]


jvp_rules[eig_p] = _eig_jvp
_batch_rule(eig_p)
lowering_rules[eig_p] = _eig_lowering

_EIG_HELPER = '''def _eig(x, left, right):
    import scipy.linalg
    c = np.result_type(x.dtype, np.complex64)
    w = np.empty(x.shape[:-1], c)
    vl, vr = np.empty(x.shape, c), np.empty(x.shape, c)
    for i in np.ndindex(x.shape[:-2]):
        w[i], vl[i], vr[i] = scipy.linalg.eig(x[i], left=True, right=True)
    return [w] + ([vl] if left else []) + ([vr] if right else [])
'''
defpython(eig_p, "_eig({0}, {compute_left_eigenvectors}, {compute_right_eigenvectors})", _EIG_HELPER)

check_eagerly(eig_p)
