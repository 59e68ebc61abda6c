"""A custom_vjp's bwd runs even when every cotangent of its outputs is zero, as in JAX:
its own returned cotangents reach the inputs (flax's fp8 rules pass new scales and amax
histories back this way). Eager, under jit and inside scan, against JAX."""
import numpy as np
import pytest

import funcad

jax = pytest.importorskip("jax")


def _program(m):
    @m.custom_vjp
    def update(x, h):
        return x * 2, h

    update.defvjp(lambda x, h: ((x * 2, h), (h,)), lambda res, g: (None, res[0] * 3 + 7))

    @m.custom_vjp
    def use(x, s, w):  # its bwd gives no cotangent to x and s
        return x * w

    use.defvjp(lambda x, s, w: (x * w, (w,)), lambda res, ct: (None, None, ct * res[0]))

    def loss(x, h, w):
        a, b = update(x, h)
        return use(a, b, w).sum()

    def scanned(x, h, w):
        def body(c, _):
            return c + loss(x, h, w), None
        return m.lax.scan(body, 0.0, None, length=3)[0]
    return loss, scanned


@pytest.mark.parametrize("which", [0, 1], ids=["plain", "scan"])
def test_bwd_runs_on_zero_cotangents_as_in_jax(which):
    args = (np.ones(3, np.float32), np.arange(3, dtype=np.float32), np.full(3, 2.0, np.float32))
    want = jax.grad(_program(jax)[which], (0, 1, 2))(*args)
    assert np.asarray(want[1]).any()  # the bwd's own cotangent for h
    f = funcad.grad(_program(funcad)[which], (0, 1, 2))
    for got in (f(*args), funcad.jit(f)(*args)):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
