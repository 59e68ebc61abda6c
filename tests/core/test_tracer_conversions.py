"""Python conversions of traced values fail the way JAX's do, with the fix in the message."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp


@pytest.mark.parametrize("name,fn", [("item", lambda x: x.item()), ("tolist", lambda x: x.tolist()),
                                     ("float", lambda x: float(x[0])), ("int", lambda x: int(x[0]))])
def test_concrete_value_needed_under_jit(name, fn):
    with pytest.raises(funcad.ConcretizationError) as info:
        funcad.jit(fn)(np.ones(3))
    assert "static_argnums" in str(info.value)
    assert "test_tracer_conversions.py" in str(info.value)  # points at the user's line


def test_item_assignment_points_at_at():
    def f(x):
        x[0] = 5.0
        return x
    with pytest.raises(TypeError, match=r"x = x\.at\[idx\]\.set\(y\)"):
        funcad.jit(f)(np.ones(3))
    np.testing.assert_array_equal(
        np.asarray(funcad.jit(lambda x: x.at[0].set(5.0))(np.ones(3))), [5.0, 1.0, 1.0])


def test_item_works_where_values_are_concrete():
    # Eager grad keeps primal values concrete, so .item() is a constant (as in JAX).
    assert float(funcad.grad(lambda x: x * x.item())(3.0)) == 3.0


# Each conversion under eager grad, jvp and vmap: what JAX raises (class name), or None where
# JAX allows it. A conversion that hands out the primal value would drop the derivative.
_CONVERSIONS = {
    "asarray": lambda v: np.sin(np.asarray(v)), "array": lambda v: np.array([v, v]).sum(),
    "float": lambda v: float(v) * v, "complex": lambda v: complex(v).real * v,
    "tolist": lambda v: v.tolist() * v, "int": lambda v: int(v) * v,
    "bool": lambda v: v * 2 if v > 0 else v, "item": lambda v: v.item() * v,
    "index": lambda v: [1.0, 2.0][(v > 1).astype(int)] * v,
    "scipy": lambda v: __import__("scipy.stats").stats.t.cdf(v, 3.0)}
_TRANSFORMS = {"grad": lambda m, f: m.grad(f)(0.3),
               "jvp": lambda m, f: m.jvp(f, (0.3,), (1.0,))[1],
               "vmap": lambda m, f: m.vmap(f)(np.array([0.3, 0.4]))}


def _outcome(module, transform, fn):
    try:
        return "ok", np.asarray(_TRANSFORMS[transform](module, fn))
    except Exception as e:  # the class name is what is compared with JAX's
        return type(e).__name__.replace("ConcretizationError", "ConcretizationTypeError"), e


@pytest.mark.parametrize("transform", sorted(_TRANSFORMS))
@pytest.mark.parametrize("conversion", sorted(_CONVERSIONS))
def test_conversions_under_eager_transformations_match_jax(conversion, transform):
    import jax
    fn = _CONVERSIONS[conversion]
    got, value = _outcome(funcad, transform, fn)
    want, ref = _outcome(jax, transform, fn)
    assert got == want, (got, want, value)
    if got == "ok":
        np.testing.assert_allclose(value, ref, rtol=1e-6)
    else:
        assert isinstance(value, funcad.errors.ConcretizationTypeError)
        assert "funcad.numpy" in str(value)  # says what to use instead


def test_derivative_through_scipy_raises_instead_of_zero():
    # Before: 0.0, silently (the t density at 0.5 is 0.3132).
    import scipy.stats
    with pytest.raises(funcad.errors.TracerArrayConversionError, match="derivative"):
        funcad.grad(lambda x: scipy.stats.t.cdf(x, 3.0))(0.5)
    with pytest.raises(funcad.errors.ConcretizationTypeError, match="float"):
        funcad.grad(lambda x: float(x) * x)(1.5)
    # the concrete values of inputs that carry nothing stay convertible
    assert funcad.grad(lambda x: x * float(fnp.float32(2.0)))(0.5) == 2.0


def test_numpy_functions_on_traced_values_trace_like_funcad_numpy():
    # Before: under eager grad np.abs(x) computed on the concrete value and the
    # gradient came out 0.0, silently.
    assert float(funcad.grad(lambda x: np.abs(x))(-2.0)) == -1.0
    x = np.array([0.3, -1.2])
    np.testing.assert_allclose(funcad.grad(lambda v: np.sum(np.sin(v) * v))(x),
                               np.cos(x) * x + np.sin(x))
    np.testing.assert_allclose(funcad.grad(lambda v: np.linalg.norm(v))(x), x / np.linalg.norm(x))
    np.testing.assert_allclose(np.asarray(funcad.jit(lambda v: np.concatenate([np.exp(v), v]))(x)),
                               np.concatenate([np.exp(x), x]))
    np.testing.assert_allclose(funcad.vmap(lambda v: np.maximum(v, 0.0))(x), np.maximum(x, 0.0))
    np.testing.assert_allclose(np.asarray(funcad.jit(lambda v: np.ones(2) + v)(x)), 1.0 + x)


def test_numpy_calls_funcad_cannot_trace_raise_instead_of_dropping_derivatives():
    with pytest.raises(funcad.FuncadTypeError, match="add.reduce"):
        funcad.grad(lambda v: np.add.reduce(v))(np.ones(2))
    with pytest.raises(funcad.FuncadTypeError, match="out"):
        funcad.grad(lambda v: np.sin(v, out=np.empty(2)).sum())(np.ones(2))
