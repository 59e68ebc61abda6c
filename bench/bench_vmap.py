"""vmap benchmarks, side by side with JAX (issue 5).

    .venv/bin/python bench/bench_vmap.py

1. jit(vmap(grad(logistic_loss), in_axes=(None, 0, 0))) over 1000 examples x 100 features
2. jit(hessian(rosenbrock)) on 200 dimensions
Steady-state times (best of repeats, results synchronised), float32 and float64.
"""
from __future__ import annotations


import numpy as np

from _timing import best_of

import funcad
import funcad.numpy as fnp


def _sync(out):
    np.asarray(funcad.tree_util.tree_leaves(out)[0] if not hasattr(out, "shape") else out)


def best(f, *args, repeat=30, number=5):
    return best_of([lambda: f(*args)], repeat=repeat, number=number, sync=_sync)[0]


def sync_jax(f):
    def g(*a):
        out = f(*a)
        import jax
        return jax.block_until_ready(out)
    return g


def main():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    rows = []
    for dtype in (np.float32, np.float64):
        rng = np.random.default_rng(0)
        w = rng.normal(size=100).astype(dtype)
        xs = rng.normal(size=(1000, 100)).astype(dtype)
        ys = np.sign(rng.normal(size=1000)).astype(dtype)

        def loss(w, x, y):
            return fnp.log1p(fnp.exp(-y * fnp.dot(w, x)))

        def jloss(w, x, y):
            return jnp.log1p(jnp.exp(-y * jnp.dot(w, x)))

        ours = funcad.jit(funcad.vmap(funcad.grad(loss), in_axes=(None, 0, 0)))
        theirs = sync_jax(jax.jit(jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))))
        np.testing.assert_allclose(np.asarray(ours(w, xs, ys)), np.asarray(theirs(w, xs, ys)),
                                   rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-6)
        rows.append((f"per-example grads, logistic 1000x100 {np.dtype(dtype).name}",
                     best(ours, w, xs, ys), best(theirs, w, xs, ys)))

        x = rng.uniform(-1, 1, 200).astype(dtype)
        rosen = lambda x: fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
        jrosen = lambda x: jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
        ours = funcad.jit(funcad.hessian(rosen))
        theirs = sync_jax(jax.jit(jax.hessian(jrosen)))
        np.testing.assert_allclose(np.asarray(ours(x)), np.asarray(theirs(x)),
                                   rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-3)
        rows.append((f"hessian(rosenbrock), n=200 {np.dtype(dtype).name}", best(ours, x), best(theirs, x)))

    print(f"{'benchmark':48s} {'funcad':>10s} {'jax':>10s} {'ratio':>7s}")
    for name, a, b in rows:
        print(f"{name:48s} {a * 1e6:8.1f}us {b * 1e6:8.1f}us {a / b:7.2f}")


if __name__ == "__main__":
    main()
