"""Data-parallel training step on 8 simulated CPU devices: funcad beside JAX.

Run: .venv/bin/python bench/bench_sharding.py [--quick]

`jit(value_and_grad(loss))` of the 784-512-512-10 MLP at batch 1024, the
batch split over the devices (`P("data")`) and the parameters replicated,
with the same shardings in funcad and JAX (goal: funcad <= 1.1x JAX). Then
the same step over 1, 2, 4 and 8 devices: on a machine with few cores the
simulated devices share them, so this measures the partitioned program's
overhead over the single-device one, not a speed-up. Inputs live on the
devices beforehand; each figure is the best of interleaved timed loops.
"""
from __future__ import annotations

import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("FUNCAD_BACKEND", "cpu")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

import numpy as np  # noqa: E402

from _models import mlp_data, mlp_loss  # noqa: E402
from _timing import best_of  # noqa: E402
import funcad  # noqa: E402
import funcad.numpy as fnp  # noqa: E402
from funcad.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

BATCH = 1024


def funcad_step(n: int, params, x, y):
    mesh = Mesh(np.array(funcad.devices()[:n]), ("data",))
    rep, data = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    step = funcad.jit(funcad.value_and_grad(mlp_loss(fnp)), in_shardings=(rep, data, data),
                      out_shardings=rep)
    args = (funcad.device_put(params, rep), funcad.device_put(x, data), funcad.device_put(y, data))
    return lambda: step(*args)


def jax_step(n: int, params, x, y):
    js = jax.sharding
    mesh = js.Mesh(np.array(jax.devices()[:n]), ("data",))
    rep, data = js.NamedSharding(mesh, js.PartitionSpec()), js.NamedSharding(
        mesh, js.PartitionSpec("data"))
    step = jax.jit(jax.value_and_grad(mlp_loss(jnp)), in_shardings=(rep, data, data),
                   out_shardings=rep)
    args = (jax.device_put(params, rep), jax.device_put(x, data), jax.device_put(y, data))
    return lambda: step(*args)


def sync(out):
    jax.block_until_ready(out) if not isinstance(out[0], funcad.Array) else \
        funcad.block_until_ready(out)


def main(quick: bool = False) -> dict:
    repeat = 3 if quick else 10
    params, x, y = mlp_data(batch=BATCH)
    f8, j8 = funcad_step(8, params, x, y), jax_step(8, params, x, y)
    # same numbers first
    (lf, gf), (lj, gj) = f8(), j8()
    assert abs(float(lf) - float(lj)) <= 1e-5 * abs(float(lj)), (float(lf), float(lj))
    t_f, t_j = best_of([f8, j8], repeat=repeat, sync=sync)
    print(f"data-parallel jit(value_and_grad), MLP 784-512-512-10, batch {BATCH}, 8 CPU devices")
    print(f"  funcad {t_f * 1e3:8.2f} ms   jax {t_j * 1e3:8.2f} ms   ratio {t_f / t_j:.2f}x")
    rows = []
    print("strong scaling (same step over n simulated devices; per-step time and overhead "
          "over n=1)")
    print(f"  {'n':>2} {'funcad ms':>10} {'jax ms':>8} {'funcad +ms':>11} {'jax +ms':>8}")
    steps = {n: (funcad_step(n, params, x, y), jax_step(n, params, x, y)) for n in (1, 2, 4, 8)}
    times = {n: best_of(list(fs), repeat=repeat, sync=sync) for n, fs in steps.items()}
    for n, (tf, tj) in times.items():
        rows.append((n, tf, tj, tf - times[1][0], tj - times[1][1]))
        print(f"  {n:>2} {tf * 1e3:10.2f} {tj * 1e3:8.2f} {(tf - times[1][0]) * 1e3:11.2f} "
              f"{(tj - times[1][1]) * 1e3:8.2f}")
    return {"funcad": t_f, "jax": t_j, "scaling": rows}


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
