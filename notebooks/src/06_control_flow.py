# %% [markdown]
# # Control flow: scan, while_loop, cond
#
# Python `if` and `for` work on concrete values: eagerly, and under `grad`
# and `jvp` of eager code, because funcad computes primal values as it goes.
# Under `jit` and `vmap` the values are abstract, so a branch on them cannot
# be decided while tracing:

# %%
import numpy as np
import funcad
import funcad.numpy as fnp

np.set_printoptions(precision=4, suppress=True)

# %%
def relu_ish(x):
    return x if x > 0 else 0.1 * x

print("eager grad:", funcad.grad(relu_ish)(2.0))
try:
    funcad.jit(relu_ish)(2.0)
except funcad.ConcretizationError as e:
    print("jit:", str(e)[:230], "...")

# %% [markdown]
# `funcad.lax` has structured control flow that stages into a single
# equation holding the traced body, so every transformation works through
# it: `cond`/`switch`, `while_loop`, `fori_loop`, `scan` and `map`.

# %%
def relu_ish(x):
    return funcad.lax.cond(x > 0, lambda x: x, lambda x: 0.1 * x, x)

xs = np.array([-2.0, 3.0])
print("jit(vmap(f)):", funcad.jit(funcad.vmap(relu_ish))(xs))
print("vmap(grad(f)):", funcad.vmap(funcad.grad(relu_ish))(xs))

# %% [markdown]
# ## scan: a recurrent network
#
# `scan(f, carry, xs)` runs `carry, y = f(carry, x)` over the leading axis
# of `xs` and stacks the `y`s. An Elman RNN is a two-line body. The
# program stays one `scan` equation however long the sequence, where a
# Python loop would be unrolled into one copy of the body per step.

# %%
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

# %% [markdown]
# Reverse mode through a scan stores every step's intermediates. Wrapping
# the body in `funcad.checkpoint` stores only each step's carry and input
# and recomputes the rest on the way back, for the same gradient:

# %%
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

# %% [markdown]
# ## while_loop: a Newton solver
#
# Kepler's equation E − e sin E = M gives a planet's eccentric anomaly E
# from its mean anomaly M and the orbit's eccentricity e; it has no closed
# form. Newton's method solves it: iterate until the residual is tiny. The
# solver is jitted and `vmap`ped over many values of M at once; under vmap
# each lane stops when its own condition fails.

# %%
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

# %% [markdown]
# ## Reverse mode through while_loop
#
# JAX cannot take reverse-mode derivatives through a `while_loop`; funcad
# can. Eagerly the trip count is known, so the loop is differentiated like a
# scan of that many steps. Under `jit` the count is not known while
# tracing, so `max_steps` bounds it and steps after the condition fails
# leave the carry unchanged.
#
# Check against implicit differentiation: from E − e sin E = M,
# dE/de = sin E / (1 − e cos E) and dE/dM = 1 / (1 − e cos E).

# %%
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

# %% [markdown]
# Differentiating the iterations gives the derivative of what the
# iterations compute. Why the extra Newton step after the loop? Where the
# initial guess E = M is already the solution (M = 0, π, 2π) the loop runs
# zero times, and the loop alone has the derivative of the initial guess,
# dE/dM = 1, instead of 1 / (1 − e). At a solution a Newton step has zero
# derivative with respect to E, so the derivative of one more step is
# exactly the implicit one, whatever the trip count. Here over a whole
# orbit, batched and compiled:

# %%
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

# %% [markdown]
# ## fori_loop
#
# `fori_loop(lower, upper, body, init)` with concrete bounds is a scan, so
# reverse mode works too. Here x ↦ cos applied 20 times, near the fixed
# point of cos (0.739…), where the derivative shrinks like sin(0.739)²⁰:

# %%
def iterate_cos(x):
    return funcad.lax.fori_loop(0, 20, lambda i, x: fnp.cos(x), x)

print(iterate_cos(1.0), funcad.grad(iterate_cos)(1.0), funcad.jit(funcad.grad(iterate_cos))(1.0))
