# %% [markdown]
# # vmap and Jacobians
#
# `funcad.vmap(f)` turns a function written for one example into one that
# runs on a batch, by adding a batch axis to every operation (no Python
# loop). Together with `grad`, `jvp` and `vjp` it gives per-example
# gradients, full Jacobians and Hessians.

# %%
import numpy as np
import matplotlib.pyplot as plt
import funcad
import funcad.numpy as fnp

# %matplotlib inline
np.set_printoptions(precision=4, suppress=True)
plt.rcParams.update({"figure.figsize": (6.4, 3.4), "figure.dpi": 72})

# %%
import time
rng = np.random.default_rng(0)

def ms(fn, *args, n=3):
    fn(*args)
    t = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return 1e3 * (time.perf_counter() - t) / n

# %% [markdown]
# ## Write it for one example, run it on a batch
#
# `in_axes` says which axis of each argument is the batch axis (`None`: the
# argument is shared by the whole batch).

# %%
def predict(w, x):                  # one example: x has shape (3,)
    return fnp.tanh(fnp.dot(w, x))

w = rng.normal(size=3)
X = rng.normal(size=(6, 3))
batched = funcad.vmap(predict, in_axes=(None, 0))(w, X)
print(batched)
assert np.allclose(batched, [predict(w, xi) for xi in X])

# %% [markdown]
# ## Per-example gradients
#
# A mean loss's gradient averages away the contribution of each example.
# Sometimes each is needed: to clip them one by one (differentially private
# SGD), to find outliers, to estimate the gradient noise. `vmap(grad(loss))`
# computes all of them in one batched pass. Here for logistic regression,
# checked against the closed form (σ(w·x) − y) x:

# %%
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

# %% [markdown]
# ## Jacobians: jacfwd or jacrev?
#
# For `f: Rⁿ → Rᵐ`, `jacfwd` pushes the n basis vectors forward (n jvps,
# batched with vmap) and `jacrev` pulls the m basis covectors back (m vjps,
# batched). They give the same matrix, but the cost follows n for `jacfwd`
# and m for `jacrev`: forward mode for tall Jacobians (few inputs, many
# outputs), reverse mode for wide ones (many inputs, few outputs).

# %%
def make(m, n):
    B = rng.normal(size=(m, n)) / np.sqrt(n)
    return (lambda x: fnp.tanh(B @ fnp.sin(x))), rng.normal(size=n)

print(f"{'f: R^n -> R^m':<18}{'jacfwd':>10}{'jacrev':>10}")
for m, n in [(2000, 10), (10, 2000)]:
    fun, x = make(m, n)
    Jf, Jr = funcad.jacfwd(fun)(x), funcad.jacrev(fun)(x)
    assert Jf.shape == (m, n) and np.allclose(Jf, Jr)
    print(f"{f'm={m}, n={n}':<18}{ms(funcad.jacfwd(fun), x):8.2f}ms{ms(funcad.jacrev(fun), x):8.2f}ms")

# %% [markdown]
# ## Hessians
#
# `funcad.hessian` is `jacfwd(jacrev(f))`: forward-over-reverse, the usual
# best choice. Here the Rosenbrock function, whose minimum is at (1, …, 1),
# against a finite difference of its gradient:

# %%
def rosenbrock(x):
    return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

x0 = np.array([-1.2, 1.0, 0.5, 2.0])
H = funcad.hessian(rosenbrock)(x0)
print(H)
eps, grad_r = 1e-6, funcad.grad(rosenbrock)
H_fd = np.stack([(grad_r(x0 + eps * e) - grad_r(x0 - eps * e)) / (2 * eps) for e in np.eye(4)])
assert np.allclose(H, H_fd, atol=1e-4)

# %% [markdown]
# Often only a Hessian-vector product H v is needed (conjugate gradients,
# curvature along a direction). The jvp of the gradient gives it at a small
# multiple of the cost of one gradient, without forming H:

# %%
v = rng.normal(size=4)
_, Hv = funcad.jvp(grad_r, (x0,), (v,))
print(Hv, "==", H @ v)
assert np.allclose(Hv, H @ v)

# %% [markdown]
# ## Newton's method
#
# Newton's method minimises a smooth function with steps
# x ← x − H(x)⁻¹ ∇f(x); near the minimum the number of correct digits
# doubles at each step. With `grad` and `hessian` it is three lines. Below,
# L2-regularised logistic regression on synthetic data, against plain
# gradient descent with the step size 1/L for the curvature bound L.

# %%
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
