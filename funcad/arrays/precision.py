"""The precision arguments of products (dot_general, matmul, einsum, convolutions): JAX's
PrecisionLike in dot_general's form, and preferred_element_type's casts."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core import options as _options
from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.narrow import kind as _kind
from ..primitives import elementwise as E
from ..primitives.dot_algorithm import DotAlgorithmPreset, compute_types, is_algorithm


_PRECISIONS = {"default": "DEFAULT", "fastest": "DEFAULT", "bfloat16": "DEFAULT", "high": "HIGH",
               "tensorfloat32": "HIGH", "bfloat16_3x": "HIGH", "highest": "HIGHEST", "float32": "HIGHEST"}


def canonical_precision(precision):
    """JAX's PrecisionLike as dot_general's param: None, a (lhs, rhs) pair of
    'DEFAULT'/'HIGH'/'HIGHEST' (StableHLO's names), a DotAlgorithmPreset (also by
    name) or a DotAlgorithm."""
    if precision is None:  # funcad.config's default_matmul_precision, if set
        precision = _options.default_matmul_precision
    if precision is None or is_algorithm(precision):
        return precision
    if isinstance(precision, (tuple, list)) and len(precision) == 2 and not is_algorithm(precision):
        pair = [canonical_precision(p) for p in precision]
        if all(isinstance(p, tuple) for p in pair):
            return tuple(p[0] for p in pair)
    name = getattr(precision, "name", precision)
    if isinstance(name, str) and name.lower() in _PRECISIONS:
        p = _PRECISIONS[name.lower()]
        return (p, p)
    if isinstance(precision, str) and precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    raise FuncadValueError(f"precision must be None, one of {sorted(_PRECISIONS)} (or a Precision enum), "
                           "a pair of them, a lax.DotAlgorithmPreset or its name, or a lax.DotAlgorithm; "
                           f"got {precision!r}")


def _precision(precision):
    """A convolution's precision_config: None or a (lhs, rhs) pair. As in JAX, a
    convolution takes a dot algorithm and computes by default."""
    p = canonical_precision(precision)
    return ("DEFAULT", "DEFAULT") if is_algorithm(p) else p


def _preferred(x, y, preferred_element_type):
    """Convert both operands to preferred_element_type, after JAX's compatibility checks."""
    if preferred_element_type is None:
        return x, y
    want, have = np.dtype(preferred_element_type), aval_of(x).dtype
    if have == want:
        return x, y
    if not (_kind(have) in "iu" and _kind(want) == "f"):
        if (_kind(have) in "iu") != (_kind(want) in "iu") or (_kind(have) == "f") != (_kind(want) == "f"):
            raise FuncadTypeError(f"preferred_element_type {want} does not fit inputs of dtype {have}: "
                                  "allowed are (integer, integer), (integer, float), (float, float), "
                                  "(complex, complex)")
        if _kind(have) == "i" and _kind(want) != "i":
            raise FuncadTypeError(f"preferred_element_type {want} must be signed like the inputs ({have})")
    if want.itemsize < have.itemsize:
        raise FuncadTypeError(f"preferred_element_type {want} must not be narrower than the inputs ({have})")
    return E.convert_element_type(x, want), E.convert_element_type(y, want)


def _type_order(dt):
    """XLA's HigherPrecisionType order, by which dot_general types operands of two
    dtypes: complex over real, then float range, mantissa, bit width, signed over unsigned."""
    k = _kind(dt)
    real = np.empty(0, dt).real.dtype if k == "c" else dt
    fi = ml_dtypes.finfo(real) if k in "fc" else None
    return (k == "c", fi.maxexp if fi else -1, fi.nmant if fi else -1, _bits(real), k != "u")


def _bits(dt):
    k = _kind(dt)
    return 1 if k == "b" else ml_dtypes.finfo(dt).bits if k in "fc" else ml_dtypes.iinfo(dt).bits


def dot_operands(x, y, precision, preferred_element_type):
    """dot_general's operands and the `preferred_element_type` param of its primitive,
    by JAX's rule. The result type is the operands' (the higher one in XLA's order if
    they differ) or preferred_element_type. Operands of two dtypes are both converted
    to it, as JAX lowers them for the CPU. Operands of one dtype are converted to it
    where it is the higher type (a widening); a lower one (float32 operands, a bfloat16
    result) is the primitive's param: the product is computed in the operands' type
    and rounded, as XLA computes it."""
    a, b = aval_of(x).dtype, aval_of(y).dtype
    if a == b and (preferred_element_type is None or np.dtype(preferred_element_type) == a):
        return x, y, None
    ta, tb = _type_order(a), _type_order(b)
    if ta == tb and a != b:
        raise FuncadTypeError(f"dot_general got operands of dtypes {a} and {b}, which have no "
                              "common type; convert one of them to the other's dtype")
    out = a if ta >= tb else b
    if preferred_element_type is not None:
        want = np.dtype(preferred_element_type)
        if not is_algorithm(precision) and _kind(out) != "f" and _bits(want) < _bits(out):
            raise FuncadTypeError(f"`preferred_element_type` must not be narrower than the original "
                                  f"type, got preferred_element_type of {want} for result type of {out}; "
                                  f"pass {out} or a wider type")
        if a == b and _type_order(want) < ta:
            return x, y, want
        out = want
        if a == b:
            x, y = _algorithm_cast(x, precision, out), _algorithm_cast(y, precision, out)
    return E.convert_element_type(x, out), E.convert_element_type(y, out), None


def _algorithm_cast(x, precision, preferred_element_type):
    """Round an operand to the algorithm's input type before it is widened to
    preferred_element_type: JAX casts the original operand (a float16 one to bfloat16
    for BF16_BF16_F32), so the widening must not skip that rounding."""
    if not isinstance(precision, DotAlgorithmPreset):
        return x
    dt = aval_of(x).dtype
    lt = compute_types(precision, dt, dt, preferred_element_type)[0]
    if lt == dt or lt.itemsize > dt.itemsize:  # widening loses nothing
        return x
    return E.convert_element_type(E.convert_element_type(x, lt), dt)
