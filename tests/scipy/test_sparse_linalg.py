"""funcad.scipy.sparse.linalg's Krylov solvers (cg, bicgstab, gmres) against NumPy and JAX:
values and gradients, pytree operators, preconditioners, x0, vmap, and errors."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
import funcad.scipy.sparse.linalg as fsl

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.sparse.linalg as jsl  # noqa: E402


def close(a, b, rtol=1e-10, atol=1e-12):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol, equal_nan=True)


# ------------------------------------------------------------ sparse.linalg ----

def _system(n=5, seed=7):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, n))
    return q @ q.T / n + np.eye(n), rng.normal(size=(n, n)) / n + 2 * np.eye(n), rng.normal(size=n)


_SOLVERS = [("cg", {}), ("bicgstab", {}), ("gmres", {"solve_method": "batched"}),
            ("gmres", {"solve_method": "incremental", "restart": 2})]


@pytest.mark.parametrize("name,kw", _SOLVERS, ids=[f"{n}-{kw.get('solve_method', '')}" for n, kw in _SOLVERS])
def test_krylov_solvers_match_numpy_and_jax_values_and_grads(name, kw):
    spd, gen, b = _system()
    A = spd if name == "cg" else gen
    solve, jsolve = getattr(fsl, name), getattr(jsl, name)
    x, info = solve(A, b, tol=1e-12, **kw)
    xj, infoj = jsolve(A, b, tol=1e-12, **kw)
    close(x, np.linalg.solve(A, b), rtol=1e-9, atol=1e-10)
    close(x, xj, rtol=1e-9, atol=1e-10)
    assert (info is None) == (infoj is None) and (info is None or int(info) == int(infoj) == 0)
    # derivatives come from the transposed solve (custom_linear_solve), as JAX's
    f = lambda s, m: lambda a, b: m.sum(s(lambda v: a @ v, b, tol=1e-12, **kw)[0] ** 2)  # noqa: E731
    close(funcad.grad(f(solve, fnp), (0, 1))(A, b), jax.grad(f(jsolve, jnp), (0, 1))(A, b), rtol=1e-7, atol=1e-9)
    close(funcad.jit(lambda a, b: solve(a, b, tol=1e-12, **kw)[0])(A, b), xj, rtol=1e-9, atol=1e-10)


def test_krylov_solvers_take_pytrees_preconditioners_x0_and_vmap():
    spd, gen, b = _system(4)
    tree_b = {"u": b[:2], "v": (b[2:],)}

    for name, A in [("cg", spd), ("bicgstab", gen), ("gmres", gen)]:
        x, _ = getattr(fsl, name)(lambda t: _tree_mv(A, t), tree_b, tol=1e-12)
        want = np.linalg.solve(A, b)
        close(x["u"], want[:2], rtol=1e-9)
        close(x["v"][0], want[2:], rtol=1e-9)
        M = np.diag(1 / np.diag(A))
        x0 = np.ones(4)
        close(getattr(fsl, name)(A, b, x0=x0, M=M, tol=1e-12)[0], getattr(jsl, name)(A, b, x0=x0, M=M, tol=1e-12)[0],
              rtol=1e-9, atol=1e-10)
        bs = np.stack([b, -2 * b])
        close(funcad.vmap(lambda bb: getattr(fsl, name)(A, bb, tol=1e-12)[0])(bs), np.linalg.solve(A, bs.T).T,
              rtol=1e-9)
    # complex cg (Hermitian positive definite)
    h = spd + 1j * (np.triu(np.ones((4, 4)), 1) - np.tril(np.ones((4, 4)), -1)) * 0.1
    bc = b + 1j * b[::-1]
    close(fsl.cg(h, bc, tol=1e-12)[0], np.linalg.solve(h, bc), rtol=1e-9)
    # maxiter stops early, as JAX's
    close(fsl.cg(spd, b, maxiter=1)[0], jsl.cg(spd, b, maxiter=1)[0])


def _tree_mv(A, t):
    y = fnp.dot(A, fnp.concatenate([t["u"], t["v"][0]]))
    return {"u": y[:2], "v": (y[2:],)}


def test_krylov_solver_errors():
    spd, _, b = _system(3)
    with pytest.raises(ValueError, match="x0 and b must have matching tree structure"):
        fsl.cg(spd, b, x0=(b,))
    with pytest.raises(ValueError, match="arrays in x0 and b must have matching shapes"):
        fsl.bicgstab(spd, b, x0=np.zeros(2))
    with pytest.raises(ValueError, match="linear operator must be a square matrix, but has shape"):
        fsl.gmres(np.ones((3, 2)), b)
    with pytest.raises(ValueError, match="invalid solve_method 'qr', must be either 'incremental' or 'batched'"):
        fsl.gmres(spd, b, solve_method="qr")
    with pytest.raises(TypeError, match="must be either a function or ndarray"):
        fsl.cg("A", b)
    # info is -1 where the solution came out NaN, as JAX's
    x0 = np.array([np.nan, 0.0, 0.0])
    assert int(fsl.gmres(spd, b, x0=x0)[1]) == int(jsl.gmres(spd, b, x0=x0)[1]) == -1
