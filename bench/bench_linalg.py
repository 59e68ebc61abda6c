"""Linear algebra speed: the gradient of a Gaussian-process negative log
marginal likelihood (RBF kernel, Cholesky-based), funcad side by side with
JAX and HIPS autograd.

Run: .venv/bin/python bench/bench_linalg.py [--quick]

1. `jit(grad(nlml))` at n = 1000 on the CPU (target: at most 1.1x JAX);
2. eager `grad(nlml)` at n = 200 on NumPy (target: no slower than autograd).

The likelihood is ½ yᵀK⁻¹y + Σ log diag L + (n/2) log 2π with K = L Lᵀ =
σ² exp(-|xᵢ - xⱼ|² / 2ℓ²) + σₙ² I, differentiated with respect to
(log ℓ, log σ², log σₙ²). Each figure is the best of several timed loops,
interleaved between the libraries, all in one process.
"""
from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

from _timing import best_of  # noqa: E402
import funcad  # noqa: E402
import funcad.numpy as fnp  # noqa: E402
import funcad.scipy.linalg as fsl  # noqa: E402


def nlml(np_, solve_triangular):
    def f(params, x, y):
        ell, s2, noise = np_.exp(params[0]), np_.exp(params[1]), np_.exp(params[2])
        sq = np_.sum(x * x, axis=1)
        d2 = np_.maximum(sq[:, None] + sq[None, :] - 2.0 * (x @ x.T), 0.0)
        k = s2 * np_.exp(-0.5 * d2 / ell ** 2) + noise * np_.eye(x.shape[0])
        chol = np_.linalg.cholesky(k)
        alpha = solve_triangular(chol, y, lower=True)
        return (0.5 * np_.sum(alpha * alpha) + np_.sum(np_.log(np_.diagonal(chol, axis1=-1, axis2=-2)))
                + 0.5 * x.shape[0] * np.log(2 * np.pi))
    return f


def data(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, (n, d))
    y = np.sin(x).sum(1) + 0.1 * rng.standard_normal(n)
    return np.array([0.3, 0.1, -2.0]), x, y


def main(quick=False):
    import autograd
    import autograd.numpy as anp
    import autograd.scipy.linalg as asl
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    jax.config.update("jax_enable_x64", True)
    reps = 3 if quick else 7

    # 1. jit(grad) at n = 1000, CPU
    p, x, y = data(1000)
    f_g = funcad.jit(funcad.grad(nlml(fnp, fsl.solve_triangular)), backend="cpu")
    j_g = jax.jit(jax.grad(nlml(jnp, jsl.solve_triangular)))  # inputs on the CPU device
    xj, yj, pj = (jax.device_put(v, jax.devices("cpu")[0]) for v in (x, y, p))
    xf, yf, pf = (funcad.device_put(v, "cpu") for v in (x, y, p))
    np.testing.assert_allclose(np.asarray(f_g(pf, xf, yf)), np.asarray(j_g(pj, xj, yj)), rtol=1e-8)
    t_f, t_j = best_of([lambda: f_g(pf, xf, yf), lambda: j_g(pj, xj, yj)], repeat=reps,
                       number=None, min_time=0.3, sync=lambda r: np.asarray(r))
    print(f"jit(grad(nlml)), n=1000, CPU   funcad {t_f * 1e3:8.2f} ms   JAX {t_j * 1e3:8.2f} ms   "
          f"ratio {t_f / t_j:5.2f}x   (target <= 1.1x)")

    # 2. eager grad at n = 200
    p, x, y = data(200)
    e_f = funcad.grad(nlml(fnp, fsl.solve_triangular))
    e_a = autograd.grad(nlml(anp, asl.solve_triangular))
    np.testing.assert_allclose(e_f(p, x, y), e_a(p, x, y), rtol=1e-8)
    t_f, t_a = best_of([lambda: e_f(p, x, y), lambda: e_a(p, x, y)], repeat=reps, number=None,
                       min_time=0.3)
    print(f"eager grad(nlml), n=200         funcad {t_f * 1e3:8.2f} ms   autograd {t_a * 1e3:8.2f} ms   "
          f"ratio {t_f / t_a:5.2f}x   (target <= 1.0x)")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
