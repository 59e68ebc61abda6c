"""funcad.pure_callback against JAX's: values eagerly and under jit (jaxlib's host-callback
custom call), what the callback sees under each vmap_method, and the errors."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)


def _run(lib, vmap_method, jit, x, y):
    calls = []

    def host(a, b):
        calls.append((np.shape(a), np.shape(b)))
        return np.sin(a) * b

    def f(a, b):
        return lib.pure_callback(host, lib.ShapeDtypeStruct(a.shape, np.float64), a, b,
                                 vmap_method=vmap_method)
    g = lib.vmap(f, in_axes=(0, None))
    out = (lib.jit(g) if jit else g)(x, y)
    return np.asarray(out), calls


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all", "legacy_vectorized"])
def test_vmap_methods_match_jax(method, jit):
    x, y = np.arange(12.0).reshape(4, 3), np.array([1.0, 2.0, 3.0])
    ours, our_calls = _run(funcad, method, jit, x, y)
    theirs, their_calls = _run(jax, method, jit, x, y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    assert our_calls == their_calls


def test_eager_jit_and_pytrees():
    def host(d, scale=1.0):
        return {"s": np.sum(d["a"]) * scale, "p": (d["a"] * d["b"]).astype(np.float32)}
    spec = {"s": funcad.ShapeDtypeStruct((), np.float64), "p": funcad.ShapeDtypeStruct((2,), np.float32)}

    def f(a, b):
        return funcad.pure_callback(host, spec, {"a": a, "b": b}, scale=3.0)
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    for out in (f(a, b), funcad.jit(f)(a, b)):
        assert float(out["s"]) == 9.0 and out["p"].dtype == np.float32
        np.testing.assert_array_equal(out["p"], [3.0, 8.0])


def test_callback_inside_loop_under_jit():
    count = []

    def host(x):
        count.append(1)
        return x + 1.0

    def body(i, c):
        return funcad.pure_callback(host, funcad.ShapeDtypeStruct((), np.float64), c)
    assert float(funcad.jit(lambda c: funcad.lax.fori_loop(0, 5, body, c))(0.0)) == 5.0
    assert len(count) == 5


def test_grad_raises_as_jax():
    f = lambda x: funcad.pure_callback(np.sin, funcad.ShapeDtypeStruct((), np.float64), x)
    with pytest.raises(ValueError, match="custom_jvp"):
        funcad.grad(f)(1.0)


def test_grad_through_custom_jvp_works():
    @funcad.custom_jvp
    def f(x):
        return funcad.pure_callback(np.sin, funcad.ShapeDtypeStruct((), np.float64), x)

    @f.defjvp
    def f_jvp(p, t):
        return f(p[0]), fnp.cos(p[0]) * t[0]
    assert abs(float(funcad.grad(f)(0.5)) - np.cos(0.5)) < 1e-15
    assert abs(float(funcad.jit(funcad.grad(f))(0.5)) - np.cos(0.5)) < 1e-15


def test_errors():
    spec = funcad.ShapeDtypeStruct((2,), np.float64)
    with pytest.raises(ValueError, match="vmap_method"):
        funcad.vmap(lambda x: funcad.pure_callback(np.sin, spec, x))(np.ones((3, 2)))
    with pytest.raises(ValueError, match="vmap_method must be"):
        funcad.pure_callback(np.sin, spec, np.ones(2), vmap_method="bogus")
    with pytest.raises(ValueError, match="shape"):
        funcad.pure_callback(lambda x: np.ones(3), spec, np.ones(2))
    with pytest.raises(TypeError, match="dtype"):
        funcad.pure_callback(lambda x: np.ones(2, np.float32), spec, np.ones(2))
    with pytest.raises(Exception, match="shape"):
        funcad.jit(lambda x: funcad.pure_callback(lambda v: np.ones(3), spec, x))(np.ones(2))


def test_callback_receives_funcad_arrays_as_jax_passes_jax_arrays():
    seen = []

    def cb(x):
        seen.append((isinstance(x, funcad.Array), x.flags.writeable))
        return x * 2

    s = funcad.ShapeDtypeStruct((3,), np.float32)
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(funcad.pure_callback(cb, s, x), 2 * x)
    np.testing.assert_array_equal(funcad.jit(lambda v: funcad.pure_callback(cb, s, v))(x), 2 * x)
    assert seen == [(True, False), (True, False)]
