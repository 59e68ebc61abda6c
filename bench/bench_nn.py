"""Likelihood speed: funcad.scipy side by side with HIPS autograd and JAX.

Run: .venv/bin/python bench/bench_nn.py [--quick]

Eager `grad` of the negative log-likelihood of a 1-D Gaussian mixture (5
components) on 10^5 points, written with `logsumexp` and `norm.logpdf`
(target: no slower than autograd). JAX runs the same code op by op (eager).
Each figure is the best of several timed loops, interleaved between the
libraries, all in one process.
"""
from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

from bench_ad import best_times  # noqa: E402
import funcad  # noqa: E402
import funcad.numpy as fnp  # noqa: E402
import funcad.scipy.special as fsp  # noqa: E402
import funcad.scipy.stats as fst  # noqa: E402

N, K = 100_000, 5


def mixture_nll(np_, special, stats, data):
    def nll(params):
        logits, mu, log_sigma = params
        log_w = logits - special.logsumexp(logits)
        lp = stats.norm.logpdf(data[:, None], mu, np_.exp(log_sigma)) + log_w
        return -np_.sum(special.logsumexp(lp, axis=1))
    return nll


def main(quick=False):
    import autograd
    import autograd.numpy as anp
    import autograd.scipy.special as asp
    import autograd.scipy.stats as ast
    import jax
    import jax.numpy as jnp
    import jax.scipy.special as jsp
    import jax.scipy.stats as jst
    jax.config.update("jax_enable_x64", True)
    reps = 3 if quick else 5
    rng = np.random.default_rng(0)
    data = np.concatenate([rng.normal(m, s, N // K) for m, s in zip([-4, -1, 0, 2, 5], [1, .5, .3, 1, 2])])
    params = (rng.normal(size=K), rng.normal(size=K), rng.normal(size=K) * 0.1)

    g_ours = funcad.grad(mixture_nll(fnp, fsp, fst, data))
    g_ag = autograd.grad(mixture_nll(anp, asp, ast, data))
    g_jax = jax.grad(mixture_nll(jnp, jsp, jst, data))
    for ours, ref in zip(g_ours(params), g_ag(params)):
        np.testing.assert_allclose(ours, ref, rtol=1e-9)
    t_ours, t_ag, t_jax = best_times([lambda: g_ours(params), lambda: g_ag(params),
                                      lambda: jax.block_until_ready(g_jax(params))], reps)
    name = f"eager grad mixture NLL, {K} comps, {N} pts, f64"
    print(f"{'benchmark':<48} {'funcad':>10} {'jax':>10} {'autograd':>10} {'/jax':>7} {'/autograd':>10}  target")
    print(f"{name:<48} {t_ours * 1e3:8.2f}ms {t_jax * 1e3:8.2f}ms {t_ag * 1e3:8.2f}ms "
          f"{t_ours / t_jax:6.2f}x {t_ours / t_ag:9.2f}x  <= 1.0x autograd")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
