"""jit benchmarks, side by side with JAX in one run (issue 4).

    .venv/bin/python bench/bench_jit.py

1. steady state: jit(grad(mlp_loss)), MLP 784-512-512-10, batch 128, float32
   (target: within 1.1x of JAX)
2. dispatch latency of a tiny jitted function, f32[4] -> x * 2 + 1, with a
   device-resident input and with a NumPy input (target: within 2x of JAX)
3. time to first result (trace + lower + compile + run) of the MLP gradient
   (target: within 1.5x of JAX)
Times are the best of several repeats; results are synchronised.
"""
from __future__ import annotations

import gc
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

from _models import mlp_data, mlp_loss as _mlp
from _timing import best_of

import funcad
import funcad.numpy as fnp
from funcad.lowering import xla


def best_pair(f, g, rounds=15, number=20):
    """Best per-call times of f and g, measured in alternating rounds."""
    return tuple(best_of([f, g], repeat=rounds, number=number))


def first_result(make, args, sync, clear, repeat=5):
    """Best time from a fresh jitted function to its synchronised first result."""
    fresh = {}

    def setup():
        clear()
        gc.collect()
        fresh["f"] = make()
    return best_of([lambda: fresh["f"](*args)], repeat=repeat, sync=sync, setup=setup, warmup=False)[0]


def main():
    import jax
    jax.config.update("jax_enable_x64", True)  # keep float64 available; the MLP is float32
    import jax.numpy as jnp

    params, x, y = mlp_data()
    mlp_loss, jax_mlp_loss = _mlp(fnp), _mlp(jnp)
    rows = []

    # 1. steady state --------------------------------------------------------
    ours = funcad.jit(funcad.grad(mlp_loss))
    theirs = jax.jit(jax.grad(jax_mlp_loss))
    d_params = [(funcad.device_put(w), funcad.device_put(b)) for w, b in params]
    d_x, d_y = funcad.device_put(x), funcad.device_put(y)
    j_params = jax.device_put(params)
    j_x, j_y = jax.device_put(x), jax.device_put(y)
    g_ours, g_theirs = ours(d_params, d_x, d_y), theirs(j_params, j_x, j_y)
    for (a, b), (c, d) in zip(g_ours, g_theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(c), rtol=2e-3, atol=2e-5)
        np.testing.assert_allclose(np.asarray(b), np.asarray(d), rtol=2e-3, atol=2e-5)
    t_ours, t_theirs = best_pair(lambda: ours(d_params, d_x, d_y)[-1][0].block_until_ready(),
                                 lambda: theirs(j_params, j_x, j_y)[-1][0].block_until_ready(), number=10)
    rows.append(("jit(grad(mlp)) step, f32 784-512-512-10 b128", t_ours, t_theirs, 1.1))

    # 2. dispatch ------------------------------------------------------------
    tiny = funcad.jit(lambda v: v * 2.0 + 1.0)
    jtiny = jax.jit(lambda v: v * 2.0 + 1.0)
    v = np.arange(4, dtype=np.float32)
    dv, jv = funcad.device_put(v), jax.device_put(v)
    np.testing.assert_allclose(np.asarray(tiny(dv)), np.asarray(jtiny(jv)))
    for label, a, b in [("device input", dv, jv), ("NumPy input", v, v)]:
        t_ours, t_theirs = best_pair(lambda: tiny(a), lambda: jtiny(b), number=1000)
        rows.append((f"dispatch, tiny f32[4] fn, {label} (async)", t_ours, t_theirs, 2.0))
    t_ours, t_theirs = best_pair(lambda: tiny(dv).block_until_ready(),
                                 lambda: jtiny(jv).block_until_ready(), number=1000)
    rows.append(("dispatch + block_until_ready, device input", t_ours, t_theirs, 2.0))

    # 3. time to first result ------------------------------------------------
    def clear_ours():
        funcad.transforms.jit.clear_caches()

    t_ours = first_result(lambda: funcad.jit(funcad.grad(lambda *a: mlp_loss(*a))), (params, x, y),
                          lambda g: g[-1][0].block_until_ready(), clear_ours)
    t_theirs = first_result(lambda: jax.jit(jax.grad(lambda *a: jax_mlp_loss(*a))), (params, x, y),
                            lambda g: g[-1][0].block_until_ready(), jax.clear_caches)
    rows.append(("first result: trace+lower+compile mlp grad", t_ours, t_theirs, 1.5))

    print(f"{'benchmark':48s} {'funcad':>11s} {'jax':>11s} {'ratio':>6s} {'target':>7s}")
    for name, a, b, target in rows:
        unit, scale = ("ms", 1e3) if max(a, b) > 1e-3 else ("us", 1e6)
        ratio = a / b
        flag = "ok" if ratio <= target else "SLOW"
        print(f"{name:48s} {a * scale:8.2f} {unit} {b * scale:8.2f} {unit} {ratio:6.2f} "
              f"{'<=' + str(target):>7s} {flag}")
    print(f"backend: {xla.default_backend()}, jax {jax.__version__}")


if __name__ == "__main__":
    main()
