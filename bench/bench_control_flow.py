"""Control-flow benchmarks, side by side with JAX (issue 6).

    .venv/bin/python bench/bench_control_flow.py

1. Memory: bytes of residuals stored by the linearized scan of a 3-layer
   tanh RNN cell (hidden 64, batch 16, 200 steps), with and without
   funcad.checkpoint on the scan body. These are the constants of the linear
   jaxpr that reverse mode keeps between the forward and backward pass.
2. Time: jit(grad(loss)) of a scan RNN (hidden 64, batch 16, 100 steps),
   funcad against jax.jit(jax.grad), plain and checkpointed, float32 and
   float64. Steady state (best of repeats, results synchronised) and the
   first call (trace + compile).
"""
from __future__ import annotations


import numpy as np

from _timing import best_of

import funcad
import funcad.numpy as fnp
from funcad import lax

H, B, LAYERS = 64, 16, 3


def make_loss(np_, scan, checkpoint, ck: bool):
    def cell(W, h, x):
        for _ in range(LAYERS):
            h = np_.tanh(h @ W + x)
        return h

    def loss(W, xs):
        def step(h, x):
            h = cell(W, h, x)
            return h, np_.sum(h * h)
        body = checkpoint(step) if ck else step
        h, ys = scan(body, np_.zeros((B, H), xs.dtype), xs)
        return np_.sum(h) + np_.sum(ys)
    return loss


def best(f, *args, repeat=15, number=3, sync=np.asarray):
    return best_of([lambda: f(*args)], repeat=repeat, number=number, sync=sync, warmup=False)[0]


def first_call(f, *args, sync=np.asarray):
    return best_of([lambda: f(*args)], repeat=1, number=1, sync=sync, warmup=False)[0]


def residual_bytes(f, *args) -> tuple[int, int]:
    _, f_jvp = funcad.linearize(f, *args)
    consts = f_jvp.jaxpr.consts
    inputs = {id(a) for a in args}  # residuals that are the arguments themselves cost nothing extra
    return (sum(np.asarray(c).nbytes for c in consts),
            sum(np.asarray(c).nbytes for c in consts if id(c) not in inputs))


def main():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    print(f"# funcad control flow: {LAYERS}-layer tanh RNN cell, hidden {H}, batch {B}\n")

    # -- 1. residual memory ---------------------------------------------------
    T = 200
    W = (rng.normal(size=(H, H)) / np.sqrt(H)).astype(np.float32)
    xs = rng.normal(size=(T, B, H)).astype(np.float32)
    print(f"## Residual bytes of the linearized scan ({T} steps, float32)\n")
    print("| scan body | residual bytes | of which new (not W or xs) | per step |")
    print("|---|---:|---:|---:|")
    rows = {}
    for ck in (False, True):
        f = make_loss(fnp, lax.scan, funcad.checkpoint, ck)
        total, new = residual_bytes(f, W, xs)
        rows[ck] = new
        print(f"| {'checkpoint(step)' if ck else 'step'} | {total:,} | {new:,} | {new / T:,.0f} |")
    print(f"\ncheckpoint stores {rows[False] / rows[True]:.1f}x less "
          f"({rows[False] / 2**20:.2f} MiB -> {rows[True] / 2**20:.2f} MiB): the carry per step "
          "instead of every layer's activations.\n")

    # -- 2. time of jit(grad) against JAX ---------------------------------------
    T = 100
    print(f"## jit(grad(loss)) of the scan RNN, {T} steps, CPU\n")
    print("| dtype | body | funcad first call (s) | JAX first call (s) | funcad (ms) | JAX (ms) | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for dtype in (np.float32, np.float64):
        W = (rng.normal(size=(H, H)) / np.sqrt(H)).astype(dtype)
        xs = rng.normal(size=(T, B, H)).astype(dtype)
        for ck in (False, True):
            f = funcad.jit(funcad.grad(make_loss(fnp, lax.scan, funcad.checkpoint, ck)))
            jf = jax.jit(jax.grad(make_loss(jnp, jax.lax.scan, jax.checkpoint, ck)))
            c_f = first_call(f, W, xs)
            c_j = first_call(jf, W, xs, sync=jax.block_until_ready)
            np.testing.assert_allclose(np.asarray(f(W, xs)), np.asarray(jf(W, xs)),
                                       rtol=1e-3 if dtype == np.float32 else 1e-9, atol=1e-4)
            t_f = best(f, W, xs)
            t_j = best(jf, W, xs, sync=jax.block_until_ready)
            print(f"| {np.dtype(dtype).name} | {'checkpoint' if ck else 'plain'} | {c_f:.2f} | {c_j:.2f} | "
                  f"{t_f * 1e3:.2f} | {t_j * 1e3:.2f} | {t_f / t_j:.2f} |")


if __name__ == "__main__":
    main()
