"""Sparse Jacobians and Hessians (issue 20): the problem catalog and the benchmarks.

    .venv/bin/python bench/bench_sparse.py

The catalog (`JACOBIANS`, `HESSIANS`; tests/transforms/test_sparsity.py checks every entry)
holds sparse problems written with funcad.numpy: finite-difference Laplacians
(1-D and 2-D Bratu, viscous Burgers), a banded ODE right-hand side (Lorenz-96),
explicit heat steps in a fori_loop with a cond, an arrowhead Hessian, the
chained Rosenbrock Hessian, and a partially separable sum of small element
functions read through a constant index table.

Benchmarks:
1. The Hessian of the chained Rosenbrock function at n = 10,000 with
   jit(funcad.sparse_hessian), against JAX's dense jax.jit(jax.hessian) at the
   largest n it does here (the dense Hessian is n^2 floats), and the number of
   colours (3 for a tridiagonal Hessian).
2. The 2-D Bratu Jacobian on a 200x200 grid (n = 40,000) end to end, detection
   and colouring included: eager sparse_jacfwd, and the first call of its jit.
3. For every catalog problem: n, the pattern's nonzeros, the colours forward,
   reverse and (Hessians) star, and the pattern entries that are numerically
   zero in the dense Jacobian at a random input.
"""
from __future__ import annotations

import time

import numpy as np

import funcad
import funcad.numpy as fnp
from funcad import lax

# ----------------------------------------------------------------- catalog ----


def bratu1d(u, lam=1.0):
    """-u'' = lam exp(u) on (0, 1), u = 0 at both ends: the residual at interior points."""
    h = 1.0 / (u.shape[0] + 1)
    p = fnp.pad(u, 1)
    return (p[:-2] - 2 * u + p[2:]) / h ** 2 + lam * fnp.exp(u)


def bratu2d(u, lam=6.0):
    """The 2-D Bratu problem on the unit square (5-point Laplacian, zero boundary);
    `u` is the flat (N*N,) vector of interior values."""
    N = int(round(u.shape[0] ** 0.5))
    h = 1.0 / (N + 1)
    g = fnp.pad(u.reshape(N, N), 1)
    lap = (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] - 4 * g[1:-1, 1:-1]) / h ** 2
    return (lap + lam * fnp.exp(g[1:-1, 1:-1])).ravel()


def burgers(u, nu=0.01):
    """Viscous Burgers u_t = -u u_x + nu u_xx on a periodic grid (central differences)."""
    h = 1.0 / u.shape[0]
    up, um = fnp.roll(u, -1), fnp.roll(u, 1)
    return -u * (up - um) / (2 * h) + nu * (up - 2 * u + um) / h ** 2


def lorenz96(x, forcing=8.0):
    """dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F: a banded (cyclic) ODE right-hand side."""
    return (fnp.roll(x, -1) - fnp.roll(x, 2)) * fnp.roll(x, 1) - x + forcing


def heat_steps(u, steps=4, dt=0.1):
    """Explicit heat steps in a fori_loop, then a cond on the sign of the mean."""
    def step(i, v):
        p = fnp.pad(v, 1)
        return v + dt * (p[:-2] - 2 * v + p[2:])
    v = lax.fori_loop(0, steps, step, u)
    return lax.cond(fnp.mean(v) > 0, lambda w: w ** 2, lambda w: fnp.sin(w), v)


def arrowhead(x):
    """sum x^4 + x_0 sum_{i>0} x_i^2: the Hessian couples x_0 with everything."""
    return fnp.sum(x ** 4) + x[0] * fnp.sum(x[1:] ** 2)


def rosenbrock(x):
    """The chained Rosenbrock function: a tridiagonal Hessian."""
    return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _elements(n, k=3, seed=0):
    rng = np.random.default_rng(seed)
    return np.stack([rng.choice(n, k, replace=False) for _ in range(n // 2)])


def separable(x):
    """A partially separable sum of small element functions of 3 variables each, read
    through a constant index table (a gather at known indices)."""
    idx = _elements(x.shape[0])
    e = x[idx]                                   # (n/2, 3)
    return fnp.sum(fnp.sin(e[:, 0] * e[:, 1]) + e[:, 2] ** 2 * e[:, 0])


# name -> (function, n for the checks)
JACOBIANS = {
    "bratu1d": (bratu1d, 30),
    "bratu2d": (bratu2d, 64),
    "burgers": (burgers, 40),
    "lorenz96": (lorenz96, 40),
    "heat_steps": (heat_steps, 30),
}
HESSIANS = {
    "arrowhead": (arrowhead, 30),
    "rosenbrock": (rosenbrock, 40),
    "separable": (separable, 40),
}

# -------------------------------------------------------------- benchmarks ----


def _colours(pattern, kind):
    from funcad.transforms.sparsity.colouring import column_colouring, row_colouring, star_colouring
    c = {"fwd": column_colouring, "rev": row_colouring, "star": star_colouring}[kind](pattern)
    return int(c.max()) + 1 if c.size else 0


def catalog_table():
    from funcad.transforms.sparsity import check_pattern
    rng = np.random.default_rng(1)
    print(f"{'problem':12s} {'n':>5s} {'nnz':>6s} {'fwd':>4s} {'rev':>4s} {'star':>5s} "
          f"{'missing':>8s} {'num. zero':>9s}")
    for name, (f, n) in {**JACOBIANS, **HESSIANS}.items():
        x = rng.uniform(0.1, 0.9, n)
        if name in HESSIANS:
            pattern = funcad.hessian_sparsity(f)(x)
            dense = funcad.hessian(f)(x)
            star = f"{_colours(pattern, 'star'):5d}"
        else:
            pattern = funcad.jacobian_sparsity(f)(x)
            dense = funcad.jacfwd(f)(x)
            star = f"{'':5s}"
        missing, zero = check_pattern(pattern, dense)
        print(f"{name:12s} {n:5d} {pattern.nnz:6d} {_colours(pattern, 'fwd'):4d} "
              f"{_colours(pattern, 'rev'):4d} {star} {missing:8d} {zero:9d}")


def rosenbrock_benchmark():
    import jax
    import jax.numpy as jnp
    from _timing import best_of
    jax.config.update("jax_enable_x64", True)

    def rosen_jax(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    n = 10_000
    x = np.random.default_rng(0).uniform(-1, 1, n)
    sparse_h = funcad.jit(funcad.sparse_hessian(rosenbrock))
    t0 = time.perf_counter()
    H = sparse_h(x)
    first = time.perf_counter() - t0
    colours = _colours(funcad.hessian_sparsity(rosenbrock)(x), "star")
    t_sparse, = best_of([lambda: sparse_h(x)], sync=lambda r: r.data.block_until_ready())
    print(f"funcad jit(sparse_hessian) n={n}: {t_sparse * 1e3:.3f} ms per call "
          f"(first call with detection and compile {first:.2f} s), {colours} colours, nnz {H.nnz}")
    dense_h = jax.jit(jax.hessian(rosen_jax))
    best = None
    for m in (1000, 2000, 4000, 6000, 8000, 10_000):
        xm = x[:m]
        try:
            Hd = dense_h(xm)
            Hd.block_until_ready()
        except Exception as e:  # out of memory: the previous n is the largest
            print(f"JAX dense jit(hessian) n={m}: failed ({type(e).__name__})")
            break
        t, = best_of([lambda: dense_h(xm)], repeat=3, sync=lambda r: r.block_until_ready())
        print(f"JAX dense jit(hessian) n={m}: {t * 1e3:.1f} ms per call")
        best = (m, t)
        if m == 1000:
            ref = np.asarray(Hd)
            got = np.asarray(funcad.jit(funcad.sparse_hessian(rosenbrock))(xm).todense())
            print(f"  max |sparse - dense| at n=1000: {np.max(np.abs(got - ref)):.2e}")
        del Hd
    if best:
        m, t = best
        print(f"ratio: JAX dense at n={m} / funcad sparse at n={n} = {t / t_sparse:.0f}x "
              f"(goal: at least 100x)")


def bratu_benchmark():
    N = 200
    x = np.random.default_rng(0).uniform(0, 0.1, N * N)
    funcad.sparse_jacfwd(bratu1d)(np.zeros(8))    # import-time costs out of the way
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        J = funcad.sparse_jacfwd(bratu2d)(x)
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    pattern = funcad.jacobian_sparsity(bratu2d)(x)
    t_detect = time.perf_counter() - t0
    print(f"2-D Bratu {N}x{N} (n={N * N}), eager sparse_jacfwd end to end: best {min(times):.3f} s, "
          f"first {times[0]:.3f} s (detection alone {t_detect:.3f} s); nnz {J.nnz}, "
          f"{_colours(pattern, 'fwd')} colours")
    jf = funcad.jit(funcad.sparse_jacfwd(bratu2d))
    t0 = time.perf_counter()
    Jj = jf(x)
    Jj.data.block_until_ready()
    first = time.perf_counter() - t0
    from _timing import best_of
    t, = best_of([lambda: jf(x)], sync=lambda r: r.data.block_until_ready())
    err = np.max(np.abs(np.asarray(Jj.data) - J.tocsr().data)) if Jj.nnz == J.nnz else float("nan")
    print(f"  jit(sparse_jacfwd): first call (detection + compile) {first:.3f} s, then "
          f"{t * 1e3:.2f} ms per call; max |jit - eager| {err:.1e}")


if __name__ == "__main__":
    catalog_table()
    bratu_benchmark()
    rosenbrock_benchmark()
