"""The funcad tour that `python -m funcad` prints: derivatives of any order, forward and
reverse mode, the programs funcad builds (jaxprs), batching with vmap, and compilation
with XLA (the numbers of a run on this machine)."""
from __future__ import annotations

import time

import numpy as np

from .. import numpy as fnp
from ..core.pytree import tree_leaves
from ..core.version import __version__
from ..transforms.api import grad, jvp, make_jaxpr, value_and_grad
from ..transforms.jacobians import hessian
from ..transforms.jit import jit
from ..transforms.passes import optimize
from ..transforms.vmap import vmap


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def derivative_table() -> None:
    _section("grad to any order: d^k/dx^k tanh(x)")
    fns = [fnp.tanh]
    for _ in range(5):
        fns.append(grad(fns[-1]))
    xs = [-1.0, 0.0, 0.5, 2.0]
    print("   x  " + "".join(f"{f'order {k}':>12}" for k in range(len(fns))))
    for x in xs:
        # + 0.0 turns the -0.0 of odd-order terms at x = 0 into 0.0
        print(f"{x:5.1f} " + "".join(f"{float(f(x)) + 0.0:12.6f}" for f in fns))


def modes() -> None:
    _section("forward and reverse mode on a pytree of parameters")
    rng = np.random.default_rng(0)
    params = {"W": rng.normal(size=(3, 2)), "b": np.zeros(2)}
    x = rng.normal(size=(4, 3))

    def loss(p, x):
        return fnp.mean(fnp.tanh(x @ p["W"] + p["b"]) ** 2)

    value, g = value_and_grad(loss)(params, x)
    print(f"loss = {float(value):.6f}")
    print(f"grad['W'] =\n{np.round(g['W'], 5)}")
    direction = {"W": np.ones((3, 2)), "b": np.ones(2)}
    _, slope = jvp(lambda p: loss(p, x), (params,), (direction,))
    dot = sum(float(np.sum(g[k] * direction[k])) for k in g)
    print(f"jvp along a direction = {float(slope):.6f}  (grad · direction = {dot:.6f})")


def programs() -> None:
    _section("the program funcad traces: make_jaxpr")

    def f(x):
        return fnp.sum(fnp.sin(x) * x)

    x = np.linspace(0.0, 1.0, 3)
    print("f(x) = sum(sin(x) * x)")
    print(make_jaxpr(f)(x))
    grad_jaxpr = make_jaxpr(grad(f))(x)
    print("\nits gradient program, grad(f): linearize, then transpose")
    print(grad_jaxpr)
    optimized = optimize(grad_jaxpr)
    print(f"\nafter funcad.optimize ({len(grad_jaxpr.jaxpr.eqns)} equations -> "
          f"{len(optimized.jaxpr.eqns)}): what jit compiles")
    print(optimized)


def batching() -> None:
    _section("vmap: per-example gradients and Hessians")
    rng = np.random.default_rng(1)
    w = rng.normal(size=3)
    xs, ys = rng.normal(size=(5, 3)), rng.normal(size=5)

    def loss(w, x, y):
        return (fnp.dot(w, x) - y) ** 2

    per_example = vmap(grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    print(f"per-example gradients, shape {per_example.shape}:\n{np.round(per_example, 4)}")
    rosen = lambda x: fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    print(f"Hessian of Rosenbrock at (1, 1, 1):\n{hessian(rosen)(np.ones(3))}")


def compiled() -> None:
    _section("jit: compile with XLA")
    rng = np.random.default_rng(2)
    sizes = [784, 512, 512, 10]
    # cast after scaling: a float32 array divided by a NumPy float64 scalar is float64 (NEP 50)
    params = [((rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32), np.zeros(n, np.float32))
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

    def chain(x):  # elementwise work, which XLA fuses into one loop
        y = fnp.sin(x) * fnp.cos(x) ** 2
        return fnp.sum(fnp.log1p(fnp.exp(y)) / (1 + x ** 2) + fnp.tanh(y) * x)

    print(f"{'gradient, float32':<32}{'eager (NumPy)':>14}{'jit (XLA)':>11}{'speed-up':>10}"
          f"{'1st jit call':>14}")
    xs = np.linspace(-3, 3, 10 ** 6, dtype=np.float32)
    errs = [_race("MLP 784-512-512-10, batch 128", loss, (params, x, y)),
            _race("elementwise chain, 10^6 values", chain, (xs,))]
    print(f"(best of 5 calls; the first jit call traces and compiles; jit and eager "
          f"agree to {max(errs):.0e} relative)")


def _race(title: str, f, args) -> float:
    """Time grad(f) eagerly and under jit, print a row; return their largest relative difference."""
    eager, fast = grad(f), jit(grad(f))
    leaves = tree_leaves
    t0 = time.perf_counter()
    np.asarray(leaves(fast(*args))[0])
    first = time.perf_counter() - t0

    def best(g, n=5):
        ts = []
        for _ in range(n):
            t = time.perf_counter()
            np.asarray(leaves(g(*args))[0])  # waits for the result
            ts.append(time.perf_counter() - t)
        return min(ts)

    te, tj = best(eager), best(fast)
    print(f"{title:<32}{te * 1e3:11.2f} ms{tj * 1e3:8.2f} ms{te / tj:9.1f}x{first * 1e3:11.0f} ms")
    pairs = zip(leaves(eager(*args)), leaves(fast(*args)))
    return max(float(np.max(np.abs(a - np.asarray(b))) / np.max(np.abs(a))) for a, b in pairs)


def main() -> None:
    print(f"funcad {__version__}: composable transformations of NumPy programs")
    derivative_table()
    modes()
    programs()
    batching()
    compiled()
    print("\nMore in notebooks/: quickstart, jaxprs, jit and XLA, vmap and Jacobians, training, "
          "control flow.")
