"""Dot algorithms and result accuracy, as JAX names them: `DotAlgorithm`,
`DotAlgorithmPreset` (a `precision=` of dot_general and what is built on it) and
`AccuracyMode`/`Tolerance` (the `accuracy=` of exp, log, sin, ...).

An algorithm fixes the types the operands are rounded to and the accumulation
type. XLA's CPU backend ignores the algorithm attribute itself, so JAX accepts on
the CPU only the presets it can honour by casting: the operands are converted to
the preset's input type (kept where the operand's own dtype is one the preset
takes), the product accumulates in the preset's type, and the result is converted
to the output dtype. funcad does the same casts in the eager NumPy impl and in
the lowering, and rejects the other algorithms on the CPU with JAX's error.
"""
from __future__ import annotations

import enum
from typing import NamedTuple

import ml_dtypes
import numpy as np

from ..core.errors import FuncadValueError

__all__ = ["DotAlgorithm", "DotAlgorithmPreset", "AccuracyMode", "Tolerance"]

_BF16 = np.dtype(ml_dtypes.bfloat16)
_F8 = tuple(np.dtype(getattr(ml_dtypes, n)) for n in (
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e3m4", "float8_e4m3", "float8_e8m0fnu"))
_MLIR = {"float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16",
         "float8_e4m3b11fnuz": "f8E4M3B11FNUZ", "float8_e4m3fn": "f8E4M3FN", "float8_e4m3fnuz": "f8E4M3FNUZ",
         "float8_e5m2": "f8E5M2", "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e3m4": "f8E3M4",
         "float8_e4m3": "f8E4M3", "float8_e8m0fnu": "f8E8M0FNU"}


class DotAlgorithm(NamedTuple):
    """The algorithm of a dot product: operand rounding types, accumulation type and
    (for emulated precision) component counts. Pass it as `precision=`. XLA's CPU
    backend supports none of them (use a DotAlgorithmPreset there), as in JAX.

    >>> DotAlgorithm(np.float16, np.float16, np.float32).accumulation_type
    <class 'numpy.float32'>
    """

    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False

    def _attr(self, lhs_dtype, rhs_dtype) -> str:
        return _algorithm_attr(self.lhs_precision_type, self.rhs_precision_type, self.accumulation_type,
                               self.lhs_component_count, self.rhs_component_count,
                               self.num_primitive_operations, self.allow_imprecise_accumulation)


class DotAlgorithmPreset(enum.Enum):
    """JAX's named dot algorithms, `LHS_RHS_ACCUM` (`_X3`: three products emulate
    more precision). Pass one (or its name) as `precision=`.

    >>> DotAlgorithmPreset["BF16_BF16_F32"].accumulation_type
    <class 'numpy.float32'>
    """

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self) -> tuple | None:
        """The operand types the preset computes in (None: any); the first is the cast target."""
        n = self.name
        if n == "DEFAULT" or n.startswith("ANY_F8"):
            return None
        if n.startswith("F16_"):
            return (np.float16,)
        if n in ("BF16_BF16_BF16", "BF16_BF16_F32"):
            return (ml_dtypes.bfloat16, np.float32)
        return (np.float64,) if n == "F64_F64_F64" else (np.float32,)

    @property
    def supported_rhs_types(self) -> tuple | None:
        return self.supported_lhs_types

    @property
    def accumulation_type(self):
        n = self.name
        if n in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        return {"F16_F16_F16": np.float16, "BF16_BF16_BF16": ml_dtypes.bfloat16,
                "F64_F64_F64": np.float64}.get(n, np.float32)

    def supported_output_types(self, lhs_dtype, rhs_dtype) -> tuple | None:
        n = self.name
        if n in ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM"):
            return (np.float32, np.float16, ml_dtypes.bfloat16, *_F8[:5])
        if n in ("F16_F16_F32", "BF16_BF16_F32"):
            narrow = np.float16 if n == "F16_F16_F32" else ml_dtypes.bfloat16
            both = np.dtype(lhs_dtype) == np.dtype(rhs_dtype) == np.dtype(narrow)
            return (np.float32, narrow) if both else (np.float32,)
        acc = self.accumulation_type
        return None if acc is None else (acc,)

    def _attr(self, lhs_dtype, rhs_dtype) -> str | None:
        n = self.name
        if n.startswith("ANY_F8"):
            if np.dtype(lhs_dtype) not in _F8 or np.dtype(rhs_dtype) not in _F8:
                raise FuncadValueError(f"The dot algorithm '{n}' requires both inputs to have float8 "
                                       f"dtypes. Got {np.dtype(lhs_dtype)} and {np.dtype(rhs_dtype)} instead.")
            return _algorithm_attr(lhs_dtype, rhs_dtype, np.float32, 1, 1, 1, n == "ANY_F8_ANY_F8_F32_FAST_ACCUM")
        if n == "DEFAULT":
            return None
        lhs, _, acc, *rest = n.split("_")
        ops = int(rest[0][1:]) if rest else 1
        t = {"F16": "f16", "BF16": "bf16", "TF32": "tf32", "F32": "f32", "F64": "f64"}
        return _attr_text(t[lhs], t[lhs], t[acc], 1, 1, ops, False)


def _algorithm_attr(lhs, rhs, acc, lc, rc, ops, imprecise) -> str:
    return _attr_text(*(_MLIR[np.dtype(d).name] for d in (lhs, rhs, acc)), lc, rc, ops, imprecise)


def _attr_text(lhs, rhs, acc, lc, rc, ops, imprecise) -> str:
    return (f"#stablehlo.dot_algorithm<lhs_precision_type = {lhs}, rhs_precision_type = {rhs}, "
            f"accumulation_type = {acc}, lhs_component_count = {lc}, rhs_component_count = {rc}, "
            f"num_primitive_operations = {ops}, allow_imprecise_accumulation = {str(bool(imprecise)).lower()}>")


# The presets XLA's CPU backend computes (by the casts alone); JAX rejects the rest there.
CPU_PRESETS = frozenset(DotAlgorithmPreset[n] for n in (
    "DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64", "BF16_BF16_F32", "BF16_BF16_F32_X3",
    "BF16_BF16_F32_X6"))


def is_algorithm(precision) -> bool:
    return isinstance(precision, (DotAlgorithm, DotAlgorithmPreset))


def check_cpu(precision) -> None:
    """JAX's error for an algorithm the CPU cannot compute."""
    if is_algorithm(precision) and precision not in CPU_PRESETS:
        raise FuncadValueError(f"The precision '{precision}' is not supported by dot_general on CPU; "
                               f"use one of {sorted(p.name for p in CPU_PRESETS)} or a Precision")


def compute_types(algorithm, lhs_dtype, rhs_dtype, out_dtype):
    """(lhs, rhs, accumulation) dtypes the algorithm computes in, as JAX's lowering picks them."""
    if isinstance(algorithm, DotAlgorithm):
        return tuple(np.dtype(t) for t in (algorithm.lhs_precision_type, algorithm.rhs_precision_type,
                                           algorithm.accumulation_type))

    def pick(dtype, allowed):
        dtype = np.dtype(dtype)
        if allowed is None or dtype in [np.dtype(t) for t in allowed]:
            return dtype
        return np.dtype(allowed[0])

    lhs = pick(lhs_dtype, algorithm.supported_lhs_types)
    rhs = pick(rhs_dtype, algorithm.supported_rhs_types)
    return lhs, rhs, pick(out_dtype, algorithm.supported_output_types(lhs, rhs))


# ------------------------------------------------------------------ accuracy ----

class AccuracyMode(enum.Enum):
    """The accuracy an elementwise op asks of the compiler (`accuracy=`).

    >>> AccuracyMode.HIGHEST.name
    'HIGHEST'
    """

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """Tolerances an elementwise op's implementation must meet (`accuracy=`): at most
    two of atol, rtol, ulps; all non-negative, one of them set.

    >>> Tolerance(atol=1e-6).atol
    1e-06
    """

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise FuncadValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise FuncadValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps

    def _key(self):
        return (float(self.atol), float(self.rtol), int(self.ulps))

    def __eq__(self, other):  # equal tolerances hit the same jit cache entry
        return isinstance(other, Tolerance) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"


def check_accuracy(accuracy, op: str):
    """None, an AccuracyMode or a Tolerance; anything else is an error naming them."""
    if accuracy is None or isinstance(accuracy, (AccuracyMode, Tolerance)):
        return accuracy
    raise FuncadValueError(f"{op}: accuracy must be None, a lax.AccuracyMode or a lax.Tolerance, "
                           f"got {accuracy!r}")


def accuracy_attr(accuracy) -> str:
    """The `result_accuracy` attribute text, written as StableHLO prints it."""
    if isinstance(accuracy, AccuracyMode):
        return f"#stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<{accuracy.name}>>"
    return (f"#stablehlo.result_accuracy<atol = {float(accuracy.atol):e}, rtol = {float(accuracy.rtol):e}, "
            f"ulps = {int(accuracy.ulps)}, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>")
