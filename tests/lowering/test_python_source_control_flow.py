"""to_python writes control flow (cond, while, scan) and calls with constants as
nested functions and Python if/while/for over NumPy; the source runs and
matches the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import lax
from funcad.core.trace import eval_jaxpr


def _round_trip(fun, *args):
    closed = funcad.make_jaxpr(fun)(*args)
    src = funcad.to_python(closed)
    ns: dict = {}
    exec(compile(src, "<to_python>", "exec"), ns)
    got = ns["f"](*closed.consts, *args)
    got = got if isinstance(got, tuple) else (got,)
    want = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)
    return src


X = np.linspace(-1.0, 2.0, 4)


@pytest.mark.parametrize("x", [X, -X])
def test_cond_picks_the_branch(x):
    src = _round_trip(lambda x: lax.cond(x.sum() > 0, lambda z: z * 2.0, lambda z: -z, x), x)
    assert "def _cond0_branch0(" in src and "np.clip(" in src


def test_switch_clamps_the_index_as_the_impl_does():
    branches = [lambda z: z + 1.0, lambda z: z * 3.0, fnp.sin]
    for i in (-2, 0, 1, 2, 7):
        src = _round_trip(lambda i, x: lax.switch(i, branches, x), np.int32(i), X)
    assert "_cond0_branch2" in src


def test_while_loop_is_a_python_while():
    f = lambda x: lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] + 1.0, c[1] * 1.1), (0.5, x))
    src = _round_trip(f, X)
    assert "while _while0_cond(*_while0_carry):" in src


def test_fori_loop_and_reverse_scan_with_stacked_outputs():
    def f(x):
        k = lax.fori_loop(0, 3, lambda i, c: c + fnp.sin(c) * i, x)
        return lax.scan(lambda c, xi: (c + xi, (c * xi, xi > 0)), 0.0, k, reverse=True)
    src = _round_trip(f, X)
    assert "range(3, -1, -1)" in src and ".reverse()" in src


def test_nested_scans_and_a_cond_inside_a_loop():
    def f(x):
        def outer(c, row):
            inner = lax.scan(lambda a, v: (a + lax.cond(v > 0, lambda u: u, lambda u: -u, v), a), c, row)
            return inner[0], inner[1].sum()
        return lax.scan(outer, 0.0, x.reshape(2, 2))
    _round_trip(f, X)


def test_zero_length_scan():
    _round_trip(lambda x: lax.scan(lambda c, xi: (c + xi, xi * 2.0), 1.0, x[:0]), X)


def test_constants_inside_bodies_become_module_arrays():
    w = np.array([1.5, -2.0, np.nan, np.inf])
    v = np.arange(4.0)

    def f(x):
        y = lax.cond(x[0] > 0, lambda z: z * v, lambda z: z - v, x)
        return funcad.jit(lambda z: fnp.where(fnp.isfinite(w), z * w, 0.0))(y)
    src = _round_trip(f, X)
    assert "_const0 = np.array([0.0, 1.0, 2.0, 3.0], dtype=np.float64)" in src
    assert "np.frombuffer(bytes.fromhex(" in src  # nan/inf rebuilt exactly
    assert "def _jit" in src  # a call with constants stays a call


def test_backward_pass_through_loops_runs():
    def loss(x):
        c, ys = lax.scan(lambda c, xi: (c * fnp.cos(xi), c + xi ** 2), 1.0, x)
        w = lax.while_loop(lambda s: s[0] < 3.0, lambda s: (s[0] + 1.0, s[1] * 0.5 + fnp.sin(s[1])),
                           (0.0, ys), max_steps=5)
        return c + w[1].sum()
    closed = funcad.make_jaxpr(funcad.grad(loss))(X)
    ns: dict = {}
    exec(funcad.to_python(closed), ns)
    np.testing.assert_allclose(ns["f"](*closed.consts, X), funcad.grad(loss)(X), rtol=1e-12)


def test_names_do_not_collide_with_the_loop_variables():
    # Enough variables that the namer reaches `i`, `_y`-free names only.
    def f(x):
        for _ in range(10):
            x = fnp.sin(x)
        return lax.scan(lambda c, xi: (c + xi, c), x[0], x)
    src = _round_trip(f, X)
    assert "for _scan0_i in range(4):" in src
