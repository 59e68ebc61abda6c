"""Equation counts of grad jaxprs: funcad before and after `funcad.optimize`, next to JAX.

Run: .venv/bin/python bench/bench_optimize.py [--time]

How equations are counted (the same for both libraries): every equation
counts 1 and the equations of its nested jaxprs (any param that is a Jaxpr
or ClosedJaxpr) are added, except that a plain call (funcad `jit`, JAX
`pjit`/`closed_call`) counts as its body only, so that writing a helper
with or without jit changes nothing. JAX's `make_jaxpr(grad(f))` keeps
dead equations (printed `_:`); the column "jax dce" is after JAX's own
dead-code elimination (`pe.dce_jaxpr`), for reference.

With --time it also times eager `funcad.grad(f)(*args)` with the linear
jaxpr of linearize used as is and optimised before the backward pass (the
reason eager grad does not optimise: it does not pay, see the closing note).
"""
from __future__ import annotations

import sys
import time

import numpy as np

from _timing import best_of

import funcad
import funcad.numpy as fnp
from funcad.transforms.passes import count_eqns

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
from jax.extend import core as jex_core

jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(0)
X, Y = rng.normal(size=(8, 5)), rng.normal(size=(8, 3))
PARAMS = (rng.normal(size=(5, 16)), rng.normal(size=16), rng.normal(size=(16, 3)), rng.normal(size=3))
V = rng.normal(size=7)
M = rng.normal(size=(4, 6))
LABELS = np.eye(6)[rng.integers(0, 6, 4)]
LOGX, LOGY = rng.normal(size=(10, 3)), np.sign(rng.normal(size=10))
Q, K, VV = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))


def suite(np_):
    """The benchmark functions written once against a NumPy-like namespace."""
    lse = fnp.logsumexp if np_ is fnp else jss.logsumexp

    def mlp_loss(params):
        w1, b1, w2, b2 = params
        h = np_.tanh(X @ w1 + b1)
        return np_.mean((h @ w2 + b2 - Y) ** 2)

    def logsumexp(x):
        return lse(x)

    def softmax_xent(logits):
        logp = logits - lse(logits, axis=-1, keepdims=True)
        return -np_.mean(np_.sum(LABELS * logp, axis=-1))

    def rosenbrock(x):
        return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    def l2_norm(x):
        return np_.linalg.norm(x)

    def variance(x):
        return np_.var(x)

    def slicing(x):
        return np_.sum(x[1:] * x[:-1]) + x[0] ** 2 + np_.sum(x[::2])

    def relu_where(x):
        return np_.sum(np_.where(x > 0, x, 0.0) ** 2)

    def sin_cos(x):
        return np_.sum(np_.sin(x) * np_.cos(x))

    def logistic_regression(w):
        return np_.mean(np_.log1p(np_.exp(-LOGY * (LOGX @ w))))

    def attention(q):
        s = q @ K.T / np_.sqrt(3.0)
        e = np_.exp(s - np_.max(s, axis=-1, keepdims=True))
        return np_.sum((e / np_.sum(e, axis=-1, keepdims=True)) @ VV)

    def layer_norm(x):
        mu = np_.mean(x, axis=-1, keepdims=True)
        var = np_.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return np_.sum(((x - mu) / np_.sqrt(var + 1e-5)) ** 2 * np_.arange(6.0))

    def huber(x):
        r = np_.abs(x)
        return np_.sum(np_.where(r < 1.0, 0.5 * x ** 2, r - 0.5))

    def horner(x):
        return np_.sum(((3.0 * x + 2.0) * x + 1.0) * x)

    def gram_frobenius(a):
        return np_.sum((a @ a.T) ** 2)

    return [
        ("mlp_loss", mlp_loss, (PARAMS,)), ("logsumexp", logsumexp, (V,)),
        ("softmax_xent", softmax_xent, (M,)), ("rosenbrock", rosenbrock, (V,)),
        ("l2_norm", l2_norm, (V,)), ("variance", variance, (V,)), ("slicing", slicing, (V,)),
        ("relu_where", relu_where, (V,)), ("sin_cos", sin_cos, (V,)),
        ("logistic_regr", logistic_regression, (np.ones(3),)), ("attention", attention, (Q,)),
        ("layer_norm", layer_norm, (M,)), ("huber", huber, (V * 2,)), ("horner", horner, (V,)),
        ("gram_frobenius", gram_frobenius, (M,)),
    ]


_JAX_CALLS = {"pjit", "jit", "closed_call", "core_call"}


def count_jax(jaxpr) -> int:
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    n = 0
    for eqn in jaxpr.eqns:
        n += 0 if eqn.primitive.name in _JAX_CALLS else 1
        for v in eqn.params.values():
            for x in (v if isinstance(v, (tuple, list)) else (v,)):
                if isinstance(x, (jex_core.ClosedJaxpr, jex_core.Jaxpr)):
                    n += count_jax(x)
    return n


def jax_dce(closed):
    from jax._src.interpreters import partial_eval as pe
    jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
    return jaxpr


def check_same(a, b):
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and np.array_equal(x, y), "optimised jaxpr gave other numbers"


def counts():
    rows = []
    for (name, f, args), (_, jf, _) in zip(suite(fnp), suite(jnp)):
        j = funcad.make_jaxpr(funcad.grad(f))(*args)
        o = funcad.optimize(j)
        flat = jax.tree_util.tree_leaves(args)
        check_same(j(*flat), o(*flat))
        jj = jax.make_jaxpr(jax.grad(jf))(*args)
        got = np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(funcad.grad(f)(*args))])
        want = np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(jax.grad(jf)(*args))])
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        rows.append((name, count_eqns(j), count_eqns(o), count_jax(jj), count_jax(jax_dce(jj))))
    return rows


def timings(trials=15):
    """Eager grad, CPU milliseconds per call (best of `trials`, the two variants
    interleaved), with the linear jaxpr of linearize used as is and optimised
    before the backward pass. Each suite function runs on its small inputs and,
    where it takes one vector, on a vector of a million elements."""
    from funcad.transforms import api, passes
    orig = api.linearize_flat

    def optimised(fun, primals):
        p, linear = orig(fun, primals)
        return p, passes.optimize(linear)

    big = np.random.default_rng(1).normal(size=1_000_000)
    cases = [(name, f, args) for name, f, args in suite(fnp)]
    cases += [(name + " 1e6", f, (big,)) for name, f, args in suite(fnp)
              if isinstance(args[0], np.ndarray) and args[0].shape == V.shape]
    def run_with(lin, g, args):
        api.linearize_flat = lin
        g(*args)

    rows = []
    for name, f, args in cases:
        g = funcad.grad(f)
        try:
            best = best_of([lambda: run_with(orig, g, args), lambda: run_with(optimised, g, args)],
                           repeat=trials, timer=time.process_time, warmup=False)
        finally:
            api.linearize_flat = orig
        rows.append((name, best[0] * 1e3, best[1] * 1e3))
    return rows


def main():
    rows = counts()
    print(f"{'function':16} {'funcad':>7} {'optimized':>9} {'jax':>5} {'jax dce':>8}")
    for r in rows:
        print(f"{r[0]:16} {r[1]:7d} {r[2]:9d} {r[3]:5d} {r[4]:8d}")
    tot = [sum(r[i] for r in rows) for i in range(1, 5)]
    print(f"{'total':16} {tot[0]:7d} {tot[1]:9d} {tot[2]:5d} {tot[3]:8d}")
    if "--time" in sys.argv:
        print(f"\neager grad, CPU ms/call   {'as is':>8} {'optimized':>10}")
        for name, a, b in timings():
            print(f"{name:24} {a:8.2f} {b:10.2f}")


if __name__ == "__main__":
    main()
