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


def test_item_and_tolist_work_where_values_are_concrete():
    # Eager grad keeps primal values concrete (as funcad documents), so .item() is a constant.
    assert float(funcad.grad(lambda x: x * x.item())(3.0)) == 3.0
    assert funcad.grad(lambda x: fnp.sum(x) * len(x.tolist()))(np.ones(2)).tolist() == [2.0, 2.0]


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
