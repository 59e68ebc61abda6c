"""CNN and likelihood speed (issue 16), side by side in one run.

Run: .venv/bin/python bench/bench_cnn.py [--quick] [--gpu]

1. `jit(grad)` of a small CNN loss: two 3x3 `conv_general_dilated` layers with 32
   channels (NHWC), relu, a dense layer and `log_softmax`, on a batch of 64 28x28
   images, float32; funcad against JAX (target <= 1.1x), on the CPU (and the GPU with
   --gpu where jaxlib's CUDA plugin is installed).
2. Eager `grad` of a 1-D Gaussian mixture negative log-likelihood with `logsumexp`
   and `norm.logpdf` on 10^5 points (bench_nn's workload), float64; funcad against
   HIPS autograd (target <= 1.0x).

Each figure is the best of several timed loops, interleaved between the libraries.
"""
from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])

from bench_ad import best_times  # noqa: E402
from bench_nn import K, N, mixture_nll  # noqa: E402
import funcad  # noqa: E402
import funcad.lax as flax  # noqa: E402
import funcad.nn as fnn  # noqa: E402
import funcad.numpy as fnp  # noqa: E402
import funcad.scipy.special as fsp  # noqa: E402
import funcad.scipy.stats as fst  # noqa: E402

BATCH, SIDE, CH, CLASSES = 64, 28, 32, 10
DN = ("NHWC", "HWIO", "NHWC")


def cnn_loss(np_, lax, nn):
    def loss(params, images, labels):
        k1, b1, k2, b2, w, b = params
        h = nn.relu(lax.conv_general_dilated(images, k1, (1, 1), "SAME", dimension_numbers=DN) + b1)
        h = nn.relu(lax.conv_general_dilated(h, k2, (2, 2), "SAME", dimension_numbers=DN) + b2)
        logits = np_.reshape(h, (h.shape[0], -1)) @ w + b
        return -np_.mean(np_.sum(nn.log_softmax(logits) * labels, axis=1))
    return loss


def cnn_inputs(rng):
    f32 = np.float32
    params = (rng.normal(0, 0.3, (3, 3, 1, CH)).astype(f32), np.zeros(CH, f32),
              rng.normal(0, 0.06, (3, 3, CH, CH)).astype(f32), np.zeros(CH, f32),
              rng.normal(0, 0.01, ((SIDE // 2) ** 2 * CH, CLASSES)).astype(f32), np.zeros(CLASSES, f32))
    images = rng.normal(size=(BATCH, SIDE, SIDE, 1)).astype(f32)
    labels = np.eye(CLASSES, dtype=f32)[rng.integers(0, CLASSES, BATCH)]
    return params, images, labels


def bench_cnn(reps, backend=None):
    import jax
    import jax.numpy as jnp
    rng = np.random.default_rng(0)
    params, images, labels = cnn_inputs(rng)
    device = jax.devices(backend or "cpu")[0]
    g_ours = funcad.jit(funcad.grad(cnn_loss(fnp, flax, fnn)), backend=backend)
    g_jax = jax.jit(jax.grad(cnn_loss(jnp, jax.lax, jax.nn)))  # runs where its inputs live
    # The same inputs for both: on the device beforehand.
    jargs = jax.device_put((params, images, labels), device)
    fargs = funcad.device_put((params, images, labels), backend)
    for ours, ref in zip(g_ours(*fargs), g_jax(*jargs)):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=2e-3, atol=2e-5)
    t_ours, t_jax = best_times([lambda: funcad.block_until_ready(g_ours(*fargs)),
                                lambda: jax.block_until_ready(g_jax(*jargs))], reps)
    return t_ours, t_jax


def bench_mixture(reps):
    import autograd
    import autograd.numpy as anp
    import autograd.scipy.special as asp
    import autograd.scipy.stats as ast
    rng = np.random.default_rng(0)
    data = np.concatenate([rng.normal(m, s, N // K) for m, s in zip([-4, -1, 0, 2, 5], [1, .5, .3, 1, 2])])
    params = (rng.normal(size=K), rng.normal(size=K), rng.normal(size=K) * 0.1)
    g_ours = funcad.grad(mixture_nll(fnp, fsp, fst, data))
    g_ag = autograd.grad(mixture_nll(anp, asp, ast, data))
    for ours, ref in zip(g_ours(params), g_ag(params)):
        np.testing.assert_allclose(ours, ref, rtol=1e-9)
    return best_times([lambda: g_ours(params), lambda: g_ag(params)], reps)


def main(quick=False, gpu=False):
    import jax
    jax.config.update("jax_enable_x64", True)
    reps = 3 if quick else 7
    print(f"{'benchmark':<52} {'funcad':>10} {'reference':>10} {'ratio':>7}  target")
    backends = ["cpu"] + (["gpu"] if gpu else [])
    for backend in backends:
        t_ours, t_jax = bench_cnn(reps, backend)
        name = f"jit(grad) CNN 2x conv3x3/{CH}ch, {BATCH}x{SIDE}x{SIDE}, f32, {backend}"
        print(f"{name:<52} {t_ours * 1e3:8.2f}ms {t_jax * 1e3:8.2f}ms {t_ours / t_jax:6.2f}x  <= 1.1x jax")
    t_ours, t_ag = bench_mixture(reps)
    name = f"eager grad mixture NLL, {K} comps, {N} pts, f64"
    print(f"{name:<52} {t_ours * 1e3:8.2f}ms {t_ag * 1e3:8.2f}ms {t_ours / t_ag:6.2f}x  <= 1.0x autograd")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv, gpu="--gpu" in sys.argv)
