"""Bit-level primitives: shifts, bitcasts, bit counts, and the threefry-2x32 hash.

Each primitive is one block registering every rule here: NumPy impl, shape
rule, jvp (integer outputs: symbolic zero tangents), batching, StableHLO
lowering and the `to_python` template. Shift semantics are XLA's: the shift
amount is read as unsigned, and shifting by the bit width or more gives 0
(or the sign fill for the arithmetic right shift), where C and NumPy leave
it undefined.
"""
from __future__ import annotations

import operator

import numpy as np

from ..core.avals import ShapedArray
from ..core.narrow import bit_width, is_narrow
from ..core.errors import FuncadTypeError, ShardingTypeError
from ..core.trace import batch_rules, lowering_rules, sharding_rules as _sharding_rules
from ..core.typed_sharding import broadcasting_rule, spec_of
from ..lowering.stablehlo import (binary, broadcast, broadcast_operands, compare, elementwise_rule,
                                 i64_array)
from ._base import broadcast_shapes, defpython, defzero, new_primitive, type_error
from .structural import moveaxis0, reshape

__all__ = ["shift_left", "shift_right_logical", "shift_right_arithmetic", "bitcast_convert_type",
           "population_count", "clz", "threefry2x32", "reduce_precision"]

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _vectorized_batch(prim):
    def rule(vals, dims, *, axis_size, **params):
        return prim.bind(*vals, **params), dims[0]
    batch_rules[prim] = rule


def _broadcasting_batch(prim):
    """Batch axes moved to the front and ranks padded, so NumPy broadcasting lines them up."""
    def rule(vals, dims, *, axis_size, **params):
        rank = max(np.ndim(v) - (d is not None) for v, d in zip(vals, dims))
        out = []
        for v, d in zip(vals, dims):
            if d is not None:
                v = moveaxis0(v, d, axis_size)
                s = np.shape(v)
                pad = rank - (len(s) - 1)
                v = reshape(v, (s[0],) + (1,) * pad + tuple(s[1:])) if pad else v
            out.append(v)
        res = prim.bind(*out, **params)
        return res, ([0] * len(res) if prim.multiple_results else 0)
    batch_rules[prim] = rule


# ------------------------------------------------------------------ shifts ----

def _shift_aval(name):
    def rule(x, y):
        if x.dtype != y.dtype:
            raise type_error(name, "operands must have one integer dtype (cast the shift amount "
                             "with .astype(x.dtype))", x, y)
        if x.dtype.kind not in "iu":
            raise type_error(name, "it needs integer operands; cast with .astype(...) or use "
                             "bitcast_convert_type for the bits of a float", x, y)
        try:
            shape = broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise type_error(name, "shapes do not broadcast together", x, y) from None
        return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)
    return rule


def _shift_impl(kind):
    def impl(x, y):
        x, y = np.asarray(x), np.asarray(y)
        nbits = x.dtype.itemsize * 8
        u = _UNSIGNED[x.dtype.itemsize]
        amount = y.astype(u, copy=False)  # XLA reads the amount as unsigned
        inside = amount < nbits
        safe = np.where(inside, amount, 0).astype(u)
        if kind == "left":
            out = np.left_shift(x.view(u), safe).view(x.dtype)
            return np.where(inside, out, np.zeros((), x.dtype))
        if kind == "logical":
            out = np.right_shift(x.view(u), safe).view(x.dtype)
            return np.where(inside, out, np.zeros((), x.dtype))
        # XLA shifts the bit pattern, filling with the top bit, for unsigned types too.
        signed = x.view(np.dtype(f"i{x.dtype.itemsize}"))
        clamped = np.minimum(amount, nbits - 1).astype(signed.dtype)
        return np.right_shift(signed, clamped).view(x.dtype)
    return impl


def _shift_lowering(name):
    def rule(ctx, x, y):
        (x, y), _ = broadcast_operands(ctx, x, y)
        return binary(ctx, name, x, y, ctx.out_aval)
    return rule


_SHIFT_HELPERS = {
    "shift_left": '''def _shift_left(x, y):
    x = np.asarray(x); u = np.dtype(f"u{x.dtype.itemsize}"); n = np.asarray(y).astype(u)
    return np.where(n < 8 * x.dtype.itemsize, np.left_shift(x.view(u), n % (8 * x.dtype.itemsize)).view(x.dtype), 0).astype(x.dtype)
''',
    "shift_right_logical": '''def _shift_right_logical(x, y):
    x = np.asarray(x); u = np.dtype(f"u{x.dtype.itemsize}"); n = np.asarray(y).astype(u)
    return np.where(n < 8 * x.dtype.itemsize, np.right_shift(x.view(u), n % (8 * x.dtype.itemsize)).view(x.dtype), 0).astype(x.dtype)
''',
    "shift_right_arithmetic": '''def _shift_right_arithmetic(x, y):
    x = np.asarray(x); bits = 8 * x.dtype.itemsize; s = x.view(f"i{x.dtype.itemsize}")
    n = np.minimum(np.asarray(y).astype(f"u{x.dtype.itemsize}"), bits - 1).astype(s.dtype)
    return np.right_shift(s, n).view(x.dtype)
''',
}

shift_left_p = new_primitive("shift_left", _shift_impl("left"), _shift_aval("shift_left"))
shift_right_logical_p = new_primitive("shift_right_logical", _shift_impl("logical"),
                                      _shift_aval("shift_right_logical"))
shift_right_arithmetic_p = new_primitive("shift_right_arithmetic", _shift_impl("arithmetic"),
                                         _shift_aval("shift_right_arithmetic"))
for _p, _op in [(shift_left_p, "stablehlo.shift_left"),
                (shift_right_logical_p, "stablehlo.shift_right_logical"),
                (shift_right_arithmetic_p, "stablehlo.shift_right_arithmetic")]:
    defzero(_p)
    _broadcasting_batch(_p)
    lowering_rules[_p] = _shift_lowering(_op)
    defpython(_p, "_" + _p.name + "({0}, {1})", _SHIFT_HELPERS[_p.name])


def shift_left(x, y):
    """x << y elementwise, 0 where y >= the bit width (XLA's semantics).

    >>> int(shift_left(np.uint32(1), np.uint32(31)))
    2147483648
    """
    return shift_left_p.bind(x, y)


def shift_right_logical(x, y):
    """x >> y filling with zeros (also for signed x), 0 where y >= the bit width.

    >>> int(shift_right_logical(np.int8(-128), np.int8(4)))
    8
    """
    return shift_right_logical_p.bind(x, y)


def shift_right_arithmetic(x, y):
    """x >> y filling with the sign bit; the sign fill where y >= the bit width.

    >>> int(shift_right_arithmetic(np.int8(-128), np.int8(4)))
    -8
    """
    return shift_right_arithmetic_p.bind(x, y)


# ----------------------------------------------------------------- bitcast ----

def _bitcast_aval(x, *, new_dtype):
    new_dtype = np.dtype(new_dtype)
    old = x.dtype
    if old.kind == "b" or new_dtype.kind == "b":
        raise type_error("bitcast_convert_type", f"cannot bitcast to or from bool (to {new_dtype})", x)
    w_old, w_new = bit_width(old), bit_width(new_dtype)
    if w_old == w_new:
        return ShapedArray(x.shape, new_dtype)
    if max(w_old, w_new) % min(w_old, w_new):
        raise type_error("bitcast_convert_type", f"{old} ({w_old} bits) and {new_dtype} ({w_new} "
                         "bits) do not divide each other", x)
    if w_old > w_new:
        return ShapedArray(x.shape + (w_old // w_new,), new_dtype)
    ratio = w_new // w_old
    if not x.shape or x.shape[-1] != ratio:
        raise type_error("bitcast_convert_type", f"to the wider {new_dtype} the last axis must have "
                         f"size {ratio} (the number of {old} words in one {new_dtype})", x)
    return ShapedArray(x.shape[:-1], new_dtype)


def _bit_patterns(x):
    """Each element's bits as an unsigned integer (a narrow dtype's sit in the low bits)."""
    return x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)


def _from_bit_patterns(p, dtype):
    return p.astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)


def _bitcast_impl(x, *, new_dtype):
    x = np.asarray(x)
    new_dtype = np.dtype(new_dtype)
    if not (is_narrow(x.dtype) or is_narrow(new_dtype)):
        if x.dtype.itemsize == new_dtype.itemsize:
            return x.view(new_dtype)  # (ascontiguousarray would make a 0-d array 1-d)
        x = np.ascontiguousarray(x)
        out_shape = _bitcast_aval(ShapedArray(x.shape, x.dtype), new_dtype=new_dtype).shape
        return x.reshape(-1).view(new_dtype).reshape(out_shape)
    # Sub-byte words, packed as XLA packs them: the first element in the lowest bits.
    w_old, w_new = bit_width(x.dtype), bit_width(new_dtype)
    p = _bit_patterns(np.ascontiguousarray(x))
    if w_old > w_new:
        shifts = np.arange(w_old // w_new, dtype=np.uint64) * np.uint64(w_new)
        p = (p[..., None] >> shifts) & np.uint64((1 << w_new) - 1)
    elif w_old < w_new:
        shifts = np.arange(w_new // w_old, dtype=np.uint64) * np.uint64(w_old)
        p = np.bitwise_or.reduce(p << shifts, axis=-1)
    return _from_bit_patterns(p, new_dtype)


def _bitcast_batch(vals, dims, *, axis_size, new_dtype):
    (x,), (d,) = vals, dims
    same = bit_width(new_dtype) == bit_width(x.dtype)
    if same:
        return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d
    return bitcast_convert_type_p.bind(moveaxis0(x, d, axis_size), new_dtype=new_dtype), 0


bitcast_convert_type_p = new_primitive("bitcast_convert_type", _bitcast_impl, _bitcast_aval)
defzero(bitcast_convert_type_p)
batch_rules[bitcast_convert_type_p] = _bitcast_batch
lowering_rules[bitcast_convert_type_p] = lambda ctx, x, *, new_dtype: ctx.op1(
    "stablehlo.bitcast_convert", [x], ctx.out_aval)
defpython(bitcast_convert_type_p, lambda eqn, a: (
    f"_bitcast({a[0]}, np.{eqn.params['new_dtype'].name}, {eqn.outvars[0].aval.shape})"), '''def _bitcast(x, dtype, shape):
    return np.ascontiguousarray(x).reshape(-1).view(dtype).reshape(shape)
''')


def bitcast_convert_type(operand, new_dtype):
    """The same bits read as `new_dtype` (as in JAX's lax): a narrower
    dtype adds a trailing axis, a wider one consumes it.

    >>> hex(int(bitcast_convert_type(np.float32(1.0), np.uint32)))
    '0x3f800000'
    """
    try:
        new_dtype = np.dtype(new_dtype)
    except TypeError:
        raise FuncadTypeError(f"bitcast_convert_type: {new_dtype!r} is not a dtype") from None
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)


# ------------------------------------------------------------- bit counts ----

def _int_unary_aval(name):
    def rule(x):
        if x.dtype.kind not in "iu":
            raise type_error(name, "it needs an integer array; cast with .astype(...)", x)
        return x
    return rule


def _popcount_impl(x):
    x = np.asarray(x)  # the bits of the two's complement (NumPy's bitwise_count takes |x|)
    return np.bitwise_count(x.view(f"u{x.dtype.itemsize}")).astype(x.dtype)


def _clz_impl(x):
    x = np.asarray(x)
    u = _UNSIGNED[x.dtype.itemsize]
    v = x.view(u).copy()
    nbits = 8 * x.dtype.itemsize
    n = np.zeros(x.shape, np.int64)
    step = nbits // 2
    while step:  # binary search for the highest set bit
        top = (v >> u(nbits - step)) == 0
        n += np.where(top, step, 0)
        v = np.where(top, v << u(step), v)
        step //= 2
    n += (v == 0)
    return n.astype(x.dtype)


population_count_p = new_primitive("population_count", _popcount_impl, _int_unary_aval("population_count"))
clz_p = new_primitive("clz", _clz_impl, _int_unary_aval("clz"))
for _p, _op in [(population_count_p, "stablehlo.popcnt"), (clz_p, "stablehlo.count_leading_zeros")]:
    defzero(_p)
    _vectorized_batch(_p)
    lowering_rules[_p] = elementwise_rule(_op)
defpython(population_count_p, lambda eqn, a: (
    f"np.bitwise_count(np.asarray({a[0]}).view(f'u{{np.asarray({a[0]}).dtype.itemsize}}')).astype({a[0]}.dtype)"))
defpython(clz_p, "_clz({0})", '''def _clz(x):
    x = np.asarray(x); bits = 8 * x.dtype.itemsize
    v = x.view(f"u{x.dtype.itemsize}").astype(object)
    return np.vectorize(lambda t: bits - int(t).bit_length())(v).astype(x.dtype)
''')


def population_count(x):
    """The number of set bits of each element.

    >>> int(population_count(np.uint32(0xFF)))
    8
    """
    return population_count_p.bind(x)


def clz(x):
    """The number of leading zero bits of each element.

    >>> int(clz(np.uint32(1)))
    31
    """
    return clz_p.bind(x)


# ------------------------------------------------------------ threefry2x32 ----

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


def _threefry_aval(*args):
    if any(a.dtype != np.uint32 for a in args):
        raise type_error("threefry2x32", "all four operands (key words and counts) must be uint32",
                         *args)
    try:
        shape = broadcast_shapes(*[a.shape for a in args])
    except ValueError:
        raise type_error("threefry2x32", "shapes do not broadcast together", *args) from None
    return [ShapedArray(shape, np.uint32)] * 2


def _threefry_schedule(k1, k2):
    """The key words added after each group of four rounds: (add to x0, add to x1)."""
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(_PARITY))
    return [(ks[(i + 1) % 3], ks[(i + 2) % 3] + np.uint32(i + 1)) for i in range(5)]


def _threefry_impl(k1, k2, x1, x2):
    # In-place uint32 NumPy arithmetic: it wraps modulo 2**32 as the hash needs.
    shape = np.broadcast_shapes(np.shape(k1), np.shape(k2), np.shape(x1), np.shape(x2))
    k1, k2 = np.asarray(k1, np.uint32), np.asarray(k2, np.uint32)
    a = np.array(np.broadcast_to(np.add(x1, k1, dtype=np.uint32), shape))
    b = np.array(np.broadcast_to(np.add(x2, k2, dtype=np.uint32), shape))
    t = np.empty(shape, np.uint32)
    with np.errstate(over="ignore"):
        for i, (add0, add1) in enumerate(_threefry_schedule(k1, k2)):
            for r in _ROTATIONS[i % 2]:
                a += b
                np.left_shift(b, np.uint32(r), out=t)
                b >>= np.uint32(32 - r)
                b |= t
                b ^= a
            a += add0
            b += add1
    return [a, b]


def _threefry_lowering(ctx, k1, k2, x1, x2):
    if ctx.module.platform == "cpu":
        return _threefry_rolled(ctx, k1, k2, x1, x2)
    return _threefry_unrolled(ctx, k1, k2, x1, x2)


def _threefry_rolled(ctx, k1, k2, x1, x2):
    # On the CPU, JAX emits the five groups of four rounds as a while loop whose carry holds
    # the rotating key schedule and rotation table. The loop bounds XLA's fusions: the float
    # arithmetic a sampler applies to the bits is then fused (and rounded, FMA contractions
    # included) exactly as in JAX's program. Unrolled, it fuses with the hash and a last bit
    # can differ (maxwell, the gamma loops), and the loop also compiles faster.
    shape = ctx.out_aval.shape
    u32 = ShapedArray(shape, np.uint32)
    kshape = broadcast_shapes(k1.aval.shape, k2.aval.shape)
    ku32, r_aval = ShapedArray(kshape, np.uint32), ShapedArray((4,), np.uint32)
    k1, k2 = broadcast(ctx, k1, kshape), broadcast(ctx, k2, kshape)
    k3 = binary(ctx, "stablehlo.xor", binary(ctx, "stablehlo.xor", k1, k2),
                ctx.full(_PARITY, np.uint32, kshape))
    x1, x2 = broadcast(ctx, x1, shape), broadcast(ctx, x2, shape)
    a = binary(ctx, "stablehlo.add", x1, broadcast(ctx, k1, shape), u32)
    b = binary(ctx, "stablehlo.add", x2, broadcast(ctx, k2, shape), u32)
    rots = [ctx.op1("stablehlo.constant", [], r_aval,
                    f"value = dense<{list(r)}> : tensor<4xui32>") for r in _ROTATIONS]
    # The carry is laid out as JAX's fori_loop (over a scan) lays it out: two counters first.
    state = [ctx.constant(0, np.int64), ctx.constant(0, np.int64), a, b, k2, k3, k1, *rots]
    avals = [v.aval for v in state]

    def cond(c, j, *_):
        return [compare(c, j, c.constant(5, np.int64), "LT")]

    def body(c, j, i, a, b, ka, kb, kc, r0, r1):
        for n in range(4):
            r = c.op1("stablehlo.reshape", [c.op1("stablehlo.slice", [r0], ShapedArray((1,), np.uint32),
                                                  f"start_indices = {i64_array([n])}, "
                                                  f"limit_indices = {i64_array([n + 1])}, "
                                                  f"strides = {i64_array([1])}")],
                      ShapedArray((), np.uint32))
            left, right = (broadcast(c, v, shape) for v in (
                r, binary(c, "stablehlo.subtract", c.constant(32, np.uint32), r)))
            a = binary(c, "stablehlo.add", a, b)
            rot = binary(c, "stablehlo.or", binary(c, "stablehlo.shift_left", b, left),
                         binary(c, "stablehlo.shift_right_logical", b, right))
            b = binary(c, "stablehlo.xor", a, rot)
        one = c.constant(1, np.int64)
        i1 = binary(c, "stablehlo.add", i, one)
        step = c.op1("stablehlo.convert", [i1], ShapedArray((), np.uint32))
        a = binary(c, "stablehlo.add", a, broadcast(c, ka, shape), u32)
        b = binary(c, "stablehlo.add", binary(c, "stablehlo.add", b, broadcast(c, kb, shape), u32),
                   broadcast(c, step, shape))
        return [binary(c, "stablehlo.add", j, one), i1, a, b, kb, kc, ka, r1, r0]

    outs = ctx.op("stablehlo.while", state, avals,
                  regions=[ctx.region(avals, cond), ctx.region(avals, body)])
    return [outs[2], outs[3]]


def _threefry_unrolled(ctx, k1, k2, x1, x2):
    shape = ctx.out_aval.shape
    u32 = ShapedArray(shape, np.uint32)
    k1, k2, x1, x2 = (broadcast(ctx, v, shape) for v in (k1, k2, x1, x2))

    def op(name, a, b):
        return ctx.op1(name, [a, b], u32)

    consts = {}

    def const(v):  # each constant emitted once
        if v not in consts:
            consts[v] = ctx.full(v, np.uint32, shape)
        return consts[v]

    ks = (k1, k2, op("stablehlo.xor", op("stablehlo.xor", k1, k2), const(_PARITY)))
    a, b = op("stablehlo.add", x1, k1), op("stablehlo.add", x2, k2)
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            a = op("stablehlo.add", a, b)
            rot = op("stablehlo.or", op("stablehlo.shift_left", b, const(r)),
                     op("stablehlo.shift_right_logical", b, const(32 - r)))
            b = op("stablehlo.xor", a, rot)
        a = op("stablehlo.add", a, ks[(i + 1) % 3])
        b = op("stablehlo.add", b, op("stablehlo.add", ks[(i + 2) % 3], const(i + 1)))
    return [a, b]


threefry2x32_p = new_primitive("threefry2x32", _threefry_impl, _threefry_aval, multiple_results=True)
defzero(threefry2x32_p)
_broadcasting_batch(threefry2x32_p)
lowering_rules[threefry2x32_p] = _threefry_lowering
defpython(threefry2x32_p, lambda eqn, a: f"_threefry2x32({', '.join(a)})", '''def _threefry2x32(k1, k2, x1, x2):
    k1, k2 = np.uint32(k1), np.uint32(k2)
    ks = [k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA)]
    a, b = np.uint32(x1) + k1, np.uint32(x2) + k2
    a, b = np.broadcast_arrays(a, b)
    for i in range(5):
        for r in [(13, 15, 26, 6), (17, 29, 16, 24)][i % 2]:
            a = a + b
            b = a ^ ((b << np.uint32(r)) | (b >> np.uint32(32 - r)))
        a = a + ks[(i + 1) % 3]
        b = b + ks[(i + 2) % 3] + np.uint32(i + 1)
    return a, b
''')


def threefry2x32(k1, k2, x1, x2):
    """The threefry-2x32 block hash (20 rounds) of the counter pairs (x1, x2) under the
    key (k1, k2); all uint32, broadcast together. Returns the two output words.

    >>> [hex(int(w)) for w in threefry2x32(*np.zeros(4, np.uint32))]
    ['0x6b200159', '0x99ba4efe']
    """
    return threefry2x32_p.bind(k1, k2, x1, x2)

# ------------------------------------------------------- reduce_precision ----
# A primitive, not a bit-twiddling composition, because its derivative is linear
# (JAX: the tangent is rounded the same way), which a composition through bitcasts
# could not express, and because XLA has the op.

_RP_HELPER = '''def _reduce_precision(x, exponent_bits, mantissa_bits):
    """XLA's ReducePrecision: round the mantissa to nearest even, then flush exponents
    outside the narrower range to signed zero or infinity; NaNs stay NaN."""
    x = np.asarray(x)
    src_e, src_m = {2: (5, 10), 4: (8, 23), 8: (11, 52)}[x.dtype.itemsize]
    u = np.dtype("u%d" % x.dtype.itemsize).type
    one = u(1)
    v = x.view(u).copy()
    if mantissa_bits < src_m:
        shift = u(src_m - mantissa_bits)
        last = one << shift
        bias = (last >> one) - one + ((v & last) >> shift)
        v = (v + bias) & ~(last - one)
    if exponent_bits < src_e:
        exp_mask = ((one << u(src_e)) - one) << u(src_m)
        ebias, rbias = (1 << (src_e - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        e, signed_zero = v & exp_mask, v & (one << u(8 * x.dtype.itemsize - 1))
        v = np.where(e > u(ebias + rbias) << u(src_m), signed_zero | exp_mask,
                     np.where(e <= u(ebias - rbias) << u(src_m), signed_zero, v))
    out = np.asarray(v, u).view(x.dtype).reshape(x.shape)
    return np.where(np.isnan(x), x, out)
'''
_rp_scope = {"np": np}
exec(_RP_HELPER, _rp_scope)
_FLOAT_BITS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
    return _rp_scope["_reduce_precision"](x, exponent_bits, mantissa_bits)


def _reduce_precision_aval(x, *, exponent_bits, mantissa_bits):
    if x.dtype not in _FLOAT_BITS:
        raise type_error("reduce_precision", "the operand must be float16, float32 or float64", x)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise FuncadTypeError(f"reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0, got "
                              f"{exponent_bits} and {mantissa_bits}")
    return x


reduce_precision_p = new_primitive("reduce_precision", _reduce_precision_impl, _reduce_precision_aval)


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """`operand` rounded to a float format with the given exponent and mantissa bits
    (XLA's ReducePrecision), in the operand's dtype.

    >>> float(reduce_precision(np.float32(1.0 + 2.0 ** -12), 5, 10))  # to float16's grid
    1.0
    """
    return reduce_precision_p.bind(operand, exponent_bits=operator.index(exponent_bits),
                                   mantissa_bits=operator.index(mantissa_bits))


def _reduce_precision_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    return reduce_precision_p.bind(x, **params), None if t is None else reduce_precision_p.bind(t, **params)


from ..core.trace import jvp_rules as _jvp_rules, transpose_rules as _transpose_rules  # noqa: E402

_jvp_rules[reduce_precision_p] = _reduce_precision_jvp
_transpose_rules[reduce_precision_p] = lambda ct, x, **p: [reduce_precision_p.bind(ct, **p)]
_vectorized_batch(reduce_precision_p)
lowering_rules[reduce_precision_p] = lambda ctx, x, *, exponent_bits, mantissa_bits: ctx.op1(
    "stablehlo.reduce_precision", [x], ctx.out_aval,
    f"exponent_bits = {exponent_bits} : i32, mantissa_bits = {mantissa_bits} : i32")
defpython(reduce_precision_p, "_reduce_precision({0}, {exponent_bits}, {mantissa_bits})", _RP_HELPER)


# ----------------------------------------------------------- sharding rules ----
# How each result's sharding in its type follows from the operands' (Explicit mesh
# axes; core/typed_sharding.py).

def _bitcast_sharding(x, *, new_dtype):
    spec, w_old, w_new = spec_of(x), bit_width(x.dtype), bit_width(np.dtype(new_dtype))
    if w_old > w_new:  # a new trailing axis of words, not split
        return spec + (None,)
    if w_old < w_new:
        if spec[-1] is not None:
            raise ShardingTypeError(f"bitcast_convert_type to the wider {np.dtype(new_dtype)} "
                                    f"consumes the last axis of {x.str_short()}, which is split; "
                                    f"reshard it unsplit first")
        return spec[:-1]
    return spec


for _p in (shift_left_p, shift_right_logical_p, shift_right_arithmetic_p, population_count_p, clz_p,
           reduce_precision_p):
    _sharding_rules[_p] = broadcasting_rule(_p.name)
_sharding_rules[threefry2x32_p] = lambda *args: [broadcasting_rule("threefry2x32")(*args)] * 2
_sharding_rules[bitcast_convert_type_p] = _bitcast_sharding
