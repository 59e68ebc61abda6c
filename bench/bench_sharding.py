"""Sharded training steps on 8 simulated CPU devices: funcad beside JAX.

Run: .venv/bin/python bench/bench_sharding.py [--quick]

One SGD step, `jit` of value_and_grad of the 784-512-512-10 MLP's loss and the
parameter update, batch 1024, with the same shardings in funcad and JAX (both
partitioned by Shardy, JAX 0.12's default and funcad's; goal: funcad <= 1.1x JAX):

1. data-parallel: mesh (8,) "data", the batch split over it, parameters replicated;
2. 2-D: mesh (4, 2) ("data", "model"), the batch split over "data", the first
   layer's columns and the second layer's rows over "model" (Megatron's pairing),
   the last layer replicated.

Each on a mesh of Auto axes (XLA's partitioner places the intermediates) and of
Explicit axes (JAX 0.12's default: shardings in the types; the 2-D step's
row-parallel matmul names its result's sharding with `out_sharding=`, as JAX's
explicit-sharding tutorial writes it).

Then the data-parallel step over 1, 2, 4 and 8 devices: on a machine with few
cores the simulated devices share them, so this measures the partitioned
program's overhead over the single-device one, not a speed-up. Inputs live on
the devices beforehand; each figure is the best of interleaved timed loops.
"""
from __future__ import annotations

import os
import re
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
import funcad.sharding  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

BATCH = 1024
LR = 0.1
DATA = {"mesh": (("data",), (8,)), "params": [((), ())] * 3, "batch": ("data",),
        "out": [None, None, None]}
TWO_D = {"mesh": (("data", "model"), (4, 2)),
         "params": [((None, "model"), ("model",)), (("model", None), ()), ((), ())],
         "batch": ("data",),
         # on Explicit axes the row-parallel layer contracts over "model" on both sides: its
         # result's sharding is named (the partial sums all-reduced over "model")
         "out": [None, ("data", None), None]}

LIBS = {"funcad": (funcad, fnp, funcad.sharding), "jax": (jax, jnp, jax.sharding)}


def typed_mlp_loss(np_, outs):
    """mlp_loss with each layer's matmul given `out_sharding=outs[i]` (None: its rule's)."""
    def loss(params, x, y):
        h = x
        for (w, b), out in zip(params[:-1], outs):
            h = np_.tanh(np_.matmul(h, w, out_sharding=out) + b)
        w, b = params[-1]
        logits = np_.matmul(h, w, out_sharding=outs[-1]) + b
        m = np_.max(logits, axis=1, keepdims=True)
        lse = np_.log(np_.sum(np_.exp(logits - m), axis=1, keepdims=True)) + m
        return -np_.mean(np_.sum((logits - lse) * y, axis=1))
    return loss


def make_step(name: str, layout: dict, params, x, y, n: int | None = None, explicit: bool = False):
    """A no-argument callable running one training step of library `name` on its
    arguments, placed beforehand as `layout` says (over the first `n` devices, on a
    mesh of Explicit axes if `explicit`, else Auto); its `.compiled_text()` is XLA's
    partitioned program."""
    lib, np_, sh = LIBS[name]
    names, shape = layout["mesh"]
    if n is not None:
        shape = (n,)
    devices = np.array(lib.devices()[:int(np.prod(shape))]).reshape(shape)
    kind = sh.AxisType.Explicit if explicit else sh.AxisType.Auto
    mesh = sh.Mesh(devices, names, axis_types=(kind,) * len(names))
    ns = lambda spec: sh.NamedSharding(mesh, sh.PartitionSpec(*spec))  # noqa: E731
    p_sh = [(ns(w), ns(b)) for w, b in layout["params"]]
    batch = ns(layout["batch"])
    loss = typed_mlp_loss(np_, [None if o is None else ns(o) for o in layout["out"]]) if explicit \
        else mlp_loss(np_)

    def step(p, x, y):
        value, grads = lib.value_and_grad(loss)(p, x, y)
        return value, [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(p, grads)]
    jitted = lib.jit(step, in_shardings=(p_sh, batch, batch), out_shardings=(ns(()), p_sh))
    args = (lib.device_put([tuple(layer) for layer in params], p_sh), lib.device_put(x, batch),
            lib.device_put(y, batch))
    run = lambda: jitted(*args)  # noqa: E731
    run.compiled_text = lambda: jitted.lower(*args).compile().as_text()
    return run


def collectives(text: str) -> dict:
    """How many of each collective a partitioned program holds."""
    found = re.findall(r"\b(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)"
                       r"(?:-start)?\(", text)
    return {k: found.count(k) for k in sorted(set(found))}


def sync(out):
    jax.block_until_ready(out) if not isinstance(out[0], funcad.Array) else \
        funcad.block_until_ready(out)


def same_numbers(f, j):
    (lf, pf), (lj, pj) = f(), j()
    assert abs(float(lf) - float(lj)) <= 1e-5 * abs(float(lj)), (float(lf), float(lj))
    for a, b in zip(jax.tree_util.tree_leaves(pf), jax.tree_util.tree_leaves(pj)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6)


def main(quick: bool = False) -> dict:
    repeat = 3 if quick else 10
    params, x, y = mlp_data(batch=BATCH)
    results = {}
    print(f"SGD step (value_and_grad + update), MLP 784-512-512-10, batch {BATCH}, "
          "8 CPU devices, Shardy")
    steps = [(f"{what} {kind}", layout, kind == "Explicit") for kind in ("Auto", "Explicit")
             for what, layout in (("data-parallel (8,)", DATA), ("2-D (4, 2)", TWO_D))]
    for label, layout, explicit in steps:
        f, j = (make_step(lib, layout, params, x, y, explicit=explicit) for lib in ("funcad", "jax"))
        same_numbers(f, j)
        t_f, t_j = best_of([f, j], repeat=repeat, sync=sync)
        results[label] = (t_f, t_j)
        c_f, c_j = collectives(f.compiled_text()), collectives(j.compiled_text())
        print(f"  {label:<28} funcad {t_f * 1e3:8.2f} ms   jax {t_j * 1e3:8.2f} ms   "
              f"ratio {t_f / t_j:.2f}x   collectives {c_f}" + ("" if c_f == c_j else f" (jax {c_j})"))
    print("strong scaling of the data-parallel step (per-step time and overhead over n=1)")
    print(f"  {'n':>2} {'funcad ms':>10} {'jax ms':>8} {'funcad +ms':>11} {'jax +ms':>8}")
    counts = (1, 8) if quick else (1, 2, 4, 8)
    steps = {n: (make_step("funcad", DATA, params, x, y, n), make_step("jax", DATA, params, x, y, n))
             for n in counts}
    times = {n: best_of(list(fs), repeat=repeat, sync=sync) for n, fs in steps.items()}
    rows = []
    for n, (tf, tj) in times.items():
        rows.append((n, tf, tj, tf - times[1][0], tj - times[1][1]))
        print(f"  {n:>2} {tf * 1e3:10.2f} {tj * 1e3:8.2f} {(tf - times[1][0]) * 1e3:11.2f} "
              f"{(tj - times[1][1]) * 1e3:8.2f}")
    results["scaling"] = rows
    return results


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
