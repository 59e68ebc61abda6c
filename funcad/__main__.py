"""The funcad tour: `python -m funcad`.

Derivatives of any order, forward and reverse mode, the programs funcad
builds (jaxprs), batching with vmap, and compilation with XLA.
"""
from __future__ import annotations

import time

import numpy as np

import funcad
import funcad.numpy as fnp


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def derivative_table() -> None:
    _section("grad to any order: d^k/dx^k tanh(x)")
    fns = [fnp.tanh]
    for _ in range(5):
        fns.append(funcad.grad(fns[-1]))
    xs = [-1.0, 0.0, 0.5, 2.0]
    print("   x  " + "".join(f"{f'order {k}':>12}" for k in range(len(fns))))
    for x in xs:
        print(f"{x:5.1f} " + "".join(f"{float(f(x)):12.6f}" for f in fns))


def modes() -> None:
    _section("forward and reverse mode on a pytree of parameters")
    rng = np.random.default_rng(0)
    params = {"W": rng.normal(size=(3, 2)), "b": np.zeros(2)}
    x = rng.normal(size=(4, 3))

    def loss(p, x):
        return fnp.mean(fnp.tanh(x @ p["W"] + p["b"]) ** 2)

    value, g = funcad.value_and_grad(loss)(params, x)
    print(f"loss = {float(value):.6f}")
    print(f"grad['W'] =\n{np.round(g['W'], 5)}")
    direction = {"W": np.ones((3, 2)), "b": np.ones(2)}
    _, slope = funcad.jvp(lambda p: loss(p, x), (params,), (direction,))
    dot = sum(float(np.sum(g[k] * direction[k])) for k in g)
    print(f"jvp along a direction = {float(slope):.6f}  (grad · direction = {dot:.6f})")


def programs() -> None:
    _section("the program funcad traces: make_jaxpr")

    def f(x):
        return fnp.sum(fnp.sin(x) * x)

    x = np.linspace(0.0, 1.0, 3)
    print("f(x) = sum(sin(x) * x)")
    print(funcad.make_jaxpr(f)(x))
    print("\nits gradient program, grad(f):")
    print(funcad.make_jaxpr(funcad.grad(f))(x))
    optimize = getattr(funcad, "optimize", None)
    if optimize is not None:
        print("\nafter funcad.optimize:")
        print(optimize(funcad.make_jaxpr(funcad.grad(f))(x)))


def batching() -> None:
    _section("vmap: per-example gradients and Hessians")
    rng = np.random.default_rng(1)
    w = rng.normal(size=3)
    xs, ys = rng.normal(size=(5, 3)), rng.normal(size=5)

    def loss(w, x, y):
        return (fnp.dot(w, x) - y) ** 2

    per_example = funcad.vmap(funcad.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    print(f"per-example gradients, shape {per_example.shape}:\n{np.round(per_example, 4)}")
    rosen = lambda x: fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    print(f"Hessian of Rosenbrock at (1, 1, 1):\n{funcad.hessian(rosen)(np.ones(3))}")


def compiled() -> None:
    _section("jit: compile with XLA")
    rng = np.random.default_rng(2)
    sizes = [784, 512, 512, 10]
    params = [(rng.normal(size=(m, n)).astype(np.float32) / np.sqrt(m), np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.normal(size=(128, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    def loss(params, x, y):
        h = x
        for W, b in params[:-1]:
            h = fnp.tanh(h @ W + b)
        W, b = params[-1]
        logits = h @ W + b
        return -fnp.mean(fnp.sum(y * (logits - fnp.logsumexp(logits, axis=1, keepdims=True)), axis=1))

    eager = funcad.grad(loss)
    fast = funcad.jit(funcad.grad(loss))
    t0 = time.perf_counter()
    fast(params, x, y)
    first = time.perf_counter() - t0

    def best(f, n=5):
        ts = []
        for _ in range(n):
            t = time.perf_counter()
            g = f(params, x, y)
            np.asarray(g[0][0])
            ts.append(time.perf_counter() - t)
        return min(ts)

    te, tj = best(eager), best(fast)
    ge, gj = eager(params, x, y), fast(params, x, y)
    err = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in
              zip(funcad.tree_util.tree_leaves(ge), funcad.tree_util.tree_leaves(gj)))
    print("MLP 784-512-512-10, batch 128, float32: gradient of the loss")
    print(f"  eager (NumPy):  {te * 1e3:8.2f} ms")
    print(f"  jit (XLA):      {tj * 1e3:8.2f} ms   (first call, with compile: {first * 1e3:.0f} ms)")
    print(f"  speed-up {te / tj:.1f}x, max difference {err:.2e}")


def main() -> None:
    print(f"funcad {funcad.__version__}: composable transformations of NumPy programs")
    derivative_table()
    modes()
    programs()
    batching()
    if hasattr(funcad, "jit"):
        compiled()


if __name__ == "__main__":
    main()
