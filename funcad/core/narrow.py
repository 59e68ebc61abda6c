"""The narrow dtypes JAX takes from `ml_dtypes` (bfloat16, the float8/6/4 formats,
int1/2/4 and uint1/2/4): their kinds and JAX's promotion rules for them.

NumPy sees these dtypes as opaque (`dtype.kind` is 'V', except float8_e5m2's 'f'),
so funcad asks `kind(dtype)` where the kind decides a rule (float or integer,
differentiable or not). NumPy's promotion has no answer for most pairs
(bfloat16 with float16 is an error in NumPy), so a pair that holds a narrow dtype
is promoted on JAX's type lattice (`lattice_result`): bfloat16 and float16 meet
at float32, a weak Python scalar takes the array's narrow dtype, and two 8-bit
floats of different formats, or a 4-bit integer with an 8-bit one, have no
common type (an error, as in JAX). Pairs of NumPy's own dtypes keep NEP 50.

>>> import ml_dtypes
>>> kind(ml_dtypes.bfloat16), kind(ml_dtypes.int4), kind(np.float32)
('f', 'i', 'f')
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .errors import TypePromotionError

FLOAT8 = ("float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float8_e4m3b11fnuz", "float8_e4m3fn",
          "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
FLOAT6 = ("float6_e2m3fn", "float6_e3m2fn")
FLOAT4 = ("float4_e2m1fn",)
SMALL_FLOATS = (*FLOAT4, *FLOAT6, *FLOAT8)
INTS = ("int1", "int2", "int4")
UINTS = ("uint1", "uint2", "uint4")
NAMES = ("bfloat16", *SMALL_FLOATS, *INTS, *UINTS)

# dtype -> the kind NumPy would give it if it knew the type.
KINDS: dict = {np.dtype(getattr(ml_dtypes, n)): "f" for n in ("bfloat16", *SMALL_FLOATS)}
KINDS.update({np.dtype(getattr(ml_dtypes, n)): "i" for n in INTS})
KINDS.update({np.dtype(getattr(ml_dtypes, n)): "u" for n in UINTS})


def kind(dtype, _dtype=np.dtype, _get=KINDS.get) -> str:
    """NumPy's kind letter ('b', 'i', 'u', 'f', 'c', ...), with the narrow dtypes as the
    floats and integers they are."""
    d = dtype if isinstance(dtype, _dtype) else _dtype(dtype)  # on every op: kept cheap
    k = d.kind
    if k != "V":  # NumPy's own dtypes (hashing a dtype for the table costs more than this)
        return k
    return _get(d, k)


def is_narrow(dtype) -> bool:
    return np.dtype(dtype) in KINDS


_SUB_BYTE = {"int1": 1, "uint1": 1, "int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4,
             "float6_e2m3fn": 6, "float6_e3m2fn": 6}


def bit_width(dtype) -> int:
    """Bits per element: a sub-byte dtype's own width (ml_dtypes stores each element in the
    low bits of a byte), else 8 x itemsize.

    >>> bit_width(ml_dtypes.int4), bit_width(np.float32)
    (4, 32)
    """
    d = np.dtype(dtype)
    return _SUB_BYTE.get(d.name, 8 * d.itemsize)


# ------------------------------------------------------ JAX's type lattice ----
# Nodes are dtypes, plus the weak kinds "i*", "f*", "c*" of Python scalars. Each node
# lists the nodes just above it (JAX's default, non-strict lattice with x64 on).

def _d(name):
    return np.dtype(getattr(ml_dtypes, name, None) or name)


def _build_lattice() -> dict:
    b1 = np.dtype(bool)
    u1, u2, u4, i1, i2, i4 = map(_d, ("uint1", "uint2", "uint4", "int1", "int2", "int4"))
    u8, u16, u32, u64, i8, i16, i32, i64 = map(np.dtype, ("uint8", "uint16", "uint32", "uint64",
                                                          "int8", "int16", "int32", "int64"))
    bf16, f16, f32, f64, c64, c128 = map(_d, ("bfloat16", "float16", "float32", "float64",
                                              "complex64", "complex128"))
    small = [_d(n) for n in SMALL_FLOATS]
    return {
        b1: ["i*"], "i*": [u8, u4, u2, u1, i8, i4, i2, i1],
        u1: [], u2: [], u4: [], i1: [], i2: [], i4: [],
        u8: [i16, u16], u16: [i32, u32], u32: [i64, u64], u64: ["f*"],
        i8: [i16], i16: [i32], i32: [i64], i64: ["f*"],
        "f*": [*small, bf16, f16, "c*"], **{t: [] for t in small},
        bf16: [f32], f16: [f32], f32: [f64, c64], f64: [c128],
        "c*": [c64], c64: [c128], c128: [],
    }


def _upper_bounds(lattice: dict) -> dict:
    ub: dict = {}

    def visit(n):
        if n not in ub:
            s = {n}
            for m in lattice[n]:
                s |= visit(m)
            ub[n] = frozenset(s)
        return ub[n]

    for n in lattice:
        visit(n)
    return ub


_UB = _upper_bounds(_build_lattice())


def _node_name(n) -> str:
    return n if isinstance(n, str) else n.name


def lattice_result(nodes):
    """The least upper bound of lattice nodes (dtypes or "i*"/"f*"/"c*"), or a
    TypePromotionError when they have none (JAX's TypePromotionError)."""
    nodes = set(nodes)
    common = frozenset.intersection(*(_UB[n] for n in nodes))
    lub = (common & nodes) or {c for c in common if common <= _UB[c]}
    if len(lub) == 1:
        return next(iter(lub))
    names = tuple(_node_name(n) for n in nodes)
    what = ("8-bit floats" if any(_node_name(n) in FLOAT8 for n in nodes) else
            "6-bit floats" if any(_node_name(n) in FLOAT6 for n in nodes) else
            "4-bit floats" if any(_node_name(n) in FLOAT4 for n in nodes) else
            "1-bit, 2-bit and 4-bit integers" if any(_node_name(n) in INTS + UINTS for n in nodes)
            else None)
    fix = "x.astype('int32')" if what and "integers" in what else "x.astype('float32')"
    why = f" To avoid unintended promotion, {what} do not support implicit promotion." if what else ""
    raise TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path.{why} "
        f"Convert the inputs to the type you want explicitly, e.g. with {fix}.")


_WEAK_NODE = {"b": np.dtype(bool), "i": "i*", "u": "i*", "f": "f*", "c": "c*"}


def promote_narrow(dtypes_and_weak) -> tuple:
    """(dtype, weak) of combining (dtype, weak) pairs where one dtype is narrow."""
    nodes = [_WEAK_NODE[np.dtype(d).kind] if w else np.dtype(d) for d, w in dtypes_and_weak]
    r = lattice_result(nodes)
    if isinstance(r, str):  # only weak inputs reach a weak node; not the case here
        return {"i*": np.dtype(np.int64), "f*": np.dtype(np.float64), "c*": np.dtype(np.complex128)}[r], True
    return r, False
