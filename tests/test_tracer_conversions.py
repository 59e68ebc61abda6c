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
