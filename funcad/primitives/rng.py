"""XLA's random-number primitives: `rng_bit_generator` (stateless) and `rng_uniform`
(stateful), each one block with every rule.

`rng_bit_generator(key)` takes a state of uint32[4] (JAX's form; uint64[2] is
accepted too) and returns (new state, bits). Its NumPy impl is XLA's own CPU
algorithm (`_xla_rng.py`), so eager and jitted bits agree; it lowers to
`stablehlo.rng_bit_generator` on the state bitcast to uint64[2], written out
with literal ui64 types because the lowering needs them with x64 off too.
Batched keys follow JAX's rule: the bits of all batch elements come from the
first key, drawn as one (batch, *shape) array, and only the first key
advances. Neither output has a derivative.

`rng_uniform(a, b)` draws from a global, unseeded stream (XLA's `stablehlo.rng`;
eagerly NumPy's global generator): values in [a, b) that no key reproduces.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadValueError
from ..core.trace import batch_rules, jvp_rules, lowering_rules, sharding_rules
from ..core.typed_sharding import spec_of
from ..lowering.stablehlo import Value, tensor_type
from ._base import check_eagerly, defpython, defzero, new_primitive, type_error
from ._xla_rng import xla_rng_bits
from .structural import concatenate, moveaxis0, reshape, slice as _slice
from . import elementwise as E
from ._base import full

__all__ = ["rng_bit_generator_p", "rng_uniform_p"]

_ALGORITHMS = {0: "DEFAULT", 1: "THREE_FRY", 2: "PHILOX"}
_BIT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


# ------------------------------------------------------- rng_bit_generator ----

def _rbg_aval(key, *, shape, dtype, algorithm):
    if not ((key.dtype == np.uint32 and key.shape == (4,))
            or (key.dtype == np.uint64 and key.shape == (2,))):
        raise type_error("rng_bit_generator", "the key (the generator's state) must be uint32[4] "
                         "(or uint64[2]); make one with funcad.random.key_data of an 'rbg' key", key)
    if np.dtype(dtype) not in _BIT_DTYPES:
        raise type_error("rng_bit_generator", f"unsupported dtype {np.dtype(dtype)}: use uint8, "
                         "uint16, uint32 or uint64", key)
    if int(algorithm) not in _ALGORITHMS:
        raise FuncadValueError(f"rng_bit_generator: unknown algorithm {algorithm!r}; use "
                               "funcad.lax.RandomAlgorithm")
    return [ShapedArray(key.shape, key.dtype), ShapedArray(shape, dtype)]


def _rbg_impl(key, *, shape, dtype, algorithm):
    return list(xla_rng_bits(np.asarray(key), shape, dtype, int(algorithm)))


def _rbg_lowering(ctx, key, *, shape, dtype, algorithm):
    # The state enters XLA as u64[2]; types are spelled out so they stay 64-bit with x64 off.
    state_aval, bits_aval = ctx.out_avals
    fresh, ind = ctx.module.fresh, " " * ctx.indent
    u32 = key.aval.dtype == np.uint32
    bits_t = tensor_type(bits_aval)
    lines, k = [], key.name
    if u32:
        r, s = fresh(), fresh()
        lines += [f'{r} = "stablehlo.reshape"({k}) : (tensor<4xui32>) -> tensor<2x2xui32>',
                  f'{s} = "stablehlo.bitcast_convert"({r}) : (tensor<2x2xui32>) -> tensor<2xui64>']
        k = s
    out = fresh()
    lines.append(f'{out}:2 = "stablehlo.rng_bit_generator"({k}) <{{rng_algorithm = '
                 f'#stablehlo<rng_algorithm {_ALGORITHMS[int(algorithm)]}>}}> : '
                 f'(tensor<2xui64>) -> (tensor<2xui64>, {bits_t})')
    new_state = f"{out}#0"
    if u32:
        b, r = fresh(), fresh()
        lines += [f'{b} = "stablehlo.bitcast_convert"({new_state}) : (tensor<2xui64>) -> '
                  'tensor<2x2xui32>',
                  f'{r} = "stablehlo.reshape"({b}) : (tensor<2x2xui32>) -> tensor<4xui32>']
        new_state = r
    ctx.lines += [ind + line for line in lines]
    return [Value(new_state, state_aval), Value(f"{out}#1", bits_aval)]


def _rbg_batch(vals, dims, *, axis_size, shape, dtype, algorithm):
    # JAX's rule: one draw of (batch, *shape) bits from the first key; only it advances.
    keys = moveaxis0(vals[0], dims[0], axis_size)
    n = keys.shape[-1]
    first = reshape(_slice(keys, (0, 0), (1, n)), (n,))
    new_key, bits = rng_bit_generator_p.bind(first, shape=(axis_size,) + tuple(shape), dtype=dtype,
                                             algorithm=algorithm)
    rest = _slice(keys, (1, 0), (axis_size, n))
    return [concatenate([reshape(new_key, (1, n)), rest], 0), bits], [0, 0]


rng_bit_generator_p = new_primitive("rng_bit_generator", _rbg_impl, _rbg_aval,
                                    multiple_results=True)
defzero(rng_bit_generator_p)
batch_rules[rng_bit_generator_p] = _rbg_batch
lowering_rules[rng_bit_generator_p] = _rbg_lowering
defpython(rng_bit_generator_p,
          "_rng_bit_generator({0}, {shape}, np.dtype('{dtype}'), {algorithm:d})",
          '''def _rng_bit_generator(key, shape, dtype, algorithm):
    from funcad.primitives._xla_rng import xla_rng_bits  # XLA's CPU algorithm, in NumPy
    return xla_rng_bits(np.asarray(key), shape, dtype, algorithm)
''')


# ------------------------------------------------------------ rng_uniform ----

def _uniform_aval(a, b, *, shape):
    if a.dtype != b.dtype:
        raise type_error("rng_uniform", "arguments must have one dtype", a, b)
    if a.shape or b.shape:
        raise type_error("rng_uniform", "arguments must be scalars (the bounds of the range)", a, b)
    if a.dtype.kind not in "iuf":
        raise type_error("rng_uniform", "it draws integers or floats", a, b)
    return ShapedArray(shape, a.dtype, a.weak_type and b.weak_type)


_UNIFORM_HELPER = '''def _rng_uniform(a, b, shape):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f":
        u = np.random.random_sample(shape)
        return np.asarray(a + u * (b - a), a.dtype)
    if b <= a:  # XLA leaves the result undefined; a is in range of nothing, as good as any
        return np.full(shape, a, a.dtype)
    return np.random.randint(int(a), int(b), size=shape, dtype=a.dtype)
'''
_uniform_scope = {"np": np}
exec(_UNIFORM_HELPER, _uniform_scope)


def _uniform_impl(a, b, *, shape):
    return _uniform_scope["_rng_uniform"](a, b, tuple(shape))


def _uniform_lowering(ctx, a, b, *, shape):
    dims = ctx.op1("stablehlo.constant", [], ShapedArray((len(shape),), np.int64),
                   f"value = dense<{list(shape)}> : tensor<{len(shape)}xi64>" if shape
                   else "value = dense<> : tensor<0xi64>")
    return ctx.op1("stablehlo.rng", [a, b, dims], ctx.out_aval,
                   "rng_distribution = #stablehlo<rng_distribution UNIFORM>")


def _uniform_jvp(primals, tangents, *, shape):
    if any(t is not None for t in tangents):
        raise FuncadValueError("rng_uniform has no derivative (as in JAX): its values come from a "
                               "stateful stream. For reparameterised samples use "
                               "minval + (maxval - minval) * funcad.random.uniform(key, shape)")
    return rng_uniform_p.bind(*primals, shape=shape), None


def _uniform_batch(vals, dims, *, axis_size, shape):
    # Bounds per batch element: one draw of (batch, *shape) in [0, 1), scaled per element.
    a, b = (moveaxis0(v, d, axis_size) if d is not None else v for v, d in zip(vals, dims))
    dtype = np.asarray(a).dtype if not hasattr(a, "aval") else a.aval.dtype
    fdt = dtype if dtype.kind == "f" else np.dtype(np.float64)
    u = rng_uniform_p.bind(np.zeros((), fdt), np.ones((), fdt), shape=(axis_size,) + tuple(shape))
    expand = lambda v: reshape(v, (axis_size,) + (1,) * len(shape)) if np.ndim(v) else v
    lo, hi = (E.convert_element_type(expand(v), fdt) for v in (a, b))
    out = E.add(lo, E.mul(u, E.sub(hi, lo)))
    if dtype.kind != "f":
        out = E.max(E.min(E.floor(out), E.sub(hi, full((), 1, fdt))), lo)
        out = E.convert_element_type(out, dtype)
    return out, 0


rng_uniform_p = new_primitive("rng_uniform", _uniform_impl, _uniform_aval)
jvp_rules[rng_uniform_p] = _uniform_jvp
batch_rules[rng_uniform_p] = _uniform_batch
lowering_rules[rng_uniform_p] = _uniform_lowering
defpython(rng_uniform_p, "_rng_uniform({0}, {1}, {shape})", _UNIFORM_HELPER)
check_eagerly(rng_bit_generator_p, rng_uniform_p)  # NumPy would accept a bad key or bounds

# Sharding in types (core/typed_sharding.py): the key keeps its own; the bits are not split.
sharding_rules[rng_bit_generator_p] = lambda key, *, shape, dtype, algorithm: [
    spec_of(key), (None,) * len(shape)]
sharding_rules[rng_uniform_p] = lambda a, b, *, shape: (None,) * len(shape)
