"""Eager numbers under the drop-in are JAX's bit for bit: with eager_backend="xla" (the
drop-in's default) eager primitives that NumPy rounds otherwise run as one compiled XLA
operation each; jit leaves their constant folding to XLA and writes small constants into
the program, as JAX does. Under `import funcad` eager stays NumPy's."""
from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.as_jax as as_jax
import funcad.numpy as fnp
from funcad.core.errors import FuncadTypeError


def _inputs(n=4096, seed=0):
    r = np.random.RandomState(seed)
    return {"exp": np.float32(r.uniform(-80, 80, n)), "log": np.float32(r.lognormal(0, 3, n)),
            "tanh": np.float32(r.normal(0, 3, n)), "sum": np.float32(r.normal(0, 1, (n // 64, 64)))}


FUNS = {"exp": (fnp.exp, jnp.exp), "log": (fnp.log, jnp.log), "tanh": (fnp.tanh, jnp.tanh),
        "sum": (lambda x: fnp.sum(x, axis=1), lambda x: jnp.sum(x, axis=1))}


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("name", sorted(FUNS))
def test_eager_xla_is_jaxs_bits(name):
    x = _inputs()[name]
    ours, theirs = FUNS[name]
    with funcad.eager_backend("xla"):
        got = ours(x)
        got_lax = getattr(funcad.lax, name)(x) if name != "sum" else funcad.lax.reduce_sum(x, (1,))
    assert type(got) is type(fnp.zeros(1))  # an eager funcad array, on the host
    _same_bits(got, theirs(x))
    _same_bits(got_lax, theirs(x))


def test_numpy_backend_stays_numpys():
    x = _inputs()["exp"]
    assert funcad.config.read("eager_backend") == "numpy"
    _same_bits(fnp.exp(x), np.exp(x))
    assert (np.asarray(jnp.exp(x)) != np.exp(x)).any()  # else this file tests nothing


def test_dropin_sets_xla_and_uninstall_restores(monkeypatch):
    monkeypatch.delenv("JAX_ENABLE_X64", raising=False)
    monkeypatch.delenv("FUNCAD_EAGER_BACKEND", raising=False)
    xs = _inputs(seed=1)
    want = {k: np.asarray(FUNS[k][1](x)) for k, x in xs.items()}
    real_jax = sys.modules["jax"]
    as_jax.install()
    try:
        import jax as dropin_jax
        import jax.numpy as djnp
        assert dropin_jax is funcad and dropin_jax.config.read("eager_backend") == "xla"
        for k, x in xs.items():
            got = djnp.sum(x, axis=1) if k == "sum" else getattr(djnp, k)(djnp.asarray(x))
            _same_bits(got, want[k])
            _same_bits(dropin_jax.jit(FUNS[k][0])(x), want[k])
    finally:
        as_jax.uninstall()
    assert sys.modules["jax"] is real_jax and funcad.config.read("eager_backend") == "numpy"


def test_grad_and_vmap_of_eager_xla_ops_are_jaxs():
    x = _inputs()["tanh"][:256]
    f_ours = lambda v: fnp.sum(fnp.tanh(v) * fnp.exp(v / 4))  # noqa: E731
    f_jax = lambda v: jnp.sum(jnp.tanh(v) * jnp.exp(v / 4))  # noqa: E731
    with funcad.eager_backend("xla"):
        g = funcad.grad(f_ours)(x)
        v = funcad.vmap(fnp.log1p)(np.abs(x))
    _same_bits(g, jax.grad(f_jax)(x))
    _same_bits(v, jax.vmap(jnp.log1p)(np.abs(x)))


def test_jit_leaves_constant_transcendentals_to_xla():
    # XLA folds log(2*pi*scale**2) of a constant `scale` with its evaluator in JAX's
    # program; funcad writes the small constant into the program and leaves the fold to XLA.
    def logpdf(np_, x):
        scale = np_.array([1.0, 0.3, 2.5], np.float32)
        return np_.sum(-0.5 * (np_.log(2 * np.pi * scale ** 2) + (x - 0.5) ** 2 / scale ** 2))
    xs = np.float32(np.random.RandomState(3).normal(0, 2, (200, 3)))
    want = jax.jit(jax.vmap(lambda x: logpdf(jnp, x)))(xs)
    with funcad.eager_backend("xla"):
        got = funcad.jit(funcad.vmap(lambda x: logpdf(fnp, x)))(xs)
    _same_bits(got, want)


def test_option_refuses_other_values():
    with pytest.raises(FuncadTypeError, match="eager_backend takes one of 'numpy', 'xla'"):
        funcad.config.update("eager_backend", "gpu")
    assert funcad.config.read("eager_backend") == "numpy"


def test_out_sharding_of_an_unsharded_type_lays_out_nothing():
    # optax's `_vdot` passes NamedSharding(typeof(a).sharding.mesh, P()) where `a` has no
    # mesh (an empty abstract mesh, whose axes are all "explicit"): no sharding, as in JAX.
    a, b = np.float32([1.5, 2.0, -1.0]), np.float32([0.5, 4.0, 3.0])

    def vdot(np_, lib, x, y):
        s = lib.sharding.NamedSharding(lib.typeof(x).sharding.mesh, lib.P())
        return np_.tensordot(x, y, 1, out_sharding=s)
    want = jax.jit(lambda x, y: vdot(jnp, jax, x, y))(a, b)
    np.testing.assert_array_equal(funcad.jit(lambda x, y: vdot(fnp, funcad, x, y))(a, b), want)
    np.testing.assert_array_equal(vdot(fnp, funcad, a, b), vdot(jnp, jax, a, b))
