"""funcad.scipy.optimize.minimize (BFGS) against JAX's: the same iterates, every
field of OptimizeResults, eagerly and under jit, float64 and float32."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.errors import FuncadTypeError, FuncadValueError
from funcad.scipy.optimize import OptimizeResults, minimize


@pytest.fixture(scope="module")
def jx():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def bowl(x, c, np_=fnp):
    w = np_.arange(1.0, x.shape[0] + 1.0, dtype=x.dtype)
    return np_.sum(w * (x - c) ** 2) + 0.1 * np_.sum(x ** 4) + np_.prod(np_.cos(x))


def rosen(x, np_=fnp):
    return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _compare(ours, theirs, rtol):
    assert isinstance(ours, OptimizeResults)
    for field in OptimizeResults._fields:
        a, b = np.asarray(getattr(ours, field)), np.asarray(getattr(theirs, field))
        assert a.dtype == b.dtype, field
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=field)


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-9), (np.float32, 1e-4)])
def test_matches_jax_eager_and_jit(jx, dtype, rtol):
    import jax.numpy as jnp
    from jax.scipy.optimize import minimize as jmin
    x0 = np.array([0.3, -1.0, 2.0, 0.1], dtype)
    c = dtype(0.7)
    theirs = jmin(lambda x, c: bowl(x, c, jnp), x0, (c,), method="BFGS")
    _compare(minimize(bowl, x0, (c,), method="BFGS"), theirs, rtol)
    _compare(funcad.jit(lambda x0: minimize(bowl, x0, (c,), method="BFGS"))(x0), theirs, rtol)


def test_rosenbrock_line_search_failure_and_maxiter_statuses_match_jax(jx):
    import jax.numpy as jnp
    from jax.scipy.optimize import minimize as jmin
    x0 = np.array([-1.2, 1.0, 0.5, -0.3])
    _compare(minimize(rosen, x0, method="BFGS"), jmin(lambda x: rosen(x, jnp), x0, method="BFGS"), 1e-9)
    opts = dict(maxiter=2, gtol=1e-8, norm=2, line_search_maxiter=5)
    ours = minimize(rosen, np.zeros(3), method="bfgs", options=opts)
    _compare(ours, jmin(lambda x: rosen(x, jnp), np.zeros(3), method="BFGS", options=opts), 1e-9)
    assert int(ours.status) == 1 and int(ours.nit) == 2 and not bool(ours.success)


def test_converges_on_a_quadratic_to_the_solution():
    A = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([1.0, -1.0])
    res = minimize(lambda x: 0.5 * x @ A @ x - b @ x, np.zeros(2), method="BFGS")
    assert bool(res.success) and int(res.status) == 0
    np.testing.assert_allclose(res.x, np.linalg.solve(A, b), atol=1e-6)
    np.testing.assert_allclose(res.hess_inv, np.linalg.inv(A), atol=1e-3)


def test_bad_calls_raise_clearly():
    f = lambda x: fnp.sum(x ** 2)
    with pytest.raises(FuncadValueError, match="Method Nelder-Mead not recognized"):
        minimize(f, np.ones(2), method="Nelder-Mead")
    with pytest.raises(FuncadTypeError, match="args must be a tuple"):
        minimize(lambda x, c: f(x), np.ones(2), 1.0, method="BFGS")
    with pytest.raises(FuncadTypeError, match=r"unknown options \['maxfun'\]"):
        minimize(f, np.ones(2), method="BFGS", options={"maxfun": 3})
    with pytest.raises(FuncadValueError, match="x0 must be a 1-D array"):
        minimize(f, np.ones((2, 2)), method="BFGS")
    with pytest.raises(TypeError):
        minimize(f, np.ones(2))  # method is required, as in JAX
