"""FFT benchmarks: funcad side by side with HIPS autograd and JAX in one run (issue 13).

    .venv/bin/python bench/bench_fft.py [--quick]

The workload is the gradient of a filtering loss on 2**16 float64 points,
loss(x) = sum(abs(ifft(fft(x) * filter))**2), with a complex128 filter:
1. eager `grad` on NumPy (target: no slower than autograd);
2. `jit(grad)` on the CPU (target: within 1.1x of JAX), and on a GPU when
   jaxlib's CUDA plugin finds one (same target).
Each figure is the best of several timed loops, interleaved between the
libraries; jitted results are synchronised.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

from _timing import best_of  # noqa: E402

import funcad  # noqa: E402
import funcad.numpy as fnp  # noqa: E402
from funcad.lowering import xla  # noqa: E402

N = 2 ** 16


def filter_loss(np_, filt):
    def loss(x):
        return np_.sum(np_.abs(np_.fft.ifft(np_.fft.fft(x) * filt)) ** 2)
    return loss


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N)
    filt = np.exp(-np.linspace(0.0, 8.0, N)) * np.exp(2j * np.pi * rng.random(N))
    return x, filt


def main(quick=False):
    import autograd
    import autograd.numpy as anp
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    reps = 5 if quick else 15
    x, filt = data()
    rows = []

    # 1. eager grad ------------------------------------------------------------
    g_ours = funcad.grad(filter_loss(fnp, filt))
    g_ag = autograd.grad(filter_loss(anp, filt))
    ref = g_ag(x)
    np.testing.assert_allclose(g_ours(x), ref, rtol=1e-10, atol=1e-12)
    t_ours, t_ag = best_of([lambda: g_ours(x), lambda: g_ag(x)], repeat=reps, number=None)
    rows.append(("eager grad, fft -> filter -> ifft -> |.|^2, 2^16", t_ours, t_ag, "autograd", "<= 1.0x"))

    # 2. jit(grad), CPU and GPU ----------------------------------------------
    backends = ["cpu"] + (["gpu"] if xla.gpu_available() else [])
    for backend in backends:
        ours = funcad.jit(funcad.grad(filter_loss(fnp, filt)), backend=backend)
        jdev = jax.devices(backend)[0]
        theirs = jax.jit(jax.grad(filter_loss(jnp, jax.device_put(filt, jdev))))
        x_ours, x_jax = funcad.device_put(x, backend), jax.device_put(x, jdev)
        np.testing.assert_allclose(np.asarray(ours(x_ours)), ref, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(np.asarray(theirs(x_jax)), ref, rtol=1e-9, atol=1e-11)
        t_ours, t_jax = best_of([lambda: ours(x_ours), lambda: theirs(x_jax)], repeat=reps,
                                number=None, sync=jax.block_until_ready)
        rows.append((f"jit(grad) on {backend}, same loss, 2^16", t_ours, t_jax, "jax", "<= 1.1x"))

    print(f"{'benchmark':<52} {'funcad':>10} {'other':>10}  {'ratio':>7}  target")
    for name, ours, other, who, target in rows:
        print(f"{name:<52} {ours * 1e3:8.3f}ms {other * 1e3:8.3f}ms  {ours / other:6.2f}x  "
              f"{target} {who}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
