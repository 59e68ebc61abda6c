"""BLAS trsm from the OpenBLAS that NumPy itself loads, for the eager triangular solve.

NumPy's and SciPy's wheels each bundle their own OpenBLAS, each with its own thread pool.
Eager code mixes them: matmul and cholesky run in NumPy's, SciPy's trsm in SciPy's. After a
call, an OpenBLAS pool's threads spin for a while before they sleep, so alternating the two
libraries (as the Cholesky derivative does: trsm, matmul, trsm) makes each pool's work share
the cores with the other's spinning threads: 2-3x slower on 2 cores, erratically. Solving in
NumPy's library keeps funcad's eager level-3 work in one pool.

`trsm` returns None where NumPy's library is not a recognised OpenBLAS (another BLAS, a
build from source, another platform): the caller then uses SciPy's.
"""
from __future__ import annotations

import ctypes
import functools
import os

import numpy as np

# CBLAS enums (cblas.h)
_ROW_MAJOR, _LEFT, _RIGHT, _UPPER, _LOWER = 101, 141, 142, 121, 122
_NO_TRANS, _TRANS, _CONJ_TRANS, _NON_UNIT, _UNIT = 111, 112, 113, 131, 132
_TYPES = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
          np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


@functools.cache
def _library():
    """NumPy's bundled OpenBLAS and its symbol prefix/suffix, or None."""
    blas = getattr(np.__config__, "CONFIG", {}).get("Build Dependencies", {}).get("blas", {})
    if blas.get("name") != "scipy-openblas":
        return None
    root = os.path.dirname(np.__file__)
    folders = (root + ".libs", os.path.join(root, ".dylibs"))  # Linux/Windows, macOS wheels
    names = sorted(os.path.join(d, f) for d in folders if os.path.isdir(d) for f in os.listdir(d)
                   if "openblas" in f)
    if len(names) != 1:
        return None
    suffix = "64_" if "USE64BITINT" in blas.get("openblas configuration", "") else ""
    try:
        return ctypes.CDLL(names[0]), suffix
    except OSError:
        return None


@functools.cache
def _trsm_function(kind: str):
    found = _library()
    if found is None:
        return None
    lib, suffix = found
    f = getattr(lib, f"scipy_cblas_{kind}trsm{suffix}", None)
    if f is None:
        return None
    index = ctypes.c_int64 if suffix else ctypes.c_int
    scalar = ctypes.c_void_p if kind in "cz" else (ctypes.c_float if kind == "s" else ctypes.c_double)
    f.argtypes = [ctypes.c_int] * 5 + [index, index, scalar, ctypes.c_void_p, index, ctypes.c_void_p, index]
    f.restype = None
    return f


def trsm(a: np.ndarray, b: np.ndarray, left_side: bool, lower: bool, transpose_a: bool,
         conjugate_a: bool, unit_diagonal: bool) -> np.ndarray | None:
    """op(a)⁻¹ b (left_side) or b op(a)⁻¹ for one matrix pair of one BLAS dtype, or None."""
    kind = _TYPES.get(a.dtype)
    if kind is None or b.dtype != a.dtype:
        return None
    f = _trsm_function(kind)
    if f is None:
        return None
    a = np.ascontiguousarray(a)
    out = np.array(b, order="C", copy=True)
    m, n = out.shape
    if m == 0 or n == 0:
        return out
    trans = (_CONJ_TRANS if conjugate_a else _TRANS) if transpose_a else _NO_TRANS
    if conjugate_a and not transpose_a:
        a = np.conj(a)  # CBLAS has no conjugate-without-transpose
    alpha = np.ones((), a.dtype)  # complex alpha goes by pointer
    one = alpha.ctypes.data if kind in "cz" else 1.0
    f(_ROW_MAJOR, _LEFT if left_side else _RIGHT, _LOWER if lower else _UPPER, trans,
      _UNIT if unit_diagonal else _NON_UNIT, m, n, one, a.ctypes.data, max(a.shape[1], 1),
      out.ctypes.data, n)
    return out
