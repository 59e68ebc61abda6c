"""Differentiation speed: funcad side by side with JAX and HIPS autograd.

Run: .venv/bin/python bench/bench_ad.py [--quick]

1. tracing `make_jaxpr(grad(f))` for a 300-step elementwise chain
   (target: at most half of `jax.make_jaxpr(jax.grad(f))`);
2. eager `grad` of an MLP loss, 784-512-512-10, batch 128, float32, on NumPy
   (target: no slower than autograd);
3. eager 5th derivative of tanh at a scalar (target: no slower than autograd).

Each figure is the best of several timed loops, interleaved between the libraries,
all in one process.
"""
from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

from _models import mlp_data, mlp_loss  # noqa: E402
from _timing import best_of  # noqa: E402
import funcad  # noqa: E402
import funcad.numpy as fnp  # noqa: E402


def best_times(fns, repeats=5, min_time=0.2):
    """Seconds per call of each function: the best of `repeats` interleaved loops of about
    `min_time` seconds each."""
    return best_of(fns, repeat=repeats, number=None, min_time=min_time)


# ---------------------------------------------------------------- workloads ----

STEPS = 300


def chain(np_):
    def f(x):
        for i in range(STEPS):
            x = np_.sin(x) * 0.5 + x if i % 2 else np_.tanh(x) * x
        return np_.sum(x)
    return f


def nth(grad, f, n):
    for _ in range(n):
        f = grad(f)
    return f


# -------------------------------------------------------------------- main ----

def main(quick=False):
    import autograd
    import autograd.numpy as anp
    import jax
    import jax.numpy as jnp
    reps = 3 if quick else 5
    rows = []

    # 1. tracing make_jaxpr(grad(chain))
    x = np.linspace(-1.0, 1.0, 16)
    t_ours, t_jax = best_times([lambda: funcad.make_jaxpr(funcad.grad(chain(fnp)))(x),
                                lambda: jax.make_jaxpr(jax.grad(chain(jnp)))(x)], reps)
    n_eqns = len(funcad.make_jaxpr(funcad.grad(chain(fnp)))(x).eqns)
    rows.append((f"make_jaxpr(grad) 300-step chain ({n_eqns} eqns)", t_ours, t_jax, None, "<= 0.5x jax"))

    # 2. eager grad of the MLP loss
    params, xb, yb = mlp_data()
    g_ours = funcad.grad(mlp_loss(fnp))
    g_ag = autograd.grad(mlp_loss(anp))
    g_jax = jax.grad(mlp_loss(jnp))
    ref = g_ag(params, xb, yb)
    got = g_ours(params, xb, yb)
    for (gw, gb), (rw, rb) in zip(got, ref):
        assert gw.dtype == np.float32
        np.testing.assert_allclose(gw, rw, rtol=1e-3, atol=1e-5)
    t_ours, t_ag, t_jax = best_times([lambda: g_ours(params, xb, yb), lambda: g_ag(params, xb, yb),
                                      lambda: jax.block_until_ready(g_jax(params, xb, yb))], reps)
    rows.append(("eager grad MLP 784-512-512-10, b=128, f32", t_ours, t_jax, t_ag, "<= 1.0x autograd"))

    # 3. eager 5th derivative of tanh
    d5_ours = nth(funcad.grad, fnp.tanh, 5)
    d5_ag = nth(autograd.grad, anp.tanh, 5)
    d5_jax = nth(jax.grad, jnp.tanh, 5)
    assert abs(d5_ours(0.3) - d5_ag(0.3)) < 1e-9 * abs(d5_ag(0.3))
    t_ours, t_ag, t_jax = best_times([lambda: d5_ours(0.3), lambda: d5_ag(0.3),
                                      lambda: jax.block_until_ready(d5_jax(0.3))], reps)
    rows.append(("eager 5th derivative of tanh at a scalar", t_ours, t_jax, t_ag, "<= 1.0x autograd"))

    print(f"{'benchmark':<48} {'funcad':>10} {'jax':>10} {'autograd':>10} {'/jax':>7} {'/autograd':>10}  target")
    for name, ours, jx, ag, target in rows:
        fmt = lambda t: "-" if t is None else f"{t * 1e3:8.2f}ms"  # noqa: E731
        r_jax = f"{ours / jx:6.2f}x" if jx else "-"
        r_ag = f"{ours / ag:9.2f}x" if ag else "-"
        print(f"{name:<48} {fmt(ours):>10} {fmt(jx):>10} {fmt(ag):>10} {r_jax:>7} {r_ag:>10}  {target}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
