# %% [markdown]
# # Training a small MLP with gradient descent
#
# A two-layer tanh network learns to separate the two interleaved half
# moons of a synthetic data set. Nothing but funcad and NumPy: the
# parameters are a list of `(W, b)` pairs (a pytree), `value_and_grad`
# differentiates the loss, `tree_map` applies the update, and `jit`
# compiles the whole training step.

# %%
import numpy as np
import matplotlib.pyplot as plt
import funcad
import funcad.numpy as fnp

# %matplotlib inline
np.set_printoptions(precision=4, suppress=True)
plt.rcParams.update({"figure.figsize": (6.4, 3.4), "figure.dpi": 72})

# %%
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

# %% [markdown]
# ## Model and loss
#
# `predict` maps a batch of points to one logit each; the loss is the
# binary cross-entropy, written with `logaddexp` so that it is stable for
# large logits.

# %%
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

# %% [markdown]
# Before training, check the derivatives: `funcad.test_util.check_grads`
# compares forward mode with finite differences and reverse mode with
# forward mode, here up to second order.

# %%
import funcad.test_util
funcad.test_util.check_grads(lambda p: loss(p, X[:8], Y[:8]), (params,), order=2)
print("derivatives check out")

# %% [markdown]
# ## The training step
#
# Plain full-batch gradient descent. The step is jitted once; each call then
# runs the compiled forward and backward pass and the update.

# %%
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

# %% [markdown]
# ## Loss curve and decision boundary

# %%
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
