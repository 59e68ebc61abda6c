"""Small fixes found by running the JAX program corpus (tests/programs) with funcad."""
from __future__ import annotations

import warnings

import numpy as np

import funcad
import funcad.nn
import funcad.numpy as fnp


def test_one_hot_default_dtype_in_32_bit_mode_warns_nothing():
    with funcad.enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("error")
        hot = funcad.nn.one_hot(np.array([1, 0]), 3)
        assert hot.dtype == np.float32
        np.testing.assert_array_equal(hot, [[0, 1, 0], [1, 0, 0]])
    assert funcad.nn.one_hot(np.array([2]), 3).dtype == np.float64


def test_var_method_of_a_traced_array():
    x = np.arange(6.0).reshape(2, 3)
    f = lambda a: a.var(-1, keepdims=True) + a.std()
    np.testing.assert_allclose(funcad.jit(f)(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(funcad.vmap(lambda a: a.var())(x), x.var(1), rtol=1e-12)
    np.testing.assert_allclose(funcad.grad(lambda a: a.var())(x), 2 * (x - x.mean()) / 6, rtol=1e-12)


def test_initializers_default_dtype_is_silent_with_x64_off():
    key = funcad.random.PRNGKey(0)
    with funcad.enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("error")
        for init in (funcad.nn.initializers.glorot_normal(), funcad.nn.initializers.normal(),
                     funcad.nn.initializers.zeros):
            assert init(key, (3, 2)).dtype == np.float32
    assert funcad.nn.initializers.glorot_normal()(key, (3, 2)).dtype == np.float64
