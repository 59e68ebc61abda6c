# %% [markdown]
# # funcad quickstart
#
# funcad gives NumPy programs JAX-style function transformations: `grad`,
# `jvp`, `vjp`, `vmap`, `jit`, ... Write your function with `funcad.numpy`
# (imported as `fnp`) the way you would with NumPy; each transformation takes
# a function and returns a new function. This notebook covers `grad`, `jvp`,
# `vjp`, `value_and_grad`, pytrees of parameters and derivatives of any order.

# %%
import numpy as np
import matplotlib.pyplot as plt
import funcad
import funcad.numpy as fnp

# %matplotlib inline
np.set_printoptions(precision=4, suppress=True)
plt.rcParams.update({"figure.figsize": (6.4, 3.4), "figure.dpi": 72})

# %% [markdown]
# ## grad
#
# Called on plain NumPy values, a `funcad.numpy` function simply *is* NumPy:
# the result is an `ndarray` and nothing is recorded. `funcad.grad(f)` is a
# new function computing the derivative of the scalar function `f`.

# %%
def f(x):
    return fnp.sin(x) * x ** 2

df = funcad.grad(f)
x = 1.3
print("f(x)  =", f(x))
print("f'(x) =", df(x))
print("by hand, cos(x) x² + 2x sin(x) =", np.cos(x) * x ** 2 + 2 * x * np.sin(x))
print(type(f(np.ones(3))))

# %% [markdown]
# For a function of an array, the gradient has the shape of the input:

# %%
def loss(w):
    return fnp.sum(fnp.tanh(w) ** 2)

w = np.array([-1.0, 0.0, 0.5, 2.0])
g = funcad.grad(loss)(w)
print(g)
assert np.allclose(g, 2 * np.tanh(w) / np.cosh(w) ** 2)

# %% [markdown]
# ## jvp: forward mode
#
# `funcad.jvp(f, primals, tangents)` evaluates `f` and its directional
# derivative, the Jacobian-vector product **J v**, in one forward pass. It
# costs a small multiple of one evaluation of `f`, whatever the sizes.

# %%
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

# %% [markdown]
# ## vjp: reverse mode
#
# `funcad.vjp(f, x)` returns `f(x)` and a *pullback*: given a cotangent
# **u** for the output, it returns **uᵀJ**. For a scalar loss one pullback
# gives the whole gradient, again at a small multiple of the cost of `f`;
# `grad` is `vjp` seeded with 1.0. The two modes agree:
# ⟨u, J v⟩ = ⟨uᵀJ, v⟩ for every u and v.

# %%
y, pullback = funcad.vjp(g, x)
(uJ,) = pullback(np.array([0.0, 1.0, 0.0]))
print("uᵀJ =", uJ, "= the second row of J:", J[1])
assert np.allclose(uJ, J[1])

u, v = rng.normal(size=3), rng.normal(size=4)
lhs = np.dot(u, funcad.jvp(g, (x,), (v,))[1])
rhs = np.dot(pullback(u)[0], v)
print(f"<u, J v> = {lhs:.12f}\n<uᵀJ, v> = {rhs:.12f}")
assert np.isclose(lhs, rhs)

# %% [markdown]
# ## value_and_grad and pytrees
#
# Parameters rarely come as a single array. Every funcad transformation
# accepts *pytrees*, nested tuples, lists and dicts of arrays, and the
# gradient comes back with the same structure. `value_and_grad` also returns
# the loss, which the forward pass computed anyway. `argnums` picks the
# argument to differentiate (the first by default).

# %%
params = {"W": rng.normal(size=(3, 2)) * 0.5, "b": np.zeros(2), "scale": np.array(1.0)}

def predict(params, x):
    return params["scale"] * fnp.tanh(x @ params["W"] + params["b"])

def mse(params, x, y):
    return fnp.mean((predict(params, x) - y) ** 2)

xb, yb = rng.normal(size=(16, 3)), rng.normal(size=(16, 2))
value, grads = funcad.value_and_grad(mse)(params, xb, yb)
print("loss:", value)
for name, g in grads.items():
    print(f"d loss / d {name}: shape {g.shape}\n{g}")

# %% [markdown]
# Check one entry against a central finite difference, then take a step of
# gradient descent with `funcad.tree_util.tree_map`, which maps a function
# over the leaves of several trees of the same structure:

# %%
dW = np.zeros((3, 2))
dW[0, 0] = eps = 1e-6
fd = (mse({**params, "W": params["W"] + dW}, xb, yb)
      - mse({**params, "W": params["W"] - dW}, xb, yb)) / (2 * eps)
print(f"finite difference {fd:.8f}, grad {grads['W'][0, 0]:.8f}")
assert np.isclose(fd, grads["W"][0, 0], atol=1e-7)

step = funcad.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
print(f"loss {mse(params, xb, yb):.6f} -> {mse(step, xb, yb):.6f} after one step")
assert mse(step, xb, yb) < mse(params, xb, yb)

# %% [markdown]
# ## Derivatives of any order
#
# A transformed function is an ordinary Python function, so transformations
# nest. Here are tanh and its first six derivatives, each the `grad` of the
# previous one. `grad` wants a scalar function, so `vmap` maps each over the
# grid of 200 points (the vmap notebook says more).

# %%
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

# %% [markdown]
# At 0 the Taylor series tanh(x) = x − x³/3 + 2x⁵/15 − … gives the values
# 0, 1, 0, −2, 0, 16, 0:

# %%
at0 = [float(fk(0.0)) + 0.0 for fk in fs]      # + 0.0 turns -0.0 into 0.0
print(at0)
assert np.allclose(at0, [0, 1, 0, -2, 0, 16, 0])

# %% [markdown]
# Next: `02_jaxprs` shows the programs these transformations build,
# `03_jit_and_xla` compiles them.
