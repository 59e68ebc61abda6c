"""Special-function primitives: the incomplete gamma and beta functions, the
a-derivative of igamma and the gamma sampler's implicit gradient, the scaled
Bessel functions i0e and i1e, and Hurwitz's zeta.

Eager impls call SciPy where SciPy has the function. XLA has CHLO ops for
zeta and bessel_i1e only; the other lowerings (and the eager impls of
igamma_grad_a and random_gamma_grad, which SciPy lacks) are written once,
below, as series and continued fractions over funcad ops: `_Eager` runs them
on NumPy with a Python loop, `_Emit` traces each stage to a jaxpr and emits it
into the StableHLO, the loops as `stablehlo.while`. The incomplete gamma
follows Cephes' igam/igamc (series for x <= max(1, a), else a continued
fraction), carrying the derivative in a alongside, as XLA's math library does.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadValueError
from ..core.staging import trace_to_jaxpr
from ..core.trace import batch_rules, lowering_rules, set_trace
from ..lowering.stablehlo import broadcast_operands, convert, elementwise_rule
from ._base import const, defjvp, defpython, new_primitive, shape_of, type_error, broadcast_shapes
from .elementwise import (_broadcasting_batch, _bind1, abs, add, binop, bitwise_and, bitwise_not,
                          bitwise_or, digamma, div, eq, exp, ge, gt, le, lgamma, log, log1p, lt, mul,
                          ne, neg, rsqrt, select_n, sign, sp, sqrt, sub, unop)
from .reductions import reduce_max

__all__ = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"]


# ---------------------------------------------------- running the algorithms ----

class _Eager:
    """Runs an algorithm on NumPy (inside an impl rule: no trace is current)."""

    @staticmethod
    def stage(fn, *vals):
        return fn(*vals)

    @staticmethod
    def loop(body, vals):
        # vals[0] is the per-element `enabled` mask; the loop ends when none is left.
        while np.any(vals[0]):
            vals = body(*vals)
        return vals


class _Emit:
    """Emits an algorithm into StableHLO: each stage is traced to a jaxpr and inlined."""

    def __init__(self, ctx):
        self.ctx = ctx

    @staticmethod
    def _trace(fn, avals):
        return trace_to_jaxpr(lambda *a: list(fn(*a)), avals, name=fn.__name__)

    def stage(self, fn, *vals):
        return self.ctx.call(self._trace(fn, [v.aval for v in vals]), vals)

    def loop(self, body, vals):
        avals = [v.aval for v in vals]
        cond = self._trace(lambda enabled, *_: [reduce_max(enabled)], avals)
        step = self._trace(body, avals)
        ctx = self.ctx
        return ctx.op("stablehlo.while", vals, avals,
                      regions=[ctx.region(avals, lambda c, *xs: c.call(cond, xs)),
                               ctx.region(avals, lambda c, *xs: c.call(step, xs))])


def _where(c, x, y):
    return select_n(c, y, x)


def _upcast(dtype):
    # The series need at least float32's range and precision.
    return np.dtype(np.float32) if np.dtype(dtype).itemsize < 4 else np.dtype(dtype)


def _impl_of(alg):
    """An impl rule running `alg(run, *operands)` on NumPy, in the operands' dtype."""
    def impl(*args):
        args = [np.asarray(a) for a in args]
        dtype = np.result_type(*args)
        shape = np.broadcast_shapes(*[a.shape for a in args])
        work = _upcast(dtype)
        args = [np.broadcast_to(a, shape).astype(work) for a in args]
        with set_trace(None), np.errstate(all="ignore"):
            out = alg(_Eager, *args)
        return np.asarray(out).astype(dtype)
    return impl


def _lowering_of(alg):
    """A lowering rule emitting `alg(run, *operands)` on operands broadcast to one shape."""
    def rule(ctx, *args):
        dtype = ctx.out_aval.dtype
        args, _ = broadcast_operands(ctx, *args)
        work = _upcast(dtype)
        args = [convert(ctx, a, work) for a in args]
        out = alg(_Emit(ctx), *args)
        return convert(ctx, out, dtype)
    return rule


def _scipy_impl(f):
    def impl(*args):
        dtype = np.result_type(*args)
        with np.errstate(all="ignore"):
            return np.asarray(f(*args)).astype(dtype)
    return impl


# ------------------------------------------------------- incomplete gamma ----
# Modes: the value P(a, x) or Q(a, x); dP/da (igamma_grad_a); and dx/da for
# x ~ Gamma(a, 1) at fixed P (random_gamma_grad), which is -dP/da / pdf(x).
# Both loops track d/da without the factor exp(a log x - x - lgamma(a)), so
# the sampler's gradient never forms that (often underflowing) factor.

_MAXITER = 2000
_BIG, _BIGINV = 4503599627370496.0, 2.220446049250313e-16


def _eps(x):
    return float(np.finfo(x.aval.dtype if hasattr(x, "aval") else np.result_type(x)).eps)


def _igamma_setup(a, x):
    one = const(x, 1)
    use_cf = bitwise_and(gt(x, one), gt(x, a))
    bad = bitwise_or(bitwise_or(lt(x, const(x, 0)), le(a, const(a, 0))), bitwise_or(ne(a, a), ne(x, x)))
    live = bitwise_not(bitwise_or(bad, bitwise_or(eq(x, const(x, 0)), eq(x, const(x, np.inf)))))
    safe_x = _where(live, x, one)
    safe_a = _where(live, a, one)
    zero = mul(safe_x, const(x, 0))
    ser = [bitwise_and(live, bitwise_not(use_cf)), safe_x, safe_a, safe_a, zero, add(one, zero),
           zero, add(one, zero), zero]
    y = sub(one, safe_a)
    z = add(add(safe_x, y), one)
    qkm1 = mul(z, safe_x)
    ans = div(add(safe_x, one), qkm1)
    cf = [bitwise_and(live, use_cf), safe_x, y, z, zero, add(one, zero), safe_x, add(safe_x, one), qkm1,
          zero, zero, zero, neg(safe_x), ans, div(mul(ans, safe_x), qkm1)]
    return ser + cf


def _series_body(derivative):
    def body(enabled, x, a, r, k, c, dc, ans, dans):
        r1 = add(r, const(r, 1))
        c1 = div(mul(c, x), r1)
        dc1 = sub(div(mul(dc, x), r1), div(c1, r1))
        ans1, dans1 = add(ans, c1), add(dans, dc1)
        k1 = add(k, const(k, 1))
        done = le(abs(c1), mul(abs(ans1), const(x, _eps(x))))
        if derivative:
            done = bitwise_and(done, le(abs(dc1), mul(abs(dans1), const(x, _eps(x)))))
        done = bitwise_or(done, ge(k1, const(k, _MAXITER)))
        new = [bitwise_and(enabled, bitwise_not(done)), x, a, r1, k1, c1, dc1, ans1, dans1]
        old = [enabled, x, a, r, k, c, dc, ans, dans]
        return [new[0]] + [_where(enabled, n, o) for n, o in zip(new[1:], old[1:])]
    return body


def _cf_body(derivative):
    def body(enabled, x, y, z, c, pkm2, qkm2, pkm1, qkm1, dpkm2, dqkm2, dpkm1, dqkm1, ans, dans):
        one = const(x, 1)
        c1, y1, z1 = add(c, one), add(y, one), add(z, const(z, 2))
        yc = mul(y1, c1)
        pk = sub(mul(pkm1, z1), mul(pkm2, yc))
        qk = sub(mul(qkm1, z1), mul(qkm2, yc))
        # d/da: y and z fall by 1 as a grows by 1, so d(yc) = -c.
        dpk = add(sub(sub(mul(dpkm1, z1), pkm1), mul(dpkm2, yc)), mul(pkm2, c1))
        dqk = add(sub(sub(mul(dqkm1, z1), qkm1), mul(dqkm2, yc)), mul(qkm2, c1))
        nz = ne(qk, const(qk, 0))
        safe_qk = _where(nz, qk, one)
        r = div(pk, safe_qk)
        t = _where(nz, abs(div(sub(ans, r), _where(nz, r, one))), one)
        ans1 = _where(nz, r, ans)
        dans1 = _where(nz, div(sub(dpk, mul(r, dqk)), safe_qk), dans)
        done = le(t, const(x, _eps(x)))
        if derivative:
            done = bitwise_and(done, le(abs(sub(dans1, dans)), mul(abs(dans1), const(x, _eps(x)))))
        done = bitwise_or(done, ge(c1, const(c, _MAXITER)))
        big = gt(abs(pk), const(pk, _BIG))
        scale = _where(big, const(pk, _BIGINV), one)
        new = [bitwise_and(enabled, bitwise_not(done)), x, y1, z1, c1,
               mul(pkm1, scale), mul(qkm1, scale), mul(pk, scale), mul(qk, scale),
               mul(dpkm1, scale), mul(dqkm1, scale), mul(dpk, scale), mul(dqk, scale), ans1, dans1]
        old = [enabled, x, y, z, c, pkm2, qkm2, pkm1, qkm1, dpkm2, dqkm2, dpkm1, dqkm1, ans, dans]
        return [new[0]] + [_where(enabled, n, o) for n, o in zip(new[1:], old[1:])]
    return body


def _igamma_finish(mode):
    def finish(a, x, s_ans, s_dans, c_ans, c_dans):
        one, zero, nan = const(x, 1), const(x, 0), const(x, np.nan)
        use_cf = bitwise_and(gt(x, one), gt(x, a))
        bad = bitwise_or(bitwise_or(lt(x, zero), le(a, zero)), bitwise_or(ne(a, a), ne(x, x)))
        x_zero, x_inf = eq(x, zero), eq(x, const(x, np.inf))
        live = bitwise_not(bitwise_or(bad, bitwise_or(x_zero, x_inf)))
        sx, sa = _where(live, x, one), _where(live, a, one)
        lx = log(sx)
        ax = sub(sub(mul(sa, lx), sx), lgamma(sa))
        dax = sub(lx, digamma(sa))
        if mode in ("p", "q"):
            p = div(mul(s_ans, exp(ax)), sa)
            q = mul(c_ans, exp(ax))
            if mode == "p":
                out, at_zero, at_inf = _where(use_cf, sub(one, q), p), zero, one
            else:
                out, at_zero, at_inf = _where(use_cf, q, sub(one, p)), one, zero
        else:
            # dP/da = exp(ax) * g with g from the series or (negated) the continued fraction.
            g_ser = div(add(s_dans, mul(s_ans, sub(dax, div(one, sa)))), sa)
            g_cf = neg(add(c_dans, mul(c_ans, dax)))
            g = _where(use_cf, g_cf, g_ser)
            out = mul(g, exp(ax)) if mode == "grad_a" else neg(mul(g, sx))
            at_zero, at_inf = zero, zero
        out = _where(x_zero, at_zero, _where(x_inf, at_inf, out))
        return [_where(bad, nan, out)]
    finish.__name__ = f"igamma_{mode}"
    return finish


def _igamma_alg(mode):
    derivative = mode in ("grad_a", "sample")

    def alg(run, a, x):
        init = run.stage(_igamma_setup, a, x)
        ser = run.loop(_series_body(derivative), init[:9])
        cf = run.loop(_cf_body(derivative), init[9:])
        return run.stage(_igamma_finish(mode), a, x, ser[7], ser[8], cf[13], cf[14])[0]
    return alg


def _funcad_source(name, n):
    """to_python for a primitive SciPy lacks: the emitted code calls funcad's own."""
    args = ", ".join("abcd"[:n])
    helper = f"def _{name}({args}):\n    from funcad import lax\n    return np.asarray(lax.{name}({args}))"
    return "_" + name + "(" + ", ".join(f"{{{i}}}" for i in range(n)) + ")", helper


def _float_binop(name, impl, alg=None, hlo=None, py=None):
    p = binop(name, impl, "f", hlo=hlo or _lowering_of(alg), py=py)
    if py is None:
        defpython(p, *_funcad_source(name, 2))
    return p


def _no_derivative(prim_name, arg, fix=""):
    def rule(t, ans, *args, **params):
        raise FuncadValueError(f"{prim_name}: the derivative with respect to {arg} is not supported "
                               f"(as in JAX){fix}")
    return rule


igamma_p = _float_binop("igamma", _scipy_impl(lambda a, x: sp.gammainc(a, x)), _igamma_alg("p"),
                        py="special.gammainc({0}, {1})")
igammac_p = _float_binop("igammac", _scipy_impl(lambda a, x: sp.gammaincc(a, x)), _igamma_alg("q"),
                         py="special.gammaincc({0}, {1})")
igamma_grad_a_p = _float_binop("igamma_grad_a", _impl_of(_igamma_alg("grad_a")), _igamma_alg("grad_a"))
random_gamma_grad_p = _float_binop("random_gamma_grad", _impl_of(_igamma_alg("sample")),
                                   _igamma_alg("sample"))


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x).

    >>> round(float(igamma(2.0, 1.0)), 6)
    0.264241
    """
    return igamma_p.bind(a, x)


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    >>> round(float(igammac(2.0, 1.0)), 6)
    0.735759
    """
    return igammac_p.bind(a, x)


def igamma_grad_a(a, x):
    """dP(a, x)/da, the derivative of igamma in its first argument.

    >>> round(float(igamma_grad_a(2.0, 1.0)), 6)
    -0.276196
    """
    return igamma_grad_a_p.bind(a, x)


def random_gamma_grad(a, x):
    """dx/da for a sample x ~ Gamma(a, 1) held at its quantile: -dP/da / pdf(x), the
    implicit reparameterisation gradient of the gamma sampler.

    >>> round(float(random_gamma_grad(2.0, 1.0)), 6)
    0.750779
    """
    return random_gamma_grad_p.bind(a, x)


def _igamma_dx(t, ans, a, x):
    # The gamma density: exp((a - 1) log x - x - lgamma(a)).
    return mul(t, exp(sub(sub(mul(sub(a, const(a, 1)), log(x)), x), lgamma(a))))


defjvp(igamma_p, lambda t, ans, a, x: mul(t, igamma_grad_a(a, x)), _igamma_dx)
defjvp(igammac_p, lambda t, ans, a, x: neg(mul(t, igamma_grad_a(a, x))),
       lambda t, ans, a, x: neg(_igamma_dx(t, ans, a, x)))
defjvp(igamma_grad_a_p, _no_derivative("igamma_grad_a", "a"), _no_derivative("igamma_grad_a", "x"))
defjvp(random_gamma_grad_p, _no_derivative("random_gamma_grad", "a"),
       _no_derivative("random_gamma_grad", "x"))
