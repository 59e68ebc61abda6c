"""GPU benchmarks of issue 12, side by side with JAX in one run.

    .venv/bin/python bench/bench_gpu.py        # prints a skip line without a CUDA GPU

1. jit(grad) MLP 784-512-512-10, batch 128, float32
2. jit(grad) MLP 784-4096-4096-10, batch 8192, float32, with achieved TFLOP/s
3. jit(hessian) Rosenbrock, 200-d, float32
4. jit(vmap(grad)) per-example logistic gradients, 1000x100, float32
5. first call of the small MLP gradient (trace + lower + compile + run)
Inputs are device-resident for both; results are synchronised each call.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

from _models import mlp_data, mlp_loss as _mlp
from _timing import best_of

import funcad
import funcad.numpy as fnp
from funcad.lowering import xla


def best_pair(f, g):
    """Best per-call times of f and g, measured in alternating rounds."""
    return tuple(best_of([f, g], repeat=10, number=10))


def mlp_grad_flops(sizes, batch):
    """Matmul FLOPs of one forward + backward pass (2mnk per product, three products per layer
    backward except the first layer's input gradient, which grad w.r.t. params skips)."""
    fwd = sum(2 * batch * m * n for m, n in zip(sizes[:-1], sizes[1:]))
    bwd = 2 * fwd - 2 * batch * sizes[0] * sizes[1]
    return fwd + bwd


def main():
    if not xla.gpu_available():
        print("bench_gpu: no CUDA GPU and PJRT plugin here; skipped")
        return
    import jax
    import jax.numpy as jnp
    gpu = jax.devices("gpu")[0]
    rows = []

    def last(g):
        return g[-1][0]

    for sizes, batch, label in [((784, 512, 512, 10), 128, "jit(grad) MLP 784-512-512-10 b128"),
                                ((784, 4096, 4096, 10), 8192, "jit(grad) MLP 784-4096-4096-10 b8192")]:
        params, x, y = mlp_data(sizes, batch)
        ours = funcad.jit(funcad.grad(_mlp(fnp)), backend="gpu")
        theirs = jax.jit(jax.grad(_mlp(jnp)))
        d = [funcad.device_put(a, "gpu") for a in (x, y)]
        dp = [(funcad.device_put(w, "gpu"), funcad.device_put(b, "gpu")) for w, b in params]
        j = jax.device_put((params, x, y), gpu)
        np.testing.assert_allclose(np.asarray(last(ours(dp, *d))), np.asarray(last(theirs(*j))),
                                   rtol=2e-2, atol=2e-4)
        a, b = best_pair(lambda: last(ours(dp, *d)).block_until_ready(),
                         lambda: last(theirs(*j)).block_until_ready())
        flops = mlp_grad_flops(sizes, batch)
        rows.append((label, a, b, f"{flops / a / 1e12:.1f} / {flops / b / 1e12:.1f} TFLOP/s"))

    rosen = lambda np_: lambda v: np_.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1 - v[:-1]) ** 2)
    v = np.linspace(-1, 1, 200, dtype=np.float32)
    ours, theirs = funcad.jit(funcad.hessian(rosen(fnp)), backend="gpu"), jax.jit(jax.hessian(rosen(jnp)))
    dv, jv = funcad.device_put(v, "gpu"), jax.device_put(v, gpu)
    a, b = best_pair(lambda: ours(dv).block_until_ready(), lambda: theirs(jv).block_until_ready())
    rows.append(("jit(hessian) Rosenbrock 200-d f32", a, b, ""))

    def logistic(np_):
        return lambda w, xi, yi: np_.log1p(np_.exp(-yi * (xi @ w)))
    rng = np.random.default_rng(0)
    w = rng.standard_normal(100).astype(np.float32)
    xs = rng.standard_normal((1000, 100)).astype(np.float32)
    ys = np.sign(rng.standard_normal(1000)).astype(np.float32)
    ours = funcad.jit(funcad.vmap(funcad.grad(logistic(fnp)), in_axes=(None, 0, 0)), backend="gpu")
    theirs = jax.jit(jax.vmap(jax.grad(logistic(jnp)), in_axes=(None, 0, 0)))
    dargs = [funcad.device_put(a, "gpu") for a in (w, xs, ys)]
    jargs = jax.device_put((w, xs, ys), gpu)
    a, b = best_pair(lambda: ours(*dargs).block_until_ready(), lambda: theirs(*jargs).block_until_ready())
    rows.append(("jit(vmap(grad)) logistic 1000x100 f32", a, b, ""))

    params, x, y = mlp_data()
    t = time.perf_counter()
    last(funcad.jit(funcad.grad(lambda *p: _mlp(fnp)(*p)), backend="gpu")(params, x, y)).block_until_ready()
    a = time.perf_counter() - t
    t = time.perf_counter()
    last(jax.jit(jax.grad(lambda *p: _mlp(jnp)(*p)))(params, x, y)).block_until_ready()
    b = time.perf_counter() - t
    rows.append(("first call, small MLP grad (in-process)", a, b, ""))

    print(f"{'workload':42s} {'funcad':>10s} {'jax':>10s} {'ratio':>6s}  note")
    for name, a, b, note in rows:
        unit, scale = ("ms", 1e3) if max(a, b) > 1e-3 else ("us", 1e6)
        print(f"{name:42s} {a * scale:7.2f} {unit} {b * scale:7.2f} {unit} {a / b:6.2f}  {note}")
    print(f"device: {gpu.device_kind}, jax {jax.__version__}")


if __name__ == "__main__":
    main()
