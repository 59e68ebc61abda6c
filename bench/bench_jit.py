"""jit benchmarks, side by side with JAX in one run (issue 4).

    .venv/bin/python bench/bench_jit.py

1. steady state: jit(grad(mlp_loss)), MLP 784-512-512-10, batch 128, float32;
   jit(hessian) of a 200-d Rosenbrock; jit(vmap(grad)) per-example logistic
   gradients over 1000x100, float32 (target: within 1.1x of JAX)
2. dispatch latency of a tiny jitted function, f32[4] -> x * 2 + 1, with a
   device-resident input and with a NumPy input (target: within 2x of JAX)
3. time to first result (trace + lower + compile + run) of the MLP gradient
   (target: within 1.5x of JAX)
4. cold start, a whole fresh process (target: within 1.2x of JAX)
Times are the best of several repeats; results are synchronised.
"""
from __future__ import annotations

import gc
import statistics
import time
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

from _models import logistic, logistic_data, mlp_data, mlp_loss as _mlp, rosenbrock as rosen
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

    # small compiled programs (issue 12): a Hessian and per-example gradients ---
    r = np.linspace(-1, 1, 200, dtype=np.float32)
    ours, theirs = funcad.jit(funcad.hessian(rosen(fnp))), jax.jit(jax.hessian(rosen(jnp)))
    dr, jr = funcad.device_put(r), jax.device_put(r)
    np.testing.assert_allclose(np.asarray(ours(dr)), np.asarray(theirs(jr)), rtol=1e-4, atol=1e-3)
    t_ours, t_theirs = best_pair(lambda: ours(dr).block_until_ready(),
                                 lambda: theirs(jr).block_until_ready(), number=50)
    rows.append(("jit(hessian) Rosenbrock 200-d f32", t_ours, t_theirs, 1.1))

    lw, lx, ly = logistic_data()
    ours = funcad.jit(funcad.vmap(funcad.grad(logistic(fnp)), in_axes=(None, 0, 0)))
    theirs = jax.jit(jax.vmap(jax.grad(logistic(jnp)), in_axes=(None, 0, 0)))
    dl, jl = [funcad.device_put(a) for a in (lw, lx, ly)], [jax.device_put(a) for a in (lw, lx, ly)]
    np.testing.assert_allclose(np.asarray(ours(*dl)), np.asarray(theirs(*jl)), rtol=1e-4, atol=1e-6)
    t_ours, t_theirs = best_pair(lambda: ours(*dl).block_until_ready(),
                                 lambda: theirs(*jl).block_until_ready(), number=50)
    rows.append(("jit(vmap(grad)) per-example logistic 1000x100", t_ours, t_theirs, 1.1))

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

    s32 = np.float32(3.0)
    t_ours, t_theirs = best_pair(lambda: tiny(s32), lambda: jtiny(s32), number=1000)
    rows.append(("dispatch, tiny fn of a NumPy f32 scalar", t_ours, t_theirs, 1.5))

    shapes = [(3,), (4, 4), (), (2, 3), (5,), (1,), (3, 3), (), (7,), (2, 2)]
    many = [np.ones(s, np.float32) for s in shapes]

    def ten(np_):
        return lambda *a: {"s": sum(np_.sum(v) for v in a), "first": a[0] * 2, "pair": (a[1], a[2] + 1)}
    f10, j10 = funcad.jit(ten(fnp)), jax.jit(ten(jnp))
    np.testing.assert_allclose(np.asarray(f10(*many)["s"]), np.asarray(j10(*many)["s"]))
    t_ours, t_theirs = best_pair(lambda: f10(*many), lambda: j10(*many), number=300)
    rows.append(("dispatch, 10 NumPy args, pytree out", t_ours, t_theirs, 1.5))
    dmany, jmany = [funcad.device_put(a) for a in many], [jax.device_put(a) for a in many]
    t_ours, t_theirs = best_pair(lambda: f10(*dmany), lambda: j10(*jmany), number=300)
    rows.append(("dispatch, 10 device args, pytree out", t_ours, t_theirs, 1.5))

    # 3. time to first result ------------------------------------------------
    def clear_ours():
        funcad.transforms.jit.clear_caches()

    t_ours = first_result(lambda: funcad.jit(funcad.grad(lambda *a: mlp_loss(*a))), (params, x, y),
                          lambda g: g[-1][0].block_until_ready(), clear_ours)
    t_theirs = first_result(lambda: jax.jit(jax.grad(lambda *a: jax_mlp_loss(*a))), (params, x, y),
                            lambda g: g[-1][0].block_until_ready(), jax.clear_caches)
    rows.append(("first result: trace+lower+compile mlp grad", t_ours, t_theirs, 1.5))

    # 4. cold start: a whole process, import to first jitted result ------------
    # (bench_coldstart.py has more runs and the MLP's cold start)
    from bench_coldstart import TINY, _env, side_by_side
    cold = side_by_side(TINY, 5, _env())
    rows.append(("cold start: python -c import + first jit call (median)",
                 statistics.median(cold["funcad"][0]), statistics.median(cold["jax"][0]), 1.2))

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
