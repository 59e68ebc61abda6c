"""Eager control flow reuses a body's trace, as JAX's does: called again with the same
function at the same types, cond, while_loop, fori_loop and scan trace it once (so the
compiled program is found again without lowering), and, as in JAX, read its globals at
that first trace. New types, or a transformation around the call, trace it anew.
"""
from __future__ import annotations

import numpy as np
import pytest

import funcad
from funcad import lax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)


def _counted(fn):
    calls = []

    def body(*args):
        calls.append(1)
        return fn(*args)
    return body, calls


# (name, the body, how to call it): each call passes the same body function
PROGRAMS = [
    ("scan", lambda c, _: (c * 2.0 + 1.0, c), lambda L, f, x: L.scan(f, x, None, length=3)),
    ("cond", lambda v: v * 2.0 + 1.0, lambda L, f, x: L.cond(x > 0, f, f, x)),
    ("while_loop", lambda v: v * 2.0 + 1.0, lambda L, f, x: L.while_loop(f.cond, f, x)),
]


@pytest.mark.parametrize("name,fn,run", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_traces_counted_as_jax(name, fn, run):
    body_f, n_f = _counted(fn)
    body_j, n_j = _counted(fn)
    body_f.cond = body_j.cond = lambda v: v < 10.0
    for x in (np.float64(0.5), np.float64(0.25), np.float64(0.75)):
        for a, b in zip(jax.tree_util.tree_leaves(run(lax, body_f, x)),
                        jax.tree_util.tree_leaves(run(jax.lax, body_j, x))):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    assert len(n_f) == len(n_j) == 1
    run(lax, body_f, np.float32(0.5))  # new types: traced again
    run(jax.lax, body_j, np.float32(0.5))
    assert len(n_f) == len(n_j) == 2


def test_globals_read_at_first_trace_as_in_jax():
    scale = {"v": 2.0}

    def body(c, _):
        return c * scale["v"], c

    x = np.float64(1.0)
    first = lax.scan(body, x, None, length=2)[0], jax.lax.scan(body, x, None, length=2)[0]
    scale["v"] = 3.0
    again = lax.scan(body, x, None, length=2)[0], jax.lax.scan(body, x, None, length=2)[0]
    assert float(first[0]) == float(first[1]) == 4.0
    assert float(again[0]) == float(again[1]) == 4.0  # the cached trace, in both


def test_fori_loop_body_traced_once_and_kept_alive_by_caller_only():
    import gc
    import weakref
    n = []

    def body(i, v):
        n.append(1)
        return v * 0.5 + 1.0

    for _ in range(3):
        np.testing.assert_allclose(float(lax.fori_loop(0, 4, body, 1.0)),
                                   float(jax.lax.fori_loop(0, 4, body, 1.0)), rtol=1e-12)
    assert len(n) == 2  # once for funcad, once for JAX
    ref = weakref.ref(body)
    del body
    gc.collect()
    assert ref() is None  # the caches hold the body weakly


def test_under_grad_traced_per_call_and_derivative_right():
    n = []

    def body(c, x):
        n.append(1)
        return c * x, c

    xs = np.array([1.5, 2.0, 0.5])
    f = lambda w: lax.scan(body, w, xs)[0]  # noqa: E731
    for _ in range(2):
        np.testing.assert_allclose(float(funcad.grad(f)(1.3)), float(np.prod(xs)), rtol=1e-12)
    assert len(n) >= 2  # the outer trace differs per call: no stale tracers reused
