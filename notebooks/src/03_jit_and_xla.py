# %% [markdown]
# # jit: compiling with XLA
#
# `funcad.jit(f)` traces `f` once per argument signature (shapes, dtypes,
# static arguments), optimises the jaxpr, lowers it to **StableHLO** and
# compiles it with XLA through jaxlib's PJRT client. The executable is
# cached, results stay on the device between jitted calls, and `jit`
# composes with every other transformation.

# %%
import os
import time
import numpy as np
import matplotlib.pyplot as plt
import funcad
import funcad.numpy as fnp
from funcad.lowering import xla

# %matplotlib inline
np.set_printoptions(precision=4, suppress=True)
plt.rcParams.update({"figure.figsize": (6.4, 2.6), "figure.dpi": 72})
print("default backend:", xla.default_backend(), "| CPU cores:", os.cpu_count())

# %% [markdown]
# ## The StableHLO text
#
# `jit(f).lower(*args)` traces and lowers without compiling;
# `.as_text()` is the StableHLO module XLA receives. This is the gradient
# of `sum(tanh(x)²)` in float32, after the optimiser:

# %%
def f(x):
    return fnp.sum(fnp.tanh(x) ** 2)

x = np.linspace(-1, 1, 4, dtype=np.float32)
print(funcad.jit(funcad.grad(f)).lower(x).as_text())

# %% [markdown]
# The compiled function gives the same numbers. It returns a
# `funcad.Array`, which stays on the device until NumPy asks for it
# (`np.asarray`, printing, `float`):

# %%
fast = funcad.jit(funcad.grad(f))
r = fast(x)
print(type(r).__name__, r.dtype, r)
print("eager:", funcad.grad(f)(x))
np.testing.assert_allclose(np.asarray(r), funcad.grad(f)(x), rtol=1e-6)

# %% [markdown]
# ## Trace once, run many times
#
# The Python function runs only while tracing, so a `print` inside it shows
# when that happens: once for each new argument signature.

# %%
def noisy(x):
    print("  tracing for", x.shape, x.dtype)
    return fnp.sin(x) * 2

g = funcad.jit(noisy)
for arg in [np.ones(3), np.zeros(3), np.ones(4), np.ones(3, np.float32)]:
    print(f"call with {arg.dtype}{list(arg.shape)}")
    g(arg)

# %% [markdown]
# ## Speed: eager NumPy, funcad.jit and JAX
#
# Two gradients in float32, each written once against a NumPy-like
# namespace `xp` and run three ways: eagerly by funcad on NumPy, compiled by
# `funcad.jit`, and compiled by `jax.jit(jax.grad)` for reference (JAX is
# used here only for comparison; funcad does its own tracing,
# differentiation and lowering).
#
# * **MLP**: the cross-entropy loss of a small tanh network, dominated by
#   matrix products;
# * **elementwise**: a chain of transcendental functions over 200,000 values.
#
# Sizes are small so the notebook runs fast; the times are the best of a
# few calls after a warm-up. The stored outputs come from a 2-core CPU with
# NumPy's BLAS on one thread.

# %%
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
print("\nfirst call of the MLP gradient (tracing and compiling):",
      ", ".join(f"{way} {first[way, 'MLP']:.0f} ms" for way in list(ways)[1:]))

# %% [markdown]
# Each primitive of eager NumPy makes a pass over memory and a temporary
# array, and costs a Python dispatch. XLA fuses chains of elementwise
# operations into single loops, which pays off most on the elementwise
# workload; in the MLP much of the time goes to matrix products, which
# NumPy and XLA both hand to optimised kernels. The gradients agree to
# float32 rounding:

# %%
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

# %% [markdown]
# ## Inside other transformations
#
# `jit` composes: `grad(jit(f))`, `jit(grad(f))` and `vmap(jit(f))` all
# work. Under another transformation a jitted function is one `jit` call
# equation whose body the outer transformation rewrites:

# %%
h = funcad.jit(lambda x: fnp.sin(x) * x)
print(funcad.make_jaxpr(funcad.vmap(h))(np.ones((2, 3))))
print("grad(jit):", funcad.grad(lambda x: fnp.sum(h(x)))(np.ones(3)))

# %% [markdown]
# ## GPU
#
# With a CUDA GPU and the matching jaxlib plugin (`pip install "jax[cuda12]"`)
# `jit` compiles for the GPU by default; `backend="cpu"` or `"gpu"` picks one
# explicitly. This cell compares both when a GPU is present.

# %%
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
