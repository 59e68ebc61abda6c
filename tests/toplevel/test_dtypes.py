"""funcad.dtypes and funcad.typing against jax.dtypes and jax.typing: the names, the dtype
queries, canonicalize_dtype and result_type in 32- and 64-bit mode, key dtypes, and the
ArrayLike and DTypeLike annotations."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import dtypes as fd


def test_dtypes_names_cover_jax():
    names = {n for n in dir(jax.dtypes) if not n.startswith("_")}
    assert names - set(fd.__all__) == set()
    assert fd.float0 == jax.dtypes.float0 and np.dtype(fd.bfloat16) == np.dtype(jnp.bfloat16)


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint16, np.float32, np.complex64,
                                ml_dtypes.bfloat16, ml_dtypes.int4, ml_dtypes.float8_e4m3fn,
                                ml_dtypes.float4_e2m1fn, ml_dtypes.int2])
def test_dtype_queries_match_jax(dt):
    assert fd.itemsize_bits(dt) == jax.dtypes.itemsize_bits(dt)
    assert fd.scalar_type_of(np.zeros(2, dt)) is jax.dtypes.scalar_type_of(jnp.zeros(2, dt))
    for abstract in (np.floating, np.integer, np.signedinteger, np.inexact, np.number, np.bool_):
        assert fd.issubdtype(dt, abstract) == jax.dtypes.issubdtype(dt, abstract), abstract
    assert fd.finfo is not None and fd.iinfo is not None
    if dt in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float4_e2m1fn, np.float32):
        assert float(fd.finfo(dt).eps) == float(jax.dtypes.finfo(dt).eps)


def test_canonicalize_and_result_type_match_jax_x32_and_x64():
    cases = [(np.float32, 2.0), (np.int8, 3), (np.int8, np.uint8), (np.int32, np.int64), (2.0,),
             (np.bfloat16 if hasattr(np, "bfloat16") else ml_dtypes.bfloat16, 1.0), (np.complex64, np.float64)]
    for x64 in (True, False):
        with jax.enable_x64(x64), funcad.enable_x64(x64):
            for dt in (np.float64, np.int64, np.uint64, np.complex128, np.float16, float, int, bool):
                assert fd.canonicalize_dtype(dt) == jax.dtypes.canonicalize_dtype(dt), (x64, dt)
            for args in cases:
                got = fd.result_type(*args, return_weak_type_flag=True)
                want = jax.dtypes.result_type(*args, return_weak_type_flag=True)
                assert (np.dtype(got[0]), got[1]) == (np.dtype(want[0]), want[1]), (x64, args)
    # promotion is funcad's (NumPy's) where JAX's lattice differs
    assert fd.result_type(np.float16, np.int64) == np.float64
    assert fd.result_type(np.int32, np.float32) == np.float64
    with pytest.raises(jax.dtypes.TypePromotionError):
        jax.dtypes.result_type(ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)
    with pytest.raises(fd.TypePromotionError, match="no available implicit dtype promotion"):
        fd.result_type(ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)
    assert issubclass(fd.TypePromotionError, ValueError)


def test_key_dtypes_are_extended_prng_keys():
    jk, fk = jax.random.key(0), funcad.random.key(0)
    for d, k in ((jax.dtypes, jk), (fd, fk)):
        assert d.issubdtype(k.dtype, d.prng_key) and d.issubdtype(k.dtype, d.extended)
        assert not d.issubdtype(k.dtype, np.integer) and not d.issubdtype(np.float32, d.extended)
        assert d.issubdtype(d.prng_key, d.extended) and not d.issubdtype(d.extended, d.prng_key)
    assert fd.canonicalize_dtype(fk.dtype, allow_extended_dtype=True) == fk.dtype


def test_typing_arraylike_and_dtypelike():
    from funcad.typing import ArrayLike, DTypeLike
    values = [1.5, 3, True, 1j, np.ones(2), np.float32(1), fnp.ones(2),
              funcad.jit(lambda v: v)(np.ones(2)), [1.0], "a", None]
    got = [isinstance(v, ArrayLike) for v in values]
    want = [isinstance(v, jax.typing.ArrayLike) for v in values[:6]] + [True, True, False, False, False]
    assert got == want
    assert DTypeLike is not None and set(jax.typing.__dict__) >= {"ArrayLike", "DTypeLike"}
    seen = []
    funcad.jit(lambda x: seen.append(isinstance(x, ArrayLike)) or x)(1.0)
    assert seen == [True]
