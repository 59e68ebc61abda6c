"""The numpy_dtype_promotion option: strict promotion against JAX's for each kind of operand
pair, its error text, and its place in jit's cache key."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp


_PROMOTIONS = [
    ("f32+f16", lambda m: m.add(m.ones(2, np.float32), np.ones(2, np.float16))),
    ("i32+f32", lambda m: m.ones(2, np.int32) + m.ones(2, np.float32)),
    ("f32+py_float", lambda m: m.ones(2, np.float32) + 1.0),
    ("i32+py_float", lambda m: m.ones(2, np.int32) + 1.0),
    ("i8+py_int", lambda m: m.ones(2, np.int8) * 3),
    ("c64+py_float", lambda m: m.ones(2, np.complex64) * 2.0),
    ("f32*True", lambda m: m.ones(2, np.float32) * True),
    ("u8+i8", lambda m: m.ones(2, np.uint8) + m.ones(2, np.int8)),
    ("result_type", lambda m: m.result_type(np.float32, np.int32)),
    ("result_type_weak", lambda m: m.result_type(np.float32, 1.0)),
    ("promote_types", lambda m: m.promote_types(np.float32, np.float64)),
    ("where", lambda m: m.where(True, m.ones(2, np.float32), m.ones(2, np.int32))),
    ("where_scalar", lambda m: m.where(m.ones(2) > 0, m.ones(2, np.float32), 0.0)),
    ("concatenate", lambda m: m.concatenate([m.ones(2, np.float32), m.ones(2, np.int32)])),
    ("matmul", lambda m: m.ones(2, np.float32) @ m.ones(2, np.int32)),
    ("astype", lambda m: m.ones(2, np.float32).astype(np.int32)),
    ("mean", lambda m: m.mean(m.ones(3, np.float32) ** 2)),
    ("at_set", lambda m: m.ones(3, np.float32).at[0].set(2.0)),
    ("i32/py_int", lambda m: m.ones(3, np.int32) / 2),
]


@pytest.mark.parametrize("case", _PROMOTIONS, ids=[c[0] for c in _PROMOTIONS])
def test_strict_promotion_matches_jax(case):
    _, fn = case
    outcome = []
    for lib, m in ((jax, jnp), (funcad, fnp)):
        with lib.numpy_dtype_promotion("strict"), funcad.enable_x64(False):
            try:
                r = fn(m)
                outcome.append(("ok", np.dtype(getattr(r, "dtype", r))))
            except Exception as e:  # noqa: BLE001
                outcome.append((type(e).__name__, None))
    assert outcome[0] == outcome[1]
    with funcad.numpy_dtype_promotion("standard"):
        fn(fnp)  # standard: always promotes


def test_strict_promotion_error_text_and_jit_key():
    with funcad.numpy_dtype_promotion("strict"):
        with pytest.raises(funcad.dtypes.TypePromotionError) as info:
            fnp.ones(2, np.int32) + 1.5
        with pytest.raises(funcad.dtypes.TypePromotionError):
            funcad.dtypes.result_type(np.int8, np.uint8)
    assert str(info.value) == (
        "Input dtypes ('int32', \"<class 'float'>\") have no available implicit dtype promotion "
        "path when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
        "output type, or set jax_numpy_dtype_promotion=standard.")
    assert isinstance(info.value, ValueError)
    g = funcad.jit(lambda a, b: a + b)
    a, b = np.ones(2, np.float32), np.ones(2, np.int32)
    assert g(a, b).dtype == np.float64  # traced and cached under 'standard'
    with funcad.numpy_dtype_promotion("strict"):
        with pytest.raises(funcad.dtypes.TypePromotionError):
            g(a, b)  # the cache keys on the setting: traced again, and refused
        np.testing.assert_array_equal(g(a, a), 2 * a)
    assert g(a, b).dtype == np.float64
