"""Write the example notebooks from the cell lists below and execute them.

    .venv/bin/python notebooks/_build.py              # all notebooks
    .venv/bin/python notebooks/_build.py 03 05        # those whose name starts so

The notebooks are generated so that they stay reviewable as plain Python and
are stored with their outputs (text, small PNG plots) so that they read well
on a code host. tests/test_notebooks.py runs each stored notebook again in a
fresh kernel. Edit the cells here, never the .ipynb files.
"""
from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent


def md(text: str) -> tuple[str, str]:
    return ("markdown", textwrap.dedent(text).strip())


def code(text: str) -> tuple[str, str]:
    return ("code", textwrap.dedent(text).strip())


SETUP = code("""
    import numpy as np
    import funcad
    import funcad.numpy as fnp

    np.set_printoptions(precision=4, suppress=True)
""")

PLOT_SETUP = code("""
    import numpy as np
    import matplotlib.pyplot as plt
    import funcad
    import funcad.numpy as fnp

    %matplotlib inline
    np.set_printoptions(precision=4, suppress=True)
    plt.rcParams.update({"figure.figsize": (6.4, 3.4), "figure.dpi": 72})
""")

# --------------------------------------------------------------- quickstart ----

QUICKSTART = [
    md("""
    # funcad quickstart

    funcad gives NumPy programs JAX-style function transformations: `grad`,
    `jvp`, `vjp`, `vmap`, `jit`, ... Write your function with `funcad.numpy`
    (imported as `fnp`) the way you would with NumPy; each transformation takes
    a function and returns a new function. This notebook covers `grad`, `jvp`,
    `vjp`, `value_and_grad`, pytrees of parameters and derivatives of any order.
    """),
    PLOT_SETUP,
    md("""
    ## grad

    Called on plain NumPy values, a `funcad.numpy` function simply *is* NumPy:
    the result is an `ndarray` and nothing is recorded. `funcad.grad(f)` is a
    new function computing the derivative of the scalar function `f`.
    """),
    code("""
    def f(x):
        return fnp.sin(x) * x ** 2

    df = funcad.grad(f)
    x = 1.3
    print("f(x)  =", f(x))
    print("f'(x) =", df(x))
    print("by hand, cos(x) x² + 2x sin(x) =", np.cos(x) * x ** 2 + 2 * x * np.sin(x))
    print(type(f(np.ones(3))))
    """),
    md("""
    For a function of an array, the gradient has the shape of the input:
    """),
    code("""
    def loss(w):
        return fnp.sum(fnp.tanh(w) ** 2)

    w = np.array([-1.0, 0.0, 0.5, 2.0])
    g = funcad.grad(loss)(w)
    print(g)
    assert np.allclose(g, 2 * np.tanh(w) / np.cosh(w) ** 2)
    """),
    md("""
    ## jvp: forward mode

    `funcad.jvp(f, primals, tangents)` evaluates `f` and its directional
    derivative, the Jacobian-vector product **J v**, in one forward pass. It
    costs a small multiple of one evaluation of `f`, whatever the sizes.
    """),
    code("""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 4))

    def g(x):                          # R^4 -> R^3
        return fnp.tanh(A @ x)

    x = rng.normal(size=4)
    v = np.array([1.0, 0.0, 0.0, 0.0])
    y, Jv = funcad.jvp(g, (x,), (v,))
    J = (1 - y ** 2)[:, None] * A      # the Jacobian, by hand
    print("g(x) =", y)
    print("J v  =", Jv, "= the first column of J:", J[:, 0])
    assert np.allclose(Jv, J[:, 0])
    """),
    md("""
    ## vjp: reverse mode

    `funcad.vjp(f, x)` returns `f(x)` and a *pullback*: given a cotangent
    **u** for the output, it returns **uᵀJ**. For a scalar loss one pullback
    gives the whole gradient, again at a small multiple of the cost of `f`;
    `grad` is `vjp` seeded with 1.0. The two modes agree:
    ⟨u, J v⟩ = ⟨uᵀJ, v⟩ for every u and v.
    """),
    code("""
    y, pullback = funcad.vjp(g, x)
    (uJ,) = pullback(np.array([0.0, 1.0, 0.0]))
    print("uᵀJ =", uJ, "= the second row of J:", J[1])
    assert np.allclose(uJ, J[1])

    u, v = rng.normal(size=3), rng.normal(size=4)
    lhs = np.dot(u, funcad.jvp(g, (x,), (v,))[1])
    rhs = np.dot(pullback(u)[0], v)
    print(f"<u, J v> = {lhs:.12f}\\n<uᵀJ, v> = {rhs:.12f}")
    assert np.isclose(lhs, rhs)
    """),
    md("""
    ## value_and_grad and pytrees

    Parameters rarely come as a single array. Every funcad transformation
    accepts *pytrees*, nested tuples, lists and dicts of arrays, and the
    gradient comes back with the same structure. `value_and_grad` also returns
    the loss, which the forward pass computed anyway. `argnums` picks the
    argument to differentiate (the first by default).
    """),
    code("""
    params = {"W": rng.normal(size=(3, 2)) * 0.5, "b": np.zeros(2), "scale": np.array(1.0)}

    def predict(params, x):
        return params["scale"] * fnp.tanh(x @ params["W"] + params["b"])

    def mse(params, x, y):
        return fnp.mean((predict(params, x) - y) ** 2)

    xb, yb = rng.normal(size=(16, 3)), rng.normal(size=(16, 2))
    value, grads = funcad.value_and_grad(mse)(params, xb, yb)
    print("loss:", value)
    for name, g in grads.items():
        print(f"d loss / d {name}: shape {g.shape}\\n{g}")
    """),
    md("""
    Check one entry against a central finite difference, then take a step of
    gradient descent with `funcad.tree_util.tree_map`, which maps a function
    over the leaves of several trees of the same structure:
    """),
    code("""
    dW = np.zeros((3, 2))
    dW[0, 0] = eps = 1e-6
    fd = (mse({**params, "W": params["W"] + dW}, xb, yb)
          - mse({**params, "W": params["W"] - dW}, xb, yb)) / (2 * eps)
    print(f"finite difference {fd:.8f}, grad {grads['W'][0, 0]:.8f}")
    assert np.isclose(fd, grads["W"][0, 0], atol=1e-7)

    step = funcad.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    print(f"loss {mse(params, xb, yb):.6f} -> {mse(step, xb, yb):.6f} after one step")
    assert mse(step, xb, yb) < mse(params, xb, yb)
    """),
    md("""
    ## Derivatives of any order

    A transformed function is an ordinary Python function, so transformations
    nest. Here are tanh and its first six derivatives, each the `grad` of the
    previous one. `grad` wants a scalar function, so `vmap` maps each over the
    grid of 200 points (the vmap notebook says more).
    """),
    code("""
    fs = [fnp.tanh]
    for _ in range(6):
        fs.append(funcad.grad(fs[-1]))

    xs = np.linspace(-3.5, 3.5, 200)
    fig, axes = plt.subplots(1, 7, figsize=(10, 2), sharex=True)
    for k, (fk, ax) in enumerate(zip(fs, axes)):
        ax.plot(xs, funcad.vmap(fk)(xs), color=f"C{k}")
        ax.set_title("tanh" if k == 0 else f"order {k}", fontsize=10)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    plt.tight_layout()
    plt.show()
    """),
    md("""
    At 0 the Taylor series tanh(x) = x − x³/3 + 2x⁵/15 − … gives the values
    0, 1, 0, −2, 0, 16, 0:
    """),
    code("""
    at0 = [float(fk(0.0)) + 0.0 for fk in fs]      # + 0.0 turns -0.0 into 0.0
    print(at0)
    assert np.allclose(at0, [0, 1, 0, -2, 0, 16, 0])
    """),
    md("""
    Next: `02_jaxprs` shows the programs these transformations build,
    `03_jit_and_xla` compiles them.
    """),
]

# ------------------------------------------------------------------- jaxprs ----

JAXPRS = [
    md("""
    # jaxprs: the programs behind the transformations

    funcad does not differentiate by tracking numbers. It *traces* a Python
    function into a small typed program, a **jaxpr**, and each transformation
    rewrites that program into another one. `funcad.make_jaxpr(f)(*args)`
    shows the program `f` runs for arguments of those shapes and dtypes.
    """),
    SETUP,
    code("""
    def f(x):
        y = fnp.sin(x) * x
        return fnp.sum(y)

    x = np.linspace(0.0, 1.0, 3)
    print(funcad.make_jaxpr(f)(x))
    """),
    md("""
    Read it as `{ lambda constants ; inputs. let equations in (outputs) }`.
    Each equation applies one *primitive* (`sin`, `mul`, `reduce_sum`, ...) to
    typed variables: `f64[3]` is a float64 array of shape (3,). Python itself
    disappears: helper functions are inlined and a Python loop on concrete
    values is unrolled.
    """),
    code("""
    def g(x):
        for _ in range(3):
            x = fnp.cos(x)
        return x

    print(funcad.make_jaxpr(g)(1.0))
    """),
    md("""
    ## jvp: a tangent equation beside each primal equation

    Forward mode walks the program once and, for each equation, emits the
    primal equation and the equations of its derivative: `sin a` brings
    `cos a` and a `mul` by the tangent, the product rule brings two `mul`s
    and an `add`.
    """),
    code("""
    print(funcad.make_jaxpr(lambda x, t: funcad.jvp(f, (x,), (t,)))(x, np.ones(3)))
    """),
    md("""
    ## grad = linearize, then transpose

    Reverse mode takes two steps. **Linearize**: run the jvp while separating
    the primal equations, computed now, from the tangent equations, which are
    linear in the tangent and are staged into a program of their own. The
    primal values they need (here `cos x`, `x` and `sin x`) become its
    constants, the *residuals*:
    """),
    code("""
    y, f_lin = funcad.linearize(f, x)
    print(funcad.make_jaxpr(f_lin)(np.ones(3)))
    """),
    md("""
    **Transpose**: run that linear program backwards, each equation replaced
    by its transpose (`reduce_sum` becomes a broadcast, a multiplication by a
    constant stays a multiplication). Seeded with 1.0 that gives the gradient
    program, which makes a single forward sweep followed by a single backward
    sweep:
    """),
    code("""
    grad_jaxpr = funcad.make_jaxpr(funcad.grad(f))(x)
    print(grad_jaxpr)
    """),
    md("""
    ## vmap: the batch axis goes through every equation

    Batching rewrites each equation to carry an extra axis: elementwise
    primitives are unchanged, and the reduction now sums over axis 1.
    """),
    code("""
    print(funcad.make_jaxpr(funcad.vmap(f))(np.ones((5, 3))))
    """),
    md("""
    ## What the optimiser removes

    Transformations are written to be simple, not to emit minimal programs.
    The gradient program above still computes the primal output `e` that
    nobody reads, builds an array of ones and multiplies by it.
    `funcad.optimize` rewrites a jaxpr into an equivalent smaller one with
    exact passes: inlining of trivial calls, constant folding, algebraic
    simplification (`x * 1`, `neg(neg x)`, ...), common-subexpression
    elimination and dead-code elimination. `jit` runs it before compiling.
    """),
    code("""
    opt = funcad.optimize(grad_jaxpr)
    print(opt)

    before = funcad.eval_jaxpr(grad_jaxpr.jaxpr, grad_jaxpr.consts, x)[0]
    after = funcad.eval_jaxpr(opt.jaxpr, opt.consts, x)[0]
    print("same values:", before, after)
    assert np.array_equal(before, after)
    """),
    md("""
    Higher derivatives gain the most, because nested transformations repeat
    work that common-subexpression elimination merges. Equation counts:
    """),
    code("""
    def count(closed):
        return len(closed.jaxpr.eqns)

    programs = {
        "f": funcad.make_jaxpr(f)(x),
        "jvp(f)": funcad.make_jaxpr(lambda x, t: funcad.jvp(f, (x,), (t,)))(x, x),
        "grad(f)": grad_jaxpr,
        "vmap(grad(f))": funcad.make_jaxpr(funcad.vmap(funcad.grad(f)))(np.ones((5, 3))),
        "hessian(f)": funcad.make_jaxpr(funcad.hessian(f))(x),
        "grad(grad(grad(tanh)))": funcad.make_jaxpr(funcad.grad(funcad.grad(funcad.grad(fnp.tanh))))(0.5),
    }
    print(f"{'program':<24}{'equations':>10}{'optimised':>11}")
    for name, p in programs.items():
        print(f"{name:<24}{count(p):>10}{count(funcad.optimize(p)):>11}")
    """),
    md("""
    ## Read it as NumPy: `funcad.to_python`

    `funcad.to_python` turns a jaxpr into plain NumPy source: handy to read a
    gradient, or to ship it without funcad. The source runs as it is:
    """),
    code("""
    src = funcad.to_python(opt, name="grad_f")
    print(src)

    namespace = {}
    exec(src, namespace)
    print(namespace["grad_f"](x), "==", funcad.grad(f)(x))
    assert np.allclose(namespace["grad_f"](x), funcad.grad(f)(x))
    """),
    md("""
    ## Draw it: `funcad.viz.graph`

    `funcad.viz.graph` returns a Graphviz diagram (inputs green, outputs red).
    It displays inline as SVG; here it is rendered to PNG, which every
    notebook viewer shows. It needs Graphviz's `dot` program.
    """),
    code("""
    import shutil
    from IPython.display import Image

    diagram = funcad.viz.graph(opt, name="grad_f")
    if shutil.which("dot"):
        display(Image(diagram.pipe(format="png")))
    else:
        print("Graphviz's `dot` is not installed; the DOT source:\\n" + diagram.source)
    """),
    md("""
    ## In a notebook, a jaxpr displays as HTML

    A jaxpr at the end of a cell displays with its types greyed and its
    primitives in bold:
    """),
    code("""
    opt
    """),
]

# -------------------------------------------------------------- jit and XLA ----

JIT = [
    md("""
    # jit: compiling with XLA

    `funcad.jit(f)` traces `f` once per argument signature (shapes, dtypes,
    static arguments), optimises the jaxpr, lowers it to **StableHLO** and
    compiles it with XLA through jaxlib's PJRT client. The executable is
    cached, results stay on the device between jitted calls, and `jit`
    composes with every other transformation.
    """),
    code("""
    import os
    import time
    import numpy as np
    import matplotlib.pyplot as plt
    import funcad
    import funcad.numpy as fnp
    from funcad.lowering import xla

    %matplotlib inline
    np.set_printoptions(precision=4, suppress=True)
    plt.rcParams.update({"figure.figsize": (6.4, 2.6), "figure.dpi": 72})
    print("default backend:", xla.default_backend(), "| CPU cores:", os.cpu_count())
    """),
    md("""
    ## The StableHLO text

    `jit(f).lower(*args)` traces and lowers without compiling;
    `.as_text()` is the StableHLO module XLA receives. This is the gradient
    of `sum(tanh(x)²)` in float32, after the optimiser:
    """),
    code("""
    def f(x):
        return fnp.sum(fnp.tanh(x) ** 2)

    x = np.linspace(-1, 1, 4, dtype=np.float32)
    print(funcad.jit(funcad.grad(f)).lower(x).as_text())
    """),
    md("""
    The compiled function gives the same numbers. It returns a
    `funcad.Array`, which stays on the device until NumPy asks for it
    (`np.asarray`, printing, `float`):
    """),
    code("""
    fast = funcad.jit(funcad.grad(f))
    r = fast(x)
    print(type(r).__name__, r.dtype, r)
    print("eager:", funcad.grad(f)(x))
    np.testing.assert_allclose(np.asarray(r), funcad.grad(f)(x), rtol=1e-6)
    """),
    md("""
    ## Trace once, run many times

    The Python function runs only while tracing, so a `print` inside it shows
    when that happens: once for each new argument signature.
    """),
    code("""
    def noisy(x):
        print("  tracing for", x.shape, x.dtype)
        return fnp.sin(x) * 2

    g = funcad.jit(noisy)
    for arg in [np.ones(3), np.zeros(3), np.ones(4), np.ones(3, np.float32)]:
        print(f"call with {arg.dtype}{list(arg.shape)}")
        g(arg)
    """),
    md("""
    ## Speed: eager NumPy, funcad.jit and JAX

    Two gradients in float32, each written once against a NumPy-like
    namespace `xp` and run three ways: eagerly by funcad on NumPy, compiled by
    `funcad.jit`, and compiled by `jax.jit(jax.grad)` for reference (JAX is
    used here only for comparison; funcad does its own tracing,
    differentiation and lowering).

    * **MLP**: the cross-entropy loss of a small tanh network, dominated by
      matrix products;
    * **elementwise**: a chain of transcendental functions over 200,000 values.

    Sizes are small so the notebook runs fast; the times are the best of a
    few calls after a warm-up. The stored outputs come from a 2-core CPU with
    NumPy's BLAS on one thread.
    """),
    code("""
    import jax
    import jax.numpy as jnp

    def make_mlp_loss(xp):
        def loss(params, x, y):
            h = x
            for W, b in params[:-1]:
                h = xp.tanh(h @ W + b)
            W, b = params[-1]
            logits = h @ W + b
            logp = logits - xp.log(xp.sum(xp.exp(logits), axis=1, keepdims=True))
            return -xp.mean(xp.sum(y * logp, axis=1))
        return loss

    def make_elementwise(xp):
        def f(x):
            y = xp.sin(x) * xp.cos(x) ** 2
            return xp.sum(xp.log1p(xp.exp(y)) / (1 + x ** 2) + xp.tanh(y) * x)
        return f

    rng = np.random.default_rng(0)
    sizes = [256, 256, 256, 10]
    params = [((rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32), np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
    xb = rng.normal(size=(64, sizes[0])).astype(np.float32)
    yb = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    xs = np.linspace(-3, 3, 200_000, dtype=np.float32)

    def block(out):                                 # wait for asynchronous results
        for leaf in funcad.tree_util.tree_leaves(out):
            if hasattr(leaf, "block_until_ready"):
                leaf.block_until_ready()
        return out

    def best_ms(fn, *args, n=5):
        block(fn(*args))                            # warm-up (and compile)
        times = []
        for _ in range(n):
            t = time.perf_counter()
            block(fn(*args))
            times.append(time.perf_counter() - t)
        return 1e3 * min(times)

    workloads = {"MLP": (make_mlp_loss, (params, xb, yb)), "elementwise": (make_elementwise, (xs,))}
    ways = {"funcad eager (NumPy)": lambda make: funcad.grad(make(fnp)),
            "funcad.jit (XLA)": lambda make: funcad.jit(funcad.grad(make(fnp))),
            "jax.jit(jax.grad)": lambda make: jax.jit(jax.grad(make(jnp)))}

    times, grads, first = {}, {}, {}
    print(f"{'':<22}" + "".join(f"{w:>14}" for w in workloads))
    for way, transform in ways.items():
        for work, (make, args) in workloads.items():
            fn = transform(make)
            t = time.perf_counter()
            grads[way, work] = block(fn(*args))     # jit: trace, lower, compile
            first[way, work] = 1e3 * (time.perf_counter() - t)
            times[way, work] = best_ms(fn, *args)
        print(f"{way:<22}" + "".join(f"{times[way, w]:11.2f} ms" for w in workloads))
    print("\\nfirst call of the MLP gradient (tracing and compiling):",
          ", ".join(f"{way} {first[way, 'MLP']:.0f} ms" for way in list(ways)[1:]))
    """),
    md("""
    Each primitive of eager NumPy makes a pass over memory and a temporary
    array, and costs a Python dispatch. XLA fuses chains of elementwise
    operations into single loops, which pays off most on the elementwise
    workload; in the MLP much of the time goes to matrix products, which
    NumPy and XLA both hand to optimised kernels. The gradients agree to
    float32 rounding:
    """),
    code("""
    leaves = funcad.tree_util.tree_leaves
    for work in workloads:
        eager = leaves(grads["funcad eager (NumPy)", work])
        for way in ["funcad.jit (XLA)", "jax.jit(jax.grad)"]:
            diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / float(np.max(np.abs(a)))
                       for a, b in zip(eager, leaves(grads[way, work])))
            print(f"{work:<12} max relative difference, eager vs {way}: {diff:.1e}")
            assert diff < 1e-5

    fig, axes = plt.subplots(1, 2, figsize=(8.4, 2.2), sharey=True)
    for ax, work in zip(axes, workloads):
        ax.barh(list(ways)[::-1], [times[way, work] for way in list(ways)[::-1]],
                color=["#c64600", "#1a5fb4", "#888"])
        ax.set_title(work)
        ax.set_xlabel("ms per gradient (lower is better)")
    plt.tight_layout()
    plt.show()
    """),
    md("""
    ## Inside other transformations

    `jit` composes: `grad(jit(f))`, `jit(grad(f))` and `vmap(jit(f))` all
    work. Under another transformation a jitted function is one `jit` call
    equation whose body the outer transformation rewrites:
    """),
    code("""
    h = funcad.jit(lambda x: fnp.sin(x) * x)
    print(funcad.make_jaxpr(funcad.vmap(h))(np.ones((2, 3))))
    print("grad(jit):", funcad.grad(lambda x: fnp.sum(h(x)))(np.ones(3)))
    """),
    md("""
    ## GPU

    With a CUDA GPU and the matching jaxlib plugin (`pip install "jax[cuda12]"`)
    `jit` compiles for the GPU by default; `backend="cpu"` or `"gpu"` picks one
    explicitly. This cell compares both when a GPU is present.
    """),
    code("""
    if xla.gpu_available():
        big = [((rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32), np.zeros(n, np.float32))
               for m, n in zip([1024, 2048, 2048], [2048, 2048, 10])]
        xg = rng.normal(size=(512, 1024)).astype(np.float32)
        yg = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 512)]
        for backend in ["cpu", "gpu"]:
            fn = funcad.jit(funcad.grad(make_mlp_loss(fnp)), backend=backend)
            print(f"{backend}: {best_ms(fn, big, xg, yg):8.2f} ms  (MLP 1024-2048-2048-10, batch 512)")
    else:
        print("No GPU present: funcad.jit compiles for the CPU.")
    """),
]

# -------------------------------------------------------- vmap and Jacobians ----

VMAP = [
    md("""
    # vmap and Jacobians

    `funcad.vmap(f)` turns a function written for one example into one that
    runs on a batch, by adding a batch axis to every operation (no Python
    loop). Together with `grad`, `jvp` and `vjp` it gives per-example
    gradients, full Jacobians and Hessians.
    """),
    PLOT_SETUP,
    code("""
    import time
    rng = np.random.default_rng(0)

    def ms(fn, *args, n=3):
        fn(*args)
        t = time.perf_counter()
        for _ in range(n):
            fn(*args)
        return 1e3 * (time.perf_counter() - t) / n
    """),
    md("""
    ## Write it for one example, run it on a batch

    `in_axes` says which axis of each argument is the batch axis (`None`: the
    argument is shared by the whole batch).
    """),
    code("""
    def predict(w, x):                  # one example: x has shape (3,)
        return fnp.tanh(fnp.dot(w, x))

    w = rng.normal(size=3)
    X = rng.normal(size=(6, 3))
    batched = funcad.vmap(predict, in_axes=(None, 0))(w, X)
    print(batched)
    assert np.allclose(batched, [predict(w, xi) for xi in X])
    """),
    md("""
    ## Per-example gradients

    A mean loss's gradient averages away the contribution of each example.
    Sometimes each is needed: to clip them one by one (differentially private
    SGD), to find outliers, to estimate the gradient noise. `vmap(grad(loss))`
    computes all of them in one batched pass. Here for logistic regression,
    checked against the closed form (σ(w·x) − y) x:
    """),
    code("""
    def loss(w, x, y):                  # one example
        z = fnp.dot(w, x)
        return fnp.logaddexp(0.0, z) - y * z

    w = rng.normal(size=5)
    X, Y = rng.normal(size=(8, 5)), rng.integers(0, 2, 8).astype(float)
    per_example = funcad.vmap(funcad.grad(loss), in_axes=(None, 0, 0))(w, X, Y)
    print("per-example gradients, shape", per_example.shape)
    print(per_example)
    sigma = 1 / (1 + np.exp(-X @ w))
    assert np.allclose(per_example, (sigma - Y)[:, None] * X)
    print("norms:", np.linalg.norm(per_example, axis=1))
    """),
    md("""
    ## Jacobians: jacfwd or jacrev?

    For `f: Rⁿ → Rᵐ`, `jacfwd` pushes the n basis vectors forward (n jvps,
    batched with vmap) and `jacrev` pulls the m basis covectors back (m vjps,
    batched). They give the same matrix, but the cost follows n for `jacfwd`
    and m for `jacrev`: forward mode for tall Jacobians (few inputs, many
    outputs), reverse mode for wide ones (many inputs, few outputs).
    """),
    code("""
    def make(m, n):
        B = rng.normal(size=(m, n)) / np.sqrt(n)
        return (lambda x: fnp.tanh(B @ fnp.sin(x))), rng.normal(size=n)

    print(f"{'f: R^n -> R^m':<18}{'jacfwd':>10}{'jacrev':>10}")
    for m, n in [(2000, 10), (10, 2000)]:
        fun, x = make(m, n)
        Jf, Jr = funcad.jacfwd(fun)(x), funcad.jacrev(fun)(x)
        assert Jf.shape == (m, n) and np.allclose(Jf, Jr)
        print(f"{f'm={m}, n={n}':<18}{ms(funcad.jacfwd(fun), x):8.2f}ms{ms(funcad.jacrev(fun), x):8.2f}ms")
    """),
    md("""
    ## Hessians

    `funcad.hessian` is `jacfwd(jacrev(f))`: forward-over-reverse, the usual
    best choice. Here the Rosenbrock function, whose minimum is at (1, …, 1),
    against a finite difference of its gradient:
    """),
    code("""
    def rosenbrock(x):
        return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    x0 = np.array([-1.2, 1.0, 0.5, 2.0])
    H = funcad.hessian(rosenbrock)(x0)
    print(H)
    eps, grad_r = 1e-6, funcad.grad(rosenbrock)
    H_fd = np.stack([(grad_r(x0 + eps * e) - grad_r(x0 - eps * e)) / (2 * eps) for e in np.eye(4)])
    assert np.allclose(H, H_fd, atol=1e-4)
    """),
    md("""
    Often only a Hessian-vector product H v is needed (conjugate gradients,
    curvature along a direction). The jvp of the gradient gives it at a small
    multiple of the cost of one gradient, without forming H:
    """),
    code("""
    v = rng.normal(size=4)
    _, Hv = funcad.jvp(grad_r, (x0,), (v,))
    print(Hv, "==", H @ v)
    assert np.allclose(Hv, H @ v)
    """),
    md("""
    ## Newton's method

    Newton's method minimises a smooth function with steps
    x ← x − H(x)⁻¹ ∇f(x); near the minimum the number of correct digits
    doubles at each step. With `grad` and `hessian` it is three lines. Below,
    L2-regularised logistic regression on synthetic data, against plain
    gradient descent with the step size 1/L for the curvature bound L.
    """),
    code("""
    d, N = 6, 200
    Xs = rng.normal(size=(N, d)) * [3.0, 1.0, 1.0, 0.5, 0.3, 2.0]   # unevenly scaled features
    ys = (Xs @ rng.normal(size=d) + 0.5 * rng.normal(size=N) > 0).astype(float)

    def objective(w):
        z = Xs @ w
        return fnp.mean(fnp.logaddexp(0.0, z) - ys * z) + 0.01 * fnp.sum(w ** 2)

    gradient, hess = funcad.grad(objective), funcad.hessian(objective)

    w, newton = np.zeros(d), []
    for _ in range(10):
        g = gradient(w)
        newton.append(np.linalg.norm(g))
        w = w - np.linalg.solve(hess(w), g)

    L = np.linalg.eigvalsh(Xs.T @ Xs / N).max() / 4 + 0.02   # bound on the curvature
    v, descent = np.zeros(d), []
    for _ in range(60):
        g = gradient(v)
        descent.append(np.linalg.norm(g))
        v = v - g / L

    for k, gn in enumerate(newton):
        print(f"Newton step {k}: |grad| = {gn:.2e}")
    print(f"gradient descent after {len(descent)} steps: |grad| = {descent[-1]:.2e}")
    assert newton[-1] < 1e-12 and descent[-1] > 1e-4

    fig, ax = plt.subplots()
    ax.semilogy(newton, "o-", label="Newton")
    ax.semilogy(descent, label="gradient descent, step 1/L")
    ax.set_xlabel("iteration")
    ax.set_ylabel("|∇f|")
    ax.set_ylim(1e-18, 10)
    ax.legend()
    ax.grid(alpha=0.3)
    plt.show()
    """),
]

# ----------------------------------------------------------------- training ----

TRAINING = [
    md("""
    # Training a small MLP with gradient descent

    A two-layer tanh network learns to separate the two interleaved half
    moons of a synthetic data set. Nothing but funcad and NumPy: the
    parameters are a list of `(W, b)` pairs (a pytree), `value_and_grad`
    differentiates the loss, `tree_map` applies the update, and `jit`
    compiles the whole training step.
    """),
    PLOT_SETUP,
    code("""
    rng = np.random.default_rng(0)

    def two_moons(n, noise=0.1):
        t = rng.uniform(0, np.pi, n)
        upper = rng.random(n) < 0.5
        x = np.where(upper, np.cos(t), 1 - np.cos(t))
        y = np.where(upper, np.sin(t), 0.5 - np.sin(t))
        points = np.stack([x, y], axis=1) + noise * rng.normal(size=(n, 2))
        return points - [0.5, 0.25], upper.astype(float)

    X, Y = two_moons(256)
    fig, ax = plt.subplots(figsize=(4.2, 3))
    ax.scatter(*X.T, c=Y, cmap="coolwarm", s=10)
    ax.set_title("the data: 256 points, two classes")
    plt.show()
    """),
    md("""
    ## Model and loss

    `predict` maps a batch of points to one logit each; the loss is the
    binary cross-entropy, written with `logaddexp` so that it is stable for
    large logits.
    """),
    code("""
    def init(sizes):
        return [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n)) for m, n in zip(sizes[:-1], sizes[1:])]

    def predict(params, x):
        for W, b in params[:-1]:
            x = fnp.tanh(x @ W + b)
        W, b = params[-1]
        return (x @ W + b)[:, 0]

    def loss(params, x, y):
        z = predict(params, x)
        return fnp.mean(fnp.logaddexp(0.0, z) - y * z)

    params = init([2, 16, 16, 1])
    print("parameter shapes:", funcad.tree_util.tree_map(np.shape, params))
    print("initial loss:", loss(params, X, Y))
    """),
    md("""
    Before training, check the derivatives: `funcad.test_util.check_grads`
    compares forward mode with finite differences and reverse mode with
    forward mode, here up to second order.
    """),
    code("""
    import funcad.test_util
    funcad.test_util.check_grads(lambda p: loss(p, X[:8], Y[:8]), (params,), order=2)
    print("derivatives check out")
    """),
    md("""
    ## The training step

    Plain full-batch gradient descent. The step is jitted once; each call then
    runs the compiled forward and backward pass and the update.
    """),
    code("""
    @funcad.jit
    def step(params, x, y, lr=1.0):
        value, grads = funcad.value_and_grad(loss)(params, x, y)
        return value, funcad.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)

    import time
    t = time.perf_counter()
    value, params = step(params, X, Y)             # the first call traces and compiles
    losses = [float(value)]
    print(f"first step (with compilation): {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    for i in range(999):
        value, params = step(params, X, Y)
        losses.append(float(value))
    print(f"999 more steps: {time.perf_counter() - t:.2f} s; loss {losses[0]:.4f} -> {losses[-1]:.4f}")

    accuracy = np.mean((np.asarray(predict(params, X)) > 0) == Y)
    print(f"training accuracy: {accuracy:.1%}")
    assert losses[-1] < 0.1 * losses[0] and accuracy > 0.95
    """),
    md("""
    ## Loss curve and decision boundary
    """),
    code("""
    xx, yy = np.meshgrid(np.linspace(-1.8, 1.8, 120), np.linspace(-1.3, 1.3, 90))
    grid = np.stack([xx.ravel(), yy.ravel()], axis=1)
    prob = 1 / (1 + np.exp(-np.asarray(predict(params, grid)).reshape(xx.shape)))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8.4, 3.2))
    ax1.semilogy(losses)
    ax1.set_xlabel("step")
    ax1.set_ylabel("cross-entropy")
    ax1.set_title("training loss")
    ax1.grid(alpha=0.3)
    ax2.contourf(xx, yy, prob, levels=20, cmap="coolwarm", alpha=0.6)
    ax2.contour(xx, yy, prob, levels=[0.5], colors="k", linewidths=1)
    ax2.scatter(*X.T, c=Y, cmap="coolwarm", s=8, edgecolors="k", linewidths=0.3)
    ax2.set_title("decision boundary")
    plt.tight_layout()
    plt.show()
    """),
]

# ------------------------------------------------------------- control flow ----

CONTROL = [
    md("""
    # Control flow: scan, while_loop, cond

    Python `if` and `for` work on concrete values: eagerly, and under `grad`
    and `jvp` of eager code, because funcad computes primal values as it goes.
    Under `jit` and `vmap` the values are abstract, so a branch on them cannot
    be decided while tracing:
    """),
    SETUP,
    code("""
    def relu_ish(x):
        return x if x > 0 else 0.1 * x

    print("eager grad:", funcad.grad(relu_ish)(2.0))
    try:
        funcad.jit(relu_ish)(2.0)
    except funcad.ConcretizationError as e:
        print("jit:", str(e)[:230], "...")
    """),
    md("""
    `funcad.lax` has structured control flow that stages into a single
    equation holding the traced body, so every transformation works through
    it: `cond`/`switch`, `while_loop`, `fori_loop`, `scan` and `map`.
    """),
    code("""
    def relu_ish(x):
        return funcad.lax.cond(x > 0, lambda x: x, lambda x: 0.1 * x, x)

    xs = np.array([-2.0, 3.0])
    print("jit(vmap(f)):", funcad.jit(funcad.vmap(relu_ish))(xs))
    print("vmap(grad(f)):", funcad.vmap(funcad.grad(relu_ish))(xs))
    """),
    md("""
    ## scan: a recurrent network

    `scan(f, carry, xs)` runs `carry, y = f(carry, x)` over the leading axis
    of `xs` and stacks the `y`s. An Elman RNN is a two-line body. The
    program stays one `scan` equation however long the sequence, where a
    Python loop would be unrolled into one copy of the body per step.
    """),
    code("""
    rng = np.random.default_rng(0)
    H, D, T = 8, 3, 50
    params = {"Wh": rng.normal(size=(H, H)) / np.sqrt(H), "Wx": rng.normal(size=(D, H)),
              "b": np.zeros(H), "out": rng.normal(size=H) / np.sqrt(H)}
    xs = rng.normal(size=(T, D))
    targets = np.cumsum(xs[:, 0]) / np.sqrt(np.arange(1, T + 1))

    def rnn_loss(params, xs, targets):
        def cell(h, x):
            h = fnp.tanh(h @ params["Wh"] + x @ params["Wx"] + params["b"])
            return h, h @ params["out"]
        _, ys = funcad.lax.scan(cell, np.zeros(H), xs)
        return fnp.mean((ys - targets) ** 2)

    def rnn_loss_unrolled(params, xs, targets):
        h, ys = np.zeros(H), []
        for x in xs:
            h = fnp.tanh(h @ params["Wh"] + x @ params["Wx"] + params["b"])
            ys.append(h @ params["out"])
        return fnp.mean((fnp.stack(ys) - targets) ** 2)

    g_scan = funcad.jit(funcad.grad(rnn_loss))(params, xs, targets)
    g_loop = funcad.grad(rnn_loss_unrolled)(params, xs, targets)
    for k in params:
        assert np.allclose(g_scan[k], g_loop[k])
    print("d loss / d out:", np.asarray(g_scan["out"]))

    n_scan = len(funcad.make_jaxpr(funcad.grad(rnn_loss))(params, xs, targets).jaxpr.eqns)
    n_loop = len(funcad.make_jaxpr(funcad.grad(rnn_loss_unrolled))(params, xs, targets).jaxpr.eqns)
    print(f"gradient program: {n_scan} equations with scan, {n_loop} unrolled")
    """),
    md("""
    Reverse mode through a scan stores every step's intermediates. Wrapping
    the body in `funcad.checkpoint` stores only each step's carry and input
    and recomputes the rest on the way back, for the same gradient:
    """),
    code("""
    def rnn_loss_remat(params, xs, targets):
        @funcad.checkpoint
        def cell(h, x):
            h = fnp.tanh(h @ params["Wh"] + x @ params["Wx"] + params["b"])
            return h, h @ params["out"]
        _, ys = funcad.lax.scan(cell, np.zeros(H), xs)
        return fnp.mean((ys - targets) ** 2)

    g_remat = funcad.grad(rnn_loss_remat)(params, xs, targets)
    assert all(np.allclose(g_remat[k], g_loop[k]) for k in params)
    print("same gradient with checkpointing")
    """),
    md("""
    ## while_loop: a Newton solver

    Kepler's equation E − e sin E = M gives a planet's eccentric anomaly E
    from its mean anomaly M and the orbit's eccentricity e; it has no closed
    form. Newton's method solves it: iterate until the residual is tiny. The
    solver is jitted and `vmap`ped over many values of M at once; under vmap
    each lane stops when its own condition fails.
    """),
    code("""
    def kepler(M, e, tol=1e-12):
        def residual(E):
            return E - e * fnp.sin(E) - M
        def newton(E):
            return E - residual(E) / (1 - e * fnp.cos(E))
        E = funcad.lax.while_loop(lambda E: fnp.abs(residual(E)) > tol, newton, M, max_steps=50)
        return newton(E)                # one more step: see below

    Ms = np.linspace(0.0, 2 * np.pi, 7)
    Es = funcad.jit(funcad.vmap(kepler, in_axes=(0, None)))(Ms, 0.6)
    print("E:", np.asarray(Es))
    print("residual:", np.max(np.abs(Es - 0.6 * np.sin(Es) - Ms)))
    assert np.allclose(Es - 0.6 * np.sin(Es), Ms, atol=1e-10)
    """),
    md("""
    ## Reverse mode through while_loop

    JAX cannot take reverse-mode derivatives through a `while_loop`; funcad
    can. Eagerly the trip count is known, so the loop is differentiated like a
    scan of that many steps. Under `jit` the count is not known while
    tracing, so `max_steps` bounds it and steps after the condition fails
    leave the carry unchanged.

    Check against implicit differentiation: from E − e sin E = M,
    dE/de = sin E / (1 − e cos E) and dE/dM = 1 / (1 − e cos E).
    """),
    code("""
    M, e = 1.0, 0.6
    E = float(kepler(M, e))
    dE_de = funcad.grad(kepler, argnums=1)(M, e)
    dE_de_jit = funcad.jit(funcad.grad(kepler, argnums=1))(M, e)
    dE_dM = funcad.jit(funcad.grad(kepler))(M, e)
    print(f"dE/de: eager {dE_de:.12f}, jit {float(dE_de_jit):.12f}, implicit {np.sin(E) / (1 - e * np.cos(E)):.12f}")
    print(f"dE/dM: jit   {float(dE_dM):.12f}, implicit {1 / (1 - e * np.cos(E)):.12f}")
    assert np.isclose(dE_de, np.sin(E) / (1 - e * np.cos(E)))
    assert np.isclose(float(dE_de_jit), np.sin(E) / (1 - e * np.cos(E)))
    assert np.isclose(float(dE_dM), 1 / (1 - e * np.cos(E)))
    """),
    md("""
    Differentiating the iterations gives the derivative of what the
    iterations compute. Why the extra Newton step after the loop? Where the
    initial guess E = M is already the solution (M = 0, π, 2π) the loop runs
    zero times, and the loop alone has the derivative of the initial guess,
    dE/dM = 1, instead of 1 / (1 − e). At a solution a Newton step has zero
    derivative with respect to E, so the derivative of one more step is
    exactly the implicit one, whatever the trip count. Here over a whole
    orbit, batched and compiled:
    """),
    code("""
    def kepler_loop_only(M, e, tol=1e-12):
        residual = lambda E: E - e * fnp.sin(E) - M
        return funcad.lax.while_loop(lambda E: fnp.abs(residual(E)) > tol,
                                     lambda E: E - residual(E) / (1 - e * fnp.cos(E)), M, max_steps=50)

    def dE_dM_orbit(solver):
        return np.asarray(funcad.jit(funcad.vmap(funcad.grad(solver), in_axes=(0, None)))(Ms, e))

    implicit = 1 / (1 - e * np.cos(np.asarray(Es)))
    print("M:             ", Ms)
    print("loop only:     ", dE_dM_orbit(kepler_loop_only))
    print("with last step:", dE_dM_orbit(kepler))
    print("implicit:      ", implicit)
    assert np.allclose(dE_dM_orbit(kepler), implicit)
    """),
    md("""
    ## fori_loop

    `fori_loop(lower, upper, body, init)` with concrete bounds is a scan, so
    reverse mode works too. Here x ↦ cos applied 20 times, near the fixed
    point of cos (0.739…), where the derivative shrinks like sin(0.739)²⁰:
    """),
    code("""
    def iterate_cos(x):
        return funcad.lax.fori_loop(0, 20, lambda i, x: fnp.cos(x), x)

    print(iterate_cos(1.0), funcad.grad(iterate_cos)(1.0), funcad.jit(funcad.grad(iterate_cos))(1.0))
    """),
]

NOTEBOOKS = {
    "01_quickstart": QUICKSTART,
    "02_jaxprs": JAXPRS,
    "03_jit_and_xla": JIT,
    "04_vmap_and_jacobians": VMAP,
    "05_training": TRAINING,
    "06_control_flow": CONTROL,
}


def make_notebook(cells):
    """An nbformat v4 notebook (not executed) from (kind, source) pairs."""
    import nbformat.v4 as v4

    nb = v4.new_notebook()
    nb.cells = [v4.new_markdown_cell(src) if kind == "markdown" else v4.new_code_cell(src)
                for kind, src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def execute(nb, timeout: int = 300, **env_overrides: str):
    """Run every cell in a fresh kernel started in notebooks/; raises on a cell error."""
    from nbclient import NotebookClient

    # The kernel imports this checkout's funcad even where it is not pip-installed.
    env = {**os.environ, **env_overrides}
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(HERE.parent), env.get("PYTHONPATH")] if p)
    NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(HERE)}}).execute(env=env)
    return nb


def main(prefixes: list[str]) -> None:
    import nbformat

    for name, cells in NOTEBOOKS.items():
        if prefixes and not any(name.startswith(p) for p in prefixes):
            continue
        # Multi-threaded OpenBLAS spins badly on a machine whose cores are busy
        # with other work; one BLAS thread keeps the stored timings meaningful.
        nb = execute(make_notebook(cells), OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
        # Cell ids are random per build; number them so rebuilds diff cleanly.
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"c{i:02d}"
        nbformat.write(nb, HERE / f"{name}.ipynb")
        print("wrote", name + ".ipynb")


if __name__ == "__main__":
    main(sys.argv[1:])
