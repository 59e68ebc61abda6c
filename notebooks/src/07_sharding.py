# %% [markdown]
# # Training on several devices: data and model parallelism
#
# funcad hands XLA a program annotated with *shardings* (how each array is
# split over the devices) and lets XLA's SPMD partitioner write the
# per-device program and its communication. Without a GPU cluster we can
# still watch it work: the CPU backend can pretend to be 8 devices if
# `XLA_FLAGS` says so before the backend starts.

# %%
import os
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("FUNCAD_BACKEND", "cpu")

import numpy as np
import funcad
import funcad.numpy as fnp
from funcad.sharding import AxisType, NamedSharding, PartitionSpec as P

np.set_printoptions(precision=4, suppress=True)
print(funcad.device_count(), "devices:", funcad.devices()[:3], "...")

# %% [markdown]
# ## A mesh and a sharded array
#
# A `Mesh` names the axes of a grid of devices; here 4 × 2, with a `data`
# axis and a `model` axis. A `NamedSharding(mesh, P("data", None))` splits
# an array's first dimension over `data` and replicates it over `model`.
# The axes here are `Auto`: the compiler propagates the shardings given at
# `jit`'s boundary through the program. (`make_mesh` makes `Explicit` axes by
# default, as JAX 0.12's: there the shardings are part of the types, and an
# ambiguous product asks for its `out_sharding`.)
# `funcad.debug.visualize_array_sharding` draws which devices hold which
# block.

# %%
mesh = funcad.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
x = funcad.device_put(np.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("data", "model")))
funcad.debug.visualize_array_sharding(x, use_color=False)
row = funcad.device_put(np.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("data")))
funcad.debug.visualize_array_sharding(row, use_color=False)

# %% [markdown]
# ## The model
#
# A small MLP classifying points of four Gaussian blobs in 16 dimensions.

# %%
rng = np.random.default_rng(0)
n, d, hidden, k = 512, 16, 64, 4
centers = rng.standard_normal((k, d)) * 2
labels = rng.integers(0, k, n)
X = (centers[labels] + rng.standard_normal((n, d))).astype(np.float32)
Y = np.eye(k, dtype=np.float32)[labels]

def init(rng):
    return {"w1": (rng.standard_normal((d, hidden)) / 4).astype(np.float32),
            "b1": np.zeros(hidden, np.float32),
            "w2": (rng.standard_normal((hidden, k)) / 8).astype(np.float32),
            "b2": np.zeros(k, np.float32)}

def loss(p, x, y):
    h = fnp.tanh(x @ p["w1"] + p["b1"])
    logits = h @ p["w2"] + p["b2"]
    logp = logits - funcad.nn.logsumexp(logits, axis=1, keepdims=True)
    return -fnp.mean(fnp.sum(logp * y, axis=1))

def sgd(p, g, lr=0.5):
    return funcad.tree.map(lambda a, b: a - lr * b, p, g)

def train(step, params, x, y, steps=30):
    losses = []
    for _ in range(steps):
        value, params = step(params, x, y)
        losses.append(float(value))
    return params, losses

def update(p, x, y):
    value, g = funcad.value_and_grad(loss)(p, x, y)
    return value, sgd(p, g)

# %% [markdown]
# First on one device, as the reference.

# %%
single = funcad.jit(update)
p_single, losses_single = train(single, init(np.random.default_rng(1)), X, Y)
print("one device: loss %.4f -> %.4f" % (losses_single[0], losses_single[-1]))

# %% [markdown]
# ## Data parallelism
#
# Split the batch over all 8 devices (`P(("data", "model"))` uses both mesh
# axes for the first dimension) and replicate the parameters. The program
# is the same `jit(update)`; only the shardings are new. XLA computes each
# device's part of the gradient and sums them with an all-reduce.

# %%
batch = NamedSharding(mesh, P(("data", "model")))
replicated = NamedSharding(mesh, P())
dp = funcad.jit(update, in_shardings=(replicated, batch, batch),
                out_shardings=(replicated, replicated))
xs, ys = funcad.device_put(X, batch), funcad.device_put(Y, batch)
p_dp, losses_dp = train(dp, init(np.random.default_rng(1)), xs, ys)
print("data parallel: loss %.4f -> %.4f" % (losses_dp[0], losses_dp[-1]))
print("max difference from one device:", np.max(np.abs(np.array(losses_dp) - losses_single)))
assert np.allclose(losses_dp, losses_single, rtol=1e-4)
funcad.debug.visualize_array_sharding(xs, use_color=False)

# %% [markdown]
# ## Data and model parallelism
#
# Now the 4 × 2 mesh does both: the batch is split over `data`, and the
# hidden layer over `model` (the columns of `w1` and `b1`, the rows of
# `w2`), as in Megatron-style tensor parallelism. Each device holds a
# quarter of the batch and half of the hidden units.

# %%
shardings = {"w1": NamedSharding(mesh, P(None, "model")), "b1": NamedSharding(mesh, P("model")),
             "w2": NamedSharding(mesh, P("model", None)), "b2": replicated}
rows = NamedSharding(mesh, P("data"))
mp = funcad.jit(update, in_shardings=(shardings, rows, rows),
                out_shardings=(replicated, shardings))
params = funcad.device_put(init(np.random.default_rng(1)), shardings)
p_mp, losses_mp = train(mp, params, funcad.device_put(X, rows), funcad.device_put(Y, rows))
print("data + model parallel: loss %.4f -> %.4f" % (losses_mp[0], losses_mp[-1]))
assert np.allclose(losses_mp, losses_single, rtol=1e-4)
for name in ("w1", "w2"):
    print(name, p_mp[name].shape, p_mp[name].sharding.spec)
    funcad.debug.visualize_array_sharding(p_mp[name], use_color=False, scale=0.4)
assert all(np.allclose(p_mp[k], p_single[k], atol=1e-5) for k in p_single)
print("the trained parameters match the one-device run")

# %% [markdown]
# ## Per-device code: `shard_map`
#
# Sometimes you want to write the per-device program yourself. `shard_map`
# runs a function on each device's block; collectives such as `psum`
# communicate. A `grad` taken inside it of the replicated parameters is
# summed over the devices (the parameters do not vary over the mesh, so
# their cotangents are), as in JAX: dividing by the batch size gives the
# mean gradient.

# %%
def local_update(p, x, y):
    value, g = funcad.value_and_grad(lambda p: loss(p, x, y) * x.shape[0] / n)(p)
    return funcad.lax.psum(value, "data"), sgd(p, g)

flat = funcad.make_mesh((8,), ("data",))
sm = funcad.jit(funcad.shard_map(local_update, mesh=flat, in_specs=(P(), P("data"), P("data")),
                                 out_specs=(P(), P())))
_, losses_sm = train(sm, init(np.random.default_rng(1)), X, Y)
assert np.allclose(losses_sm, losses_single, rtol=1e-4)
print("shard_map: loss %.4f -> %.4f, same as one device" % (losses_sm[0], losses_sm[-1]))
