"""jaxlib's LAPACK kernels as StableHLO custom calls (CPU).

XLA has no native LU, QR, eigen or singular value decomposition; jaxlib ships
LAPACK wrappers for them as typed-FFI handlers (`lapack_dgetrf_ffi`,
`lapack_ssyevd_ffi`, ...; the same names from jaxlib 0.6 to 0.12). This module
registers those handlers with XLA's CPU client once (`register_lapack`) and
emits the `stablehlo.custom_call` that reaches one (`ffi_call`). It knows no
primitive; a primitive's lowering rule calls `ffi_call` with its operands.

The kernels take and return matrices in column-major (Fortran) order; XLA
transposes into and out of that layout itself when the call states its
operand and result layouts, as `ffi_call` does with `column_major=True`.
Attributes (LAPACK's `uplo`, `mode`, ...) travel in the typed-FFI attribute
dictionary; build their values with `char`, `u8`, `i32`, `i64` and `boolean`.

>>> from funcad.core.avals import ShapedArray
>>> from funcad.lowering.stablehlo import LoweringContext, Module, Value
>>> ctx = LoweringContext(Module())
>>> a = Value("%a", ShapedArray((3, 3), np.float64))
>>> lu, piv, info = ffi_call(ctx, lapack_target("getrf", np.float64), [a],
...     [a.aval, ShapedArray((3,), np.int32), ShapedArray((), np.int32)], aliases={0: 0})
>>> "lapack_dgetrf_ffi" in ctx.lines[0]
True
"""
from __future__ import annotations

import functools
from typing import Mapping, Sequence

import numpy as np

from ..core.errors import FuncadTypeError
from .stablehlo import Value
from .xla import _load, _unsupported, jaxlib_modules

__all__ = ["register_lapack", "lapack_target", "ffi_call", "char", "u8", "i32", "i64", "boolean"]

_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


@functools.lru_cache(maxsize=None)
def register_lapack() -> tuple:
    """Load jaxlib's LAPACK bindings and register every typed-FFI kernel
    (`*_ffi`) with XLA's CPU client; idempotent. Returns the names registered.

    Importing jax registers the same handlers; registering a name again with
    the same handler is accepted by XLA, so the order does not matter.
    """
    xc = _load()
    _lapack = jaxlib_modules().lapack
    if _lapack is None:
        raise _unsupported("jaxlib ships no LAPACK bindings (jaxlib.cpu._lapack)")
    _lapack.initialize()  # binds LAPACK's routines (from SciPy's BLAS/LAPACK) into the kernels
    names = []
    for name, handler in _lapack.registrations().items():
        if name.endswith("_ffi"):
            # api_version 1 here is XLA's typed FFI in the registration API.
            xc.register_custom_call_target(name, handler, platform="cpu", api_version=1)
            names.append(name)
    return tuple(sorted(names))


def lapack_target(routine: str, dtype) -> str:
    """The name of jaxlib's typed-FFI kernel for a LAPACK `routine` ("getrf",
    "geqrf", "syevd", ...) on `dtype`.

    >>> lapack_target("getrf", np.float32)
    'lapack_sgetrf_ffi'
    """
    prefix = _PREFIX.get(np.dtype(dtype).name)
    if prefix is None:
        raise FuncadTypeError(f"LAPACK's {routine} needs float32, float64, complex64 or "
                              f"complex128 matrices, not {np.dtype(dtype).name}; convert the "
                              "input with .astype(np.float32) or .astype(np.float64)")
    return f"lapack_{prefix}{routine}_ffi"


# --------------------------------------------------------------- attributes ----

def char(c: str) -> str:
    """A LAPACK character flag ('L', 'U', 'N', 'T', 'V'...) as the kernels take it: a ui8."""
    return f"{ord(c)} : ui8"


def u8(x: int) -> str:
    return f"{int(x)} : ui8"


def i32(x: int) -> str:
    return f"{int(x)} : i32"


def i64(x: int) -> str:
    return f"{int(x)} : i64"


def boolean(x: bool) -> str:
    return "true" if x else "false"


# --------------------------------------------------------------- the call ----

def _layout(ndim: int, column_major: bool) -> str:
    """Minor-to-major dimension order: the matrix dims (last two) column-major
    when asked, then the batch dims from the innermost out."""
    if column_major and ndim >= 2:
        order = [ndim - 2, ndim - 1] + list(range(ndim - 3, -1, -1))
    else:
        order = list(range(ndim - 1, -1, -1))
    body = ", ".join(map(str, order))
    return f"dense<[{body}]> : tensor<{ndim}xindex>" if ndim else "dense<> : tensor<0xindex>"


def ffi_call(ctx, target: str, operands: Sequence[Value], out_avals: Sequence,
             attrs: Mapping[str, str] | None = None, aliases: Mapping[int, int] | None = None,
             column_major: bool = True, platform: str = "cpu") -> list[Value]:
    """Emit a typed-FFI `stablehlo.custom_call` of `target`; return its results.

    `attrs` maps attribute names to MLIR attribute text (see `char`, `i32`...);
    `aliases` maps an operand index to the result that may reuse its buffer;
    with `column_major`, operands and results of the largest rank (the stacked
    matrices) are laid out column-major, the rest row-major. The CPU's LAPACK
    kernels are registered on first use.
    """
    if platform == "cpu" and target.startswith("lapack_"):
        register_lapack()
    out_avals = list(out_avals)
    top = max([len(v.aval.shape) for v in operands] + [0])
    in_layouts = ", ".join(_layout(len(v.aval.shape), column_major and len(v.aval.shape) == top)
                           for v in operands)
    out_layouts = ", ".join(_layout(len(a.shape), column_major and len(a.shape) == top)
                            for a in out_avals)
    config = ", ".join(f"{k} = {v}" for k, v in sorted((attrs or {}).items()))
    fields = [f'call_target_name = "{target}"', "api_version = 4 : i32",
              f"backend_config = {{{config}}}", "has_side_effect = false",
              f"operand_layouts = [{in_layouts}]", f"result_layouts = [{out_layouts}]"]
    if aliases:
        many = len(out_avals) > 1
        fields.append("output_operand_aliases = [" + ", ".join(
            f"#stablehlo.output_operand_alias<output_tuple_indices = [{o if many else ''}], "
            f"operand_index = {i}, operand_tuple_indices = []>" for i, o in sorted(aliases.items()))
            + "]")
    return ctx.op("stablehlo.custom_call", operands, out_avals, ", ".join(fields))
