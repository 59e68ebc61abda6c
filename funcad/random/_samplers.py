"""Samplers built on uniform bits: JAX's algorithms, so the values agree with JAX's.

Defaults follow JAX with x64 enabled, as the rest of funcad does: floats are
float64 and integers int64 unless `dtype` says otherwise.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .. import numpy as fnp
from ..core import x64
from ..core.trace import Tracer
from ..primitives import elementwise as E
from ..primitives import structural as S
from ..primitives.bits import bitcast_convert_type, clz, shift_left, shift_right_logical
from ._keys import _aval, canonical_shape, check_key, random_bits, split_key
from ..primitives.indexing import sort

__all__ = ["uniform", "normal", "truncated_normal", "bernoulli", "randint", "exponential",
           "gumbel", "laplace", "logistic", "cauchy", "lognormal", "pareto", "rayleigh",
           "weibull_min", "triangular", "wald", "rademacher", "maxwell", "double_sided_maxwell",
           "geometric", "categorical", "choice", "permutation"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


# ------------------------------------------------------------------ helpers ----

def _float_dtype(name, dtype, complex_ok=False):
    dtype = x64.default_float() if dtype is None else x64.explicit_dtype(dtype, name)
    if dtype.name == "bfloat16":  # ml_dtypes' bfloat16 has kind 'V'
        return dtype
    if dtype.kind != "f" and not (complex_ok and dtype.kind == "c"):
        what = "a float or complex" if complex_ok else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return dtype


def _int_dtype(name, dtype):
    dtype = x64.default_int() if dtype is None else x64.explicit_dtype(dtype, name)
    if dtype.kind not in "iu":
        raise TypeError(f"{name} only accepts integer dtypes, got {dtype}")
    return dtype


def _shape_of(x):
    return tuple(_aval(x).shape) if isinstance(x, Tracer) or hasattr(x, "dtype") else np.shape(x)


def _dtype_of(x):
    if isinstance(x, Tracer) or hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    return x64.canonicalize_dtype(np.asarray(x).dtype if not isinstance(x, float) else np.float64)


def _as(x, dtype):
    """`x` converted to `dtype` (a traced value with convert_element_type)."""
    if isinstance(x, Tracer) or hasattr(x, "aval"):
        return x if x.dtype == dtype else E.convert_element_type(x, dtype)
    return np.asarray(x).astype(dtype)


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        try:
            out = np.broadcast_shapes(shape, *param_shapes)
        except ValueError:
            out = None
        if out != tuple(shape):
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, and the "
                "result of broadcasting the shapes must equal the shape argument, but got result "
                f"{out} for shape argument {tuple(shape)}.")


def _shape_or_broadcast(name, shape, *params):
    pshapes = [_shape_of(p) for p in params]
    if shape is None:
        return tuple(np.broadcast_shapes(*pshapes)) if pshapes else ()
    shape = canonical_shape(shape)
    _check_shape(name, shape, *pshapes)
    return shape


def _c(value, dtype):
    return np.array(value, dtype)


def _finfo(dtype):
    return ml_dtypes.finfo(dtype)


# ------------------------------------------------------------ uniform, normal ----

def _uniform(key, shape, dtype, minval, maxval):
    info = _finfo(dtype)
    nbits, nmant = info.bits, int(info.nmant)
    rng_bits = nbits if nmant >= 8 else 8
    udt = np.dtype(_UINT[nbits // 8])
    raw = random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        raw = E.convert_element_type(raw, udt)
    # The top nmant bits become the mantissa of a float in [1, 2).
    mant = shift_right_logical(raw, _c(rng_bits - nmant, udt))
    one_bits = np.array(1.0, dtype).view(udt)
    floats = E.sub(bitcast_convert_type(E.bitwise_or(mant, one_bits), dtype), _c(1, dtype))
    minval, maxval = _as(minval, dtype), _as(maxval, dtype)
    return E.max(minval, E.add(E.mul(floats, E.sub(maxval, minval)), minval))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in [minval, maxval), JAX's values for the key.

    >>> import funcad.random as fr
    >>> fr.uniform(fr.PRNGKey(0), (2,)).dtype
    dtype('float64')
    """
    key = check_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    return _uniform(key, canonical_shape(shape), dtype, minval, maxval)


def _normal_real(key, shape, dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(key, shape, dtype, lo, _c(1.0, dtype))
    return E.mul(_c(np.sqrt(2), dtype), _erf_inv(u))


def _erf_inv(u):
    # Half-precision erf_inv is computed in float32 (as XLA does), then rounded back.
    if np.dtype(u.dtype).itemsize >= 4:
        return E.erf_inv(u)
    return E.convert_element_type(E.erf_inv(E.convert_element_type(u, np.float32)), u.dtype)


def normal(key, shape=(), dtype=None):
    """Standard normal samples (sqrt(2)·erfinv of a uniform), JAX's values for the key.

    >>> import funcad.random as fr
    >>> fr.normal(fr.PRNGKey(0), (3,)).shape
    (3,)
    """
    key = check_key("normal", key)
    dtype = _float_dtype("normal", dtype, complex_ok=True)
    shape = canonical_shape(shape)
    if dtype.kind == "c":
        real = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        k_re, k_im = _two(key)
        re = E.convert_element_type(_normal_real(k_re, shape, real), dtype)
        im = E.convert_element_type(_normal_real(k_im, shape, real), dtype)
        return E.div(E.add(re, E.mul(_c(1j, dtype), im)), _c(np.sqrt(2), dtype))
    return _normal_real(key, shape, dtype)


def _two(key, n=2):
    keys = split_key(key, (n,))
    w = _aval(keys).shape[-1]  # the key data's width: 1, 2 or 4 words
    return [S.reshape(S.slice(keys, (i, 0), (i + 1, w)), (w,)) for i in range(n)]


def _nextafter(x, up: bool):
    """The next float after x toward +inf (up) or -inf, written with bit operations."""
    dtype = np.dtype(x.dtype)
    idt = np.dtype(f"i{dtype.itemsize}")
    b = bitcast_convert_type(x, idt)
    one = _c(1, idt)
    away = E.add(b, one)
    toward = E.sub(b, one)
    zero = E.eq(x, _c(0, dtype))
    pos = E.gt(x, _c(0, dtype))
    step = E.select_n(pos, toward if up else away, away if up else toward)
    tiny = _c(1 if up else np.iinfo(idt).min + 1, idt)
    step = E.select_n(zero, step, fnp.broadcast_to(tiny, _shape_of(x)))
    keep = E.bitwise_or(E.ne(x, x), E.eq(x, _c(np.inf if up else -np.inf, dtype)))
    return E.select_n(keep, bitcast_convert_type(step, dtype), x)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Normal samples truncated to (lower, upper), by inverting the CDF as JAX does.

    >>> import funcad.random as fr
    >>> bool((abs(fr.truncated_normal(fr.PRNGKey(0), -1.0, 1.0, (5,))) < 1).all())
    True
    """
    key = check_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    shape = _shape_or_broadcast("truncated_normal", shape, lower, upper)
    sqrt2 = _c(np.sqrt(2), dtype)
    lower, upper = fnp.asarray(_as(lower, dtype)), fnp.asarray(_as(upper, dtype))
    a = E.erf(E.div(lower, sqrt2))
    b = E.erf(E.div(upper, sqrt2))
    u = _uniform(key, shape, dtype, a, b)
    out = E.mul(sqrt2, _erf_inv(u))
    lo = _nextafter(E.stop_gradient(lower), True)
    hi = _nextafter(E.stop_gradient(upper), False)
    return fnp.minimum(fnp.maximum(out, lo), hi)


def bernoulli(key, p=0.5, shape=None, mode: str = "low"):
    """Booleans that are True with probability p.

    >>> import funcad.random as fr
    >>> fr.bernoulli(fr.PRNGKey(0), 0.5, (4,)).dtype
    dtype('bool')
    """
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    key = check_key("bernoulli", key)
    dtype = _dtype_of(p)
    if dtype.kind != "f":
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    shape = _shape_or_broadcast("bernoulli", shape, p)
    p = fnp.asarray(_as(p, dtype))
    if mode == "high":
        u = _uniform(key, (2,) + shape, dtype, 0.0, 1.0)
        u1, u2 = S.squeeze(S.slice(u, (0,) + (0,) * len(shape), (1,) + shape), (0,)), \
            S.squeeze(S.slice(u, (1,) + (0,) * len(shape), (2,) + shape), (0,))
        u2 = E.mul(u2, _c(2.0 ** -int(_finfo(dtype).nmant), dtype))
        return fnp.less(u2, E.sub(p, u1))
    return fnp.less(_uniform(key, shape, dtype, 0.0, 1.0), p)


# ------------------------------------------------------------------- randint ----

def _clip_int(val, dtype):
    """Clip an integer array into dtype's range (in val's own dtype), then convert."""
    vi, di = np.iinfo(val.dtype), np.iinfo(dtype)
    lo, hi = max(vi.min, di.min), min(vi.max, di.max)
    return E.convert_element_type(fnp.clip(val, _c(lo, val.dtype), _c(hi, val.dtype)), dtype)


def randint(key, shape, minval, maxval, dtype=None):
    """Integers uniform in [minval, maxval), JAX's values for the key.

    >>> import funcad.random as fr
    >>> fr.randint(fr.PRNGKey(0), (3,), 0, 10).dtype
    dtype('int64')
    """
    key = check_key("randint", key)
    dtype = _int_dtype("randint", dtype)
    shape = canonical_shape(shape)
    info = np.iinfo(dtype)
    if info.bits < 32:  # sample as int32, as JAX does
        minval = fnp.clip(fnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
        maxval = fnp.clip(fnp.asarray(maxval).astype(np.int32), int(info.min), int(info.max) + 1)
        return _randint(key, shape, minval, maxval, np.dtype(np.int32)).astype(dtype)
    return _randint(key, shape, minval, maxval, dtype)


def _randint(key, shape, minval, maxval, dtype):
    _check_shape("randint", shape, _shape_of(minval), _shape_of(maxval))
    minval, maxval = fnp.asarray(minval), fnp.asarray(maxval)
    if minval.dtype.kind not in "iu":
        minval = minval.astype(int)  # the default int: no x64 warning
    if maxval.dtype.kind not in "iu":
        maxval = maxval.astype(int)
    with np.errstate(over="ignore"):
        out_of_range = E.gt(maxval, _clip_int(np.array(np.iinfo(dtype).max, dtype), maxval.dtype))
        minval, maxval = _clip_int(minval, dtype), _clip_int(maxval, dtype)
        nbits = np.iinfo(dtype).bits
        udt = np.dtype(_UINT[nbits // 8])
        k1, k2 = _two(key)
        higher, lower = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
        span = E.convert_element_type(E.sub(maxval, minval), udt)
        span = fnp.where(E.le(maxval, minval), _c(1, udt), span)
        span = fnp.where(E.bitwise_and(out_of_range, E.gt(maxval, minval)), E.add(span, _c(1, udt)), span)
        # span wraps to 0 for the full range; XLA's x % 0 is x, so then the offset is `lower`.
        full = E.eq(span, _c(0, udt))
        span = fnp.where(full, _c(1, udt), span)
        # (hi * 2**(nbits/2) + lo) mod span, computed without overflow.
        mult = E.rem(_c(2 ** (nbits // 2), udt), span)
        mult = E.rem(E.mul(mult, mult), span)
        offset = E.add(E.mul(E.rem(higher, span), mult), E.rem(lower, span))
        offset = fnp.where(full, lower, E.rem(offset, span))
        return E.add(minval, E.convert_element_type(offset, dtype))


# ------------------------------------------------------- transforms of uniform ----

def exponential(key, shape=(), dtype=None):
    """Exponential(1) samples: -log1p(-u)."""
    key = check_key("exponential", key)
    dtype = _float_dtype("exponential", dtype)
    u = _uniform(key, canonical_shape(shape), dtype, 0.0, 1.0)
    return E.neg(E.log1p(E.neg(u)))


def _safe_int_to_float(hi, lo):
    """A float32 in (0, 1) from 64 random bits, keeping precision near 0 (JAX's 'highest')."""
    u32 = np.uint32
    hiclz, loclz = clz(hi), clz(lo)
    hi_is_zero = E.eq(hiclz, _c(32, u32))
    mant = E.bitwise_or(shift_left(hi, hiclz), fnp.where(
        hi_is_zero, shift_left(lo, loclz), shift_right_logical(lo, E.sub(_c(32, u32), hiclz))))
    mant = shift_right_logical(mant, _c(32 - 23 - 1, u32))
    mant = E.bitwise_and(mant, _c((1 << 23) - 1, u32))
    lead = fnp.where(hi_is_zero, E.add(_c(32, u32), loclz), hiclz)
    exp = shift_left(E.sub(_c(126, u32), lead), _c(23, u32))
    exp = E.bitwise_and(exp, _c((1 << 30) - (1 << 22), u32))
    return bitcast_convert_type(E.bitwise_or(exp, mant), np.float32)


def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel samples: -log(-log(u)) ('high'/'highest' modes keep more bits near 0)."""
    key = check_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    shape = canonical_shape(shape)
    info = _finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        u32 = np.uint32
        raw = random_bits(key, 32, (2,) + shape)
        neg = E.bitwise_not(raw)
        b0 = S.squeeze(S.slice(raw, (0,) + (0,) * len(shape), (1,) + shape), (0,))
        b1 = S.squeeze(S.slice(raw, (1,) + (0,) * len(shape), (2,) + shape), (0,))
        n0 = S.squeeze(S.slice(neg, (0,) + (0,) * len(shape), (1,) + shape), (0,))
        n1 = S.squeeze(S.slice(neg, (1,) + (0,) * len(shape), (2,) + shape), (0,))
        n0 = E.add(n0, E.convert_element_type(E.eq(n1, _c(0xFFFFFFFF, u32)), u32))
        n1 = E.add(n1, _c(1, u32))
        flip = E.lt(b0, _c(1 << 31, u32))
        x = _safe_int_to_float(fnp.where(flip, b0, n0), fnp.where(flip, b1, n1))
        return fnp.where(flip, E.neg(E.log(E.neg(E.log1p(E.neg(x))))), E.neg(E.log(E.neg(E.log(x)))))
    if mode in ("high", "highest"):
        u = _uniform(key, (2,) + shape, dtype, 0.0, 1.0)
        high = S.squeeze(S.slice(u, (0,) + (0,) * len(shape), (1,) + shape), (0,))
        low = S.squeeze(S.slice(u, (1,) + (0,) * len(shape), (2,) + shape), (0,))
        nm = int(info.nmant)
        x = fnp.where(E.ge(high, _c(0.5, dtype)), high, E.add(E.add(
            high, E.mul(_c(2.0 ** -nm, dtype), low)), _c(max(2.0 ** -(2 * nm + 1), float(info.tiny)), dtype)))
        return E.neg(E.log(E.neg(E.log1p(E.neg(x)))))
    u = _uniform(key, shape, dtype, _c(info.tiny, dtype), 1.0)
    return E.neg(E.log(E.neg(E.log(u))))


def laplace(key, shape=(), dtype=None):
    """Laplace(0, 1) samples."""
    key = check_key("laplace", key)
    dtype = _float_dtype("laplace", dtype)
    u = _uniform(key, canonical_shape(shape), dtype, _c(-1.0 + _finfo(dtype).epsneg, dtype), 1.0)
    return E.mul(E.sign(u), E.log1p(E.neg(E.abs(u))))


def logistic(key, shape=(), dtype=None):
    """Standard logistic samples: log(u) - log1p(-u)."""
    key = check_key("logistic", key)
    dtype = _float_dtype("logistic", dtype)
    x = _uniform(key, canonical_shape(shape), dtype, _c(_finfo(dtype).tiny, dtype), 1.0)
    return E.sub(E.log(x), E.log1p(E.neg(x)))


def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy samples: tan(pi (u - 1/2)), JAX's values for the key."""
    key = check_key("cauchy", key)
    dtype = _float_dtype("cauchy", dtype)
    u = _uniform(key, canonical_shape(shape), dtype, _c(_finfo(dtype).eps, dtype), 1.0)
    return E.tan(E.mul(_c(np.pi, dtype), E.sub(u, _c(0.5, dtype))))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """exp(sigma * normal)."""
    key = check_key("lognormal", key)
    dtype = _float_dtype("lognormal", dtype)
    shape = _shape_or_broadcast("lognormal", shape, sigma)
    return E.exp(fnp.multiply(_normal_real(key, shape, dtype), _as(sigma, dtype)))


def pareto(key, b, shape=None, dtype=None):
    """Pareto(b) samples: exp(exponential / b)."""
    key = check_key("pareto", key)
    dtype = _float_dtype("pareto", dtype)
    shape = _shape_or_broadcast("pareto", shape, b)
    e = exponential(key, shape, dtype)
    return E.exp(fnp.divide(e, _as(b, dtype)))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh(scale) samples: scale * sqrt(-2 log u)."""
    key = check_key("rayleigh", key)
    dtype = _float_dtype("rayleigh", dtype)
    shape = _shape_or_broadcast("rayleigh", shape, scale)
    u = _uniform(key, shape, dtype, 0.0, 1.0)
    scale = fnp.broadcast_to(_as(scale, dtype), shape)
    return E.mul(scale, E.sqrt(E.mul(E.log(u), _c(-2, dtype))))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples: (-log1p(-u)) ** (1 / concentration) * scale."""
    key = check_key("weibull_min", key)
    dtype = _float_dtype("weibull_min", dtype)
    u = _uniform(key, canonical_shape(shape), dtype, 0.0, 1.0)
    conc, scale = fnp.asarray(_as(concentration, dtype)), fnp.asarray(_as(scale, dtype))
    return fnp.multiply(fnp.power(E.neg(E.log1p(E.neg(u))), E.div(_c(1, dtype), conc)), scale)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular(left, mode, right) samples by inverting the CDF."""
    key = check_key("triangular", key)
    dtype = _float_dtype("triangular", dtype)
    shape = _shape_or_broadcast("triangular", shape, left, mode, right)
    left, right, mode = (fnp.broadcast_to(_as(v, dtype), shape) for v in (left, right, mode))
    fc = E.div(E.sub(mode, left), E.sub(right, left))
    u = _uniform(key, shape, dtype, 0.0, 1.0)
    out1 = E.add(left, E.sqrt(E.mul(E.mul(u, E.sub(right, left)), E.sub(mode, left))))
    out2 = E.sub(right, E.sqrt(E.mul(E.mul(E.sub(_c(1, dtype), u), E.sub(right, left)),
                                     E.sub(right, mode))))
    return fnp.where(E.lt(u, fc), out1, out2)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) samples with the given mean."""
    key = check_key("wald", key)
    dtype = _float_dtype("wald", dtype)
    shape = _shape_or_broadcast("wald", shape, mean)
    k1, k2 = _two(key)
    mean = fnp.broadcast_to(_as(mean, dtype), shape)
    v = _normal_real(k1, shape, dtype)
    z = _uniform(k2, shape, dtype, 0.0, 1.0)
    y = E.integer_pow(v, 2)
    y_sq = E.integer_pow(y, 2)
    mean_sq = E.integer_pow(mean, 2)
    sqrt_term = E.sqrt(E.add(E.mul(E.mul(_c(4, dtype), mean), y), E.mul(mean_sq, y_sq)))
    x = E.sub(E.add(mean, E.div(E.mul(mean_sq, y), _c(2, dtype))),
              E.mul(E.div(mean, _c(2, dtype)), sqrt_term))
    return fnp.where(E.le(z, E.div(mean, E.add(mean, x))), x, E.div(mean_sq, x))


def rademacher(key, shape=(), dtype=None):
    """Random signs, -1 or +1 with equal probability."""
    key = check_key("rademacher", key)
    dtype = x64.default_int() if dtype is None else x64.explicit_dtype(dtype, "rademacher")
    b = bernoulli(key, 0.5, canonical_shape(shape)).astype(dtype)
    return (2 * b - 1).astype(dtype)


def maxwell(key, shape=(), dtype=None):
    """Maxwell samples: the norm of three standard normals."""
    key = check_key("maxwell", key)
    dtype = _float_dtype("maxwell", dtype)
    shape = canonical_shape(shape)
    x = _normal_real(key, shape + (3,), dtype)
    return E.sqrt(fnp.sum(E.mul(x, x), axis=-1))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell samples with a random sign, scaled and shifted."""
    key = check_key("double_sided_maxwell", key)
    dtype = _float_dtype("double_sided_maxwell", dtype)
    shape = canonical_shape(shape)
    params = tuple(np.broadcast_shapes(_shape_of(loc), _shape_of(scale)))
    shape = (shape or params) + params
    k1, k2 = _two(key)
    m = maxwell(k1, shape, dtype)
    sign = rademacher(k2, shape, dtype)
    return fnp.add(fnp.multiply(E.mul(sign, m), scale), loc)


def geometric(key, p, shape=None, dtype=None):
    """Geometric samples (number of trials to the first success), as integers."""
    key = check_key("geometric", key)
    dtype = _int_dtype("geometric", dtype)
    shape = _shape_or_broadcast("geometric", shape, p)
    p = fnp.asarray(p)
    if p.dtype.kind != "f":
        p = p.astype(float)
    u = _uniform(key, shape, p.dtype, 0.0, 1.0)
    u = fnp.where(E.eq(u, _c(0, p.dtype)), _c(1, p.dtype), u)
    g = E.add(E.floor(E.div(E.log(u), fnp.broadcast_to(E.log1p(E.neg(p)), shape))), _c(1, p.dtype))
    return g.astype(dtype)


# ------------------------------------------------------ discrete choices ----

def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True, mode=None):
    """Indices drawn from softmax(logits) along `axis` (the Gumbel-max trick, as JAX)."""
    key = check_key("categorical", key)
    logits = fnp.asarray(logits)
    nd = logits.ndim
    if not -nd <= axis < nd:
        raise ValueError(f"axis {axis} is out of bounds for logits of rank {nd}")
    batch_shape = tuple(np.delete(np.array(logits.shape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape)
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        ax = axis - nd if axis >= 0 else axis
        lshape = list(shape[len(shape) - len(batch_shape):])
        lshape.insert(ax % nd, logits.shape[ax])
        g = gumbel(key, (*prefix, *lshape), logits.dtype, mode=mode)
        expanded = S.reshape(logits, (1,) * len(prefix) + tuple(logits.shape))
        return fnp.argmax(fnp.add(g, expanded), axis=ax)
    logits = fnp.add(logits, gumbel(key, logits.shape, logits.dtype, mode=mode))
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of "
                         f"categories ({logits.shape[axis]}).")
    idx = _top_k_indices(fnp.moveaxis(logits, axis, -1), k)
    idx = fnp.moveaxis(idx, -1, 0).astype(np.int32)  # lax.top_k's index dtype
    return fnp.reshape(idx, shape)


def _top_k_indices(x, k):
    """Indices of the k largest entries along the last axis, largest first (ties: lower index)."""
    n = x.shape[-1]
    idx = fnp.broadcast_to(S.iota(np.int64, (n,), 0), x.shape)
    _, _, perm = sort([E.neg(x), idx, idx], x.ndim - 1, num_keys=2)
    return S.slice(perm, (0,) * x.ndim, tuple(x.shape[:-1]) + (k,))


def _shuffle(key, x, axis):
    exponent = 3  # rounds so that sort-key collisions are unlikely (JAX's choice)
    size = int(np.prod(x.shape, dtype=np.int64))
    rounds = int(np.ceil(exponent * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, sub = _two(key)
        sort_keys = random_bits(sub, 32, tuple(x.shape))
        _, x = sort([sort_keys, x], axis, num_keys=1)
    return x


def permutation(key, x, axis: int = 0, independent: bool = False):
    """A random permutation of range(x) (an int) or of x along `axis`."""
    key = check_key("permutation", key)
    if not hasattr(x, "shape") and not isinstance(x, (int, np.integer)):
        x = np.asarray(x)
    nd = len(_shape_of(x))
    if not nd:
        if _dtype_of(x).kind not in "iu":
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(key, S.iota(np.int64, (int(x),), 0), 0)
    if not -nd <= axis < nd:
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {nd}")
    axis %= nd
    x = fnp.asarray(x)
    if x.size == 0:  # nothing to move (a (0, n) array has no row to take)
        return x
    if independent or nd == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, S.iota(np.int64, (x.shape[axis],), 0), 0)
    return fnp.take(x, ind, axis=axis, mode="clip")


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0, mode=None):
    """Samples from a (an int n means range(n)), with or without replacement, weights p."""
    key = check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of funcad.random.choice must be a sequence, got {shape}")
    shape = canonical_shape(shape)
    arr = fnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        if not -arr.ndim <= axis < arr.ndim:
            raise ValueError(f"axis {axis} is out of bounds for an array of rank {arr.ndim}")
        axis %= arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return fnp.zeros(shape, arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size "
                         f"{n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else fnp.take(arr, ind, axis=axis, mode="clip")
        else:
            perm = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)
            result = S.slice(perm, (0,) * perm.ndim,
                             tuple(n_draws if d == axis else s for d, s in enumerate(perm.shape)))
    else:
        p = fnp.asarray(p)
        if p.dtype.kind != "f":
            p = p.astype(float)  # the default float: no x64 warning
        if p.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {p.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            cum = fnp.cumsum(p)
            r = fnp.multiply(cum[-1], E.sub(_c(1, cum.dtype), uniform(key, shape, cum.dtype)))
            # searchsorted(cum, r, side='left') is the number of entries below r.
            ind = fnp.sum(fnp.less(cum, fnp.expand_dims(r, -1)), axis=-1).astype(int)
        else:
            g = fnp.add(gumbel(key, (n_inputs,), p.dtype, mode=mode), fnp.log(p))
            ind = _top_k_indices(g, n_draws)
        result = ind if arr.ndim == 0 else fnp.take(arr, ind, axis=axis, mode="clip")
    out_shape = shape if arr.ndim == 0 else arr.shape[:axis] + tuple(shape) + arr.shape[axis + 1:]
    return fnp.reshape(result, out_shape)
