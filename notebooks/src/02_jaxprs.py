# %% [markdown]
# # jaxprs: the programs behind the transformations
#
# funcad does not differentiate by tracking numbers. It *traces* a Python
# function into a small typed program, a **jaxpr**, and each transformation
# rewrites that program into another one. `funcad.make_jaxpr(f)(*args)`
# shows the program `f` runs for arguments of those shapes and dtypes.

# %%
import numpy as np
import funcad
import funcad.numpy as fnp

np.set_printoptions(precision=4, suppress=True)

# %%
def f(x):
    y = fnp.sin(x) * x
    return fnp.sum(y)

x = np.linspace(0.0, 1.0, 3)
print(funcad.make_jaxpr(f)(x))

# %% [markdown]
# Read it as `{ lambda constants ; inputs. let equations in (outputs) }`.
# Each equation applies one *primitive* (`sin`, `mul`, `reduce_sum`, ...) to
# typed variables: `f64[3]` is a float64 array of shape (3,). Python itself
# disappears: helper functions are inlined and a Python loop on concrete
# values is unrolled.

# %%
def g(x):
    for _ in range(3):
        x = fnp.cos(x)
    return x

print(funcad.make_jaxpr(g)(1.0))

# %% [markdown]
# ## jvp: a tangent equation beside each primal equation
#
# Forward mode walks the program once and, for each equation, emits the
# primal equation and the equations of its derivative: `sin a` brings
# `cos a` and a `mul` by the tangent, the product rule brings two `mul`s
# and an `add`.

# %%
print(funcad.make_jaxpr(lambda x, t: funcad.jvp(f, (x,), (t,)))(x, np.ones(3)))

# %% [markdown]
# ## grad = linearize, then transpose
#
# Reverse mode takes two steps. **Linearize**: run the jvp while separating
# the primal equations, computed now, from the tangent equations, which are
# linear in the tangent and are staged into a program of their own. The
# primal values they need (here `cos x`, `x` and `sin x`) become its
# constants, the *residuals*:

# %%
y, f_lin = funcad.linearize(f, x)
print(funcad.make_jaxpr(f_lin)(np.ones(3)))

# %% [markdown]
# **Transpose**: run that linear program backwards, each equation replaced
# by its transpose (`reduce_sum` becomes a broadcast, a multiplication by a
# constant stays a multiplication). Seeded with 1.0 that gives the gradient
# program, which makes a single forward sweep followed by a single backward
# sweep:

# %%
grad_jaxpr = funcad.make_jaxpr(funcad.grad(f))(x)
print(grad_jaxpr)

# %% [markdown]
# ## vmap: the batch axis goes through every equation
#
# Batching rewrites each equation to carry an extra axis: elementwise
# primitives are unchanged, and the reduction now sums over axis 1.

# %%
print(funcad.make_jaxpr(funcad.vmap(f))(np.ones((5, 3))))

# %% [markdown]
# ## What the optimiser removes
#
# Transformations are written to be simple, not to emit minimal programs.
# The gradient program above still computes the primal output `e` that
# nobody reads, builds an array of ones and multiplies by it.
# `funcad.optimize` rewrites a jaxpr into an equivalent smaller one with
# exact passes: inlining of trivial calls, constant folding, algebraic
# simplification (`x * 1`, `neg(neg x)`, ...), common-subexpression
# elimination and dead-code elimination. `jit` runs it before compiling.

# %%
opt = funcad.optimize(grad_jaxpr)
print(opt)

before = funcad.eval_jaxpr(grad_jaxpr.jaxpr, grad_jaxpr.consts, x)[0]
after = funcad.eval_jaxpr(opt.jaxpr, opt.consts, x)[0]
print("same values:", before, after)
assert np.array_equal(before, after)

# %% [markdown]
# Higher derivatives gain the most, because nested transformations repeat
# work that common-subexpression elimination merges. Equation counts:

# %%
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

# %% [markdown]
# ## Read it as NumPy: `funcad.to_python`
#
# `funcad.to_python` turns a jaxpr into plain NumPy source: handy to read a
# gradient, or to ship it without funcad. The source runs as it is:

# %%
src = funcad.to_python(opt, name="grad_f")
print(src)

namespace = {}
exec(src, namespace)
print(namespace["grad_f"](x), "==", funcad.grad(f)(x))
assert np.allclose(namespace["grad_f"](x), funcad.grad(f)(x))

# %% [markdown]
# ## Draw it: `funcad.viz.graph`
#
# `funcad.viz.graph` returns a Graphviz diagram (inputs green, outputs red).
# It displays inline as SVG; here it is rendered to PNG, which every
# notebook viewer shows. It needs Graphviz's `dot` program.

# %%
import shutil
from IPython.display import Image

diagram = funcad.viz.graph(opt, name="grad_f")
if shutil.which("dot"):
    display(Image(diagram.pipe(format="png")))
else:
    print("Graphviz's `dot` is not installed; the DOT source:\n" + diagram.source)

# %% [markdown]
# ## In a notebook, a jaxpr displays as HTML
#
# A jaxpr at the end of a cell displays with its types greyed and its
# primitives in bold:

# %%
opt
