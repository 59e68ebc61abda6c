"""fft: the discrete Fourier transform over an array's trailing axes, as
StableHLO's `fft` (one primitive, four types, up to three axes).

FFT and RFFT are unnormalised; IFFT and IRFFT divide by the number of points,
as XLA's do. The transform is linear, so its jvp applies it to the tangent;
the transposes are stated per type below.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadTypeError
from ..core.trace import batch_rules, lowering_rules, sharding_rules
from ..core.typed_sharding import same_as_operand
from ..lowering.stablehlo import i64_array
from ._base import deflinear, defpython, dtype_of, new_primitive, shape_of, type_error
from .elementwise import convert_element_type, mul
from .structural import concatenate, moveaxis0, pad, rev, slice


class FftType(enum.IntEnum):
    """Which transform `fft` computes: complex-to-complex forward or inverse,
    real-to-complex forward, complex-to-real inverse."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _complex_of(dtype) -> np.dtype:
    return np.dtype(np.complex128 if np.dtype(dtype) in (np.float64, np.complex128) else np.complex64)


def _real_of(dtype) -> np.dtype:
    return np.finfo(dtype).dtype


def _fft_aval(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if not 1 <= k <= 3 or k > x.ndim:
        raise type_error("fft", f"fft_lengths {fft_lengths} must name 1 to 3 trailing axes of the "
                         "operand; transform more axes in several steps", x)
    lead, minor = x.shape[:-k], x.shape[-k:]
    want = tuple(fft_lengths)
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.float32, np.float64):
            raise type_error("fft", "RFFT needs a float32 or float64 operand; cast with .astype(...)", x)
        shape, dtype = lead + want[:-1] + (want[-1] // 2 + 1,), _complex_of(x.dtype)
    else:
        if x.dtype.kind != "c":
            raise type_error("fft", f"{fft_type.name} needs a complex64 or complex128 operand; "
                             "cast with .astype(...)", x)
        if fft_type == FftType.IRFFT:
            want = want[:-1] + (want[-1] // 2 + 1,)
            shape, dtype = lead + tuple(fft_lengths), _real_of(x.dtype)
        else:
            shape, dtype = x.shape, x.dtype
    if minor != want:
        raise type_error("fft", f"the trailing axes {minor} must be {want} for {fft_type.name} "
                         f"with fft_lengths {tuple(fft_lengths)}", x)
    return ShapedArray(shape, dtype, x.weak_type)


_NUMPY = {FftType.FFT: (np.fft.fft, np.fft.fftn), FftType.IFFT: (np.fft.ifft, np.fft.ifftn),
          FftType.RFFT: (np.fft.rfft, np.fft.rfftn), FftType.IRFFT: (np.fft.irfft, np.fft.irfftn)}


def _fft_impl(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    one, many = _NUMPY[fft_type]
    # NumPy's fft warns from its own module on infinite inputs; XLA's gives the same nans quietly
    with np.errstate(invalid="ignore", over="ignore"):
        if len(fft_lengths) == 1:  # the common case, without fftn's axis bookkeeping
            out = one(x, fft_lengths[0]) if fft_type == FftType.IRFFT else one(x)
        else:
            axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
            out = many(x, fft_lengths, axes) if fft_type == FftType.IRFFT else many(x, axes=axes)
        return out.astype(_real_of(x.dtype) if fft_type == FftType.IRFFT else _complex_of(x.dtype), copy=False)


fft_p = new_primitive("fft", _fft_impl, _fft_aval)
# JAX's: the operand's spec, transformed axes too (XLA gathers them); a changed size
# (rfft, irfft) must stay divisible by its axes
sharding_rules[fft_p] = same_as_operand


def fft(x, fft_type: FftType | str, fft_lengths: tuple[int, ...]):
    """The FFT of `x` over its last len(fft_lengths) axes, as JAX's `lax.fft`: `fft_type`
    is an FftType or its name ("fft", "ifft", "rfft", "irfft"); the operand is converted
    to complex (to float for RFFT) first.

    >>> import numpy as np
    >>> fft(np.array([1.0, 2.0, 3.0, 4.0]), "rfft", (4,))
    Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex128)
    """
    typ = _fft_type(fft_type)
    lengths = tuple(int(n) for n in fft_lengths)
    dt = dtype_of(x)
    if typ == FftType.RFFT and dt.kind == "c":
        raise FuncadTypeError(f"fft: RFFT takes a real operand, got {dt}; use FFT for complex "
                              "input or take its real part first")
    target = fft_input_dtype(dt, typ)
    if dt != target:
        x = convert_element_type(x, target)
    if not lengths:
        return x  # XLA has no zero-dimensional FFT: the identity
    return fft_p.bind(x, fft_type=typ, fft_lengths=lengths)


def fft_input_dtype(dtype, fft_type: FftType) -> np.dtype:
    """The dtype an operand of dtype `dtype` is converted to, as NumPy's fft does:
    float16 computes in single precision, integers and booleans in double;
    RFFT takes the real dtype, the other types the complex one."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return dt
    real = dt if dt in (np.float32, np.float64) else np.dtype(
        np.float32 if dt.kind == "f" and dt.itemsize <= 2 else np.float64)
    return real if fft_type == FftType.RFFT else _complex_of(real)


def _fft_type(t) -> FftType:
    if isinstance(t, FftType):
        return t
    if isinstance(t, str) and t.upper() in FftType.__members__:
        return FftType[t.upper()]
    raise FuncadTypeError(f"fft: unknown fft_type {t!r}; pass an FftType or one of "
                          "'fft', 'ifft', 'rfft', 'irfft'")


# ------------------------------------------------------------- transposes ----
# FFT and IFFT are symmetric matrices, so each is its own transpose. RFFT is a
# real-to-complex FFT followed by a slice: its transpose pads, transforms and
# keeps the real part (the transpose of a real-to-complex conversion). IRFFT's
# transpose is conj(RFFT(ct)) / N with the folded-in frequencies doubled, and
# conj(RFFT(t)) is RFFT of t reflected (t[-j mod n]) on every transformed axis.

def reflect(t, axes):
    """t[-j mod n] along each of `axes`: for real t, conj(rfft(t)) is rfft(reflect(t))."""
    for a in axes:
        n = shape_of(t)[a]
        if n > 1:
            nd = len(shape_of(t))
            start, stop = [0] * nd, list(shape_of(t))
            stop[a] = 1
            head = slice(t, start, stop)
            start[a], stop[a] = 1, n
            t = concatenate([head, rev(slice(t, start, list(stop)), (a,))], a)
    return t


def _irfft_weights(lengths, dtype):
    n = lengths[-1]
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return (w / math.prod(lengths)).astype(dtype)


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    nd = len(shape_of(ct))
    axes = tuple(range(nd - k, nd))
    if fft_type in (FftType.FFT, FftType.IFFT):
        return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]
    if fft_type == FftType.RFFT:
        extra = fft_lengths[-1] - shape_of(ct)[-1]
        config = [(0, 0, 0)] * (nd - 1) + [(0, extra, 0)]
        full = pad(ct, np.zeros((), dtype_of(ct)), config) if extra else ct
        spectrum = fft_p.bind(full, fft_type=FftType.FFT, fft_lengths=fft_lengths)
        return [convert_element_type(spectrum, x.aval.dtype)]
    spectrum = fft_p.bind(reflect(ct, axes), fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    return [mul(spectrum, _irfft_weights(fft_lengths, dtype_of(spectrum)))]


deflinear(fft_p, _fft_transpose)


def _fft_batch(vals, dims, *, axis_size, fft_type, fft_lengths):
    (x,), (d,) = vals, dims
    if d >= len(shape_of(x)) - len(fft_lengths):
        x, d = moveaxis0(x, d, axis_size), 0
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), d


def _fft_lowering(ctx, x, *, fft_type, fft_lengths):
    attrs = f"fft_length = {i64_array(fft_lengths)}, fft_type = #stablehlo<fft_type {fft_type.name}>"
    return ctx.op1("stablehlo.fft", [x], ctx.out_aval, attrs)


_FFT_HELPER = '''def _fft(x, kind, lengths):
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    single = x.dtype in (np.float32, np.complex64)
    if kind == 3:
        return np.fft.irfftn(x, s=lengths, axes=axes).astype(np.float32 if single else np.float64)
    out = (np.fft.fftn, np.fft.ifftn, np.fft.rfftn)[kind](x, axes=axes)
    return out.astype(np.complex64 if single else np.complex128)
'''

batch_rules[fft_p] = _fft_batch
lowering_rules[fft_p] = _fft_lowering
defpython(fft_p, lambda eqn, a: f"_fft({a[0]}, {int(eqn.params['fft_type'])}, "
                                f"{tuple(eqn.params['fft_lengths'])})", _FFT_HELPER)
