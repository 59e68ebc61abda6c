"""funcad.debug_key_reuse against JAX's: a corpus of programs (eager, jit, cond, scan,
while, vmap, split/fold_in/clone/wrap patterns) run under both with the option on; each
must raise KeyReuseError with JAX's message (its first line), or not raise, as JAX does."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.random as fr

jax = pytest.importorskip("jax")
import jax.random as jr  # noqa: E402

PROGRAMS = {}


def prog(f):
    PROGRAMS[f.__name__] = f
    return f


@prog
def eager_normal_twice(L, R, lax):
    k = R.key(0); R.normal(k); R.normal(k)
@prog
def eager_split_twice(L, R, lax):
    k = R.key(0); R.split(k); R.split(k)
@prog
def eager_split_then_normal(L, R, lax):
    k = R.key(0); R.split(k); R.normal(k)
@prog
def eager_fold_in_twice(L, R, lax):
    k = R.key(0); R.fold_in(k, 1); R.fold_in(k, 2)
@prog
def eager_fold_in_then_normal(L, R, lax):
    k = R.key(0); R.fold_in(k, 1); R.normal(k)
@prog
def eager_bits_twice(L, R, lax):
    k = R.key(0); R.bits(k); R.bits(k)
@prog
def eager_uniform_then_bits(L, R, lax):
    k = R.key(0); R.uniform(k); R.bits(k)
@prog
def eager_clone_ok(L, R, lax):
    k = R.key(0); R.normal(R.clone(k)); R.normal(k)
@prog
def eager_clone_consumed(L, R, lax):
    k = R.key(0); R.normal(k); R.normal(R.clone(k))
@prog
def eager_key_data_roundtrip(L, R, lax):
    k = R.key(0); R.normal(k); R.normal(R.wrap_key_data(R.key_data(k)))
@prog
def eager_key_data_of_consumed(L, R, lax):
    k = R.key(0); R.normal(k); R.key_data(k)
@prog
def eager_split_children(L, R, lax):
    k1, k2 = R.split(R.key(0)); R.normal(k1); R.normal(k2); R.normal(k1)
@prog
def eager_index_twice(L, R, lax):
    ks = R.split(R.key(0), 3); R.normal(ks[0]); R.normal(ks[0])
@prog
def eager_index_other(L, R, lax):
    ks = R.split(R.key(0), 3); R.normal(ks[0]); R.normal(ks[1])
@prog
def eager_batched_normal(L, R, lax):
    ks = R.split(R.key(0), 3); R.normal(ks)
@prog
def eager_vmap_twice(L, R, lax):
    ks = R.split(R.key(0), 3); L.vmap(R.normal)(ks); L.vmap(R.normal)(ks)
@prog
def eager_vmap_then_index(L, R, lax):
    ks = R.split(R.key(0), 3); L.vmap(R.normal)(ks); R.normal(ks[1])
@prog
def eager_raw_key_untracked(L, R, lax):
    k = R.PRNGKey(0); R.normal(k); R.normal(k)
@prog
def jit_reuse_inside(L, R, lax):
    @L.jit
    def f(k): return R.normal(k) + R.normal(k)
    f(R.key(0))
@prog
def jit_split_inside_ok(L, R, lax):
    @L.jit
    def f(k):
        a, b = R.split(k); return R.normal(a) + R.normal(b)
    f(R.key(0))
@prog
def jit_consumes_arg_then_reuse(L, R, lax):
    f = L.jit(lambda k: R.normal(k))
    k = R.key(0); f(k); f(k)
@prog
def jit_passthrough_no_consume(L, R, lax):
    f = L.jit(lambda k: k)
    k = R.key(0); f(k); f(k); R.normal(k); 
@prog
def jit_passthrough_consumed_out(L, R, lax):
    f = L.jit(lambda k: k)
    k = R.key(0); R.normal(k); k2 = f(k); R.normal(k2)
@prog
def jit_closure_key(L, R, lax):
    k = R.key(0)
    f = L.jit(lambda x: x + R.normal(k))
    f(1.0); f(2.0)
@prog
def jit_consumed_into_nonconsuming(L, R, lax):
    f = L.jit(lambda k: R.key_data(k))
    k = R.key(0); R.normal(k); f(k)
@prog
def cond_both_branches_ok(L, R, lax):
    @L.jit
    def f(k, p):
        return lax.cond(p, lambda k: R.normal(k), lambda k: R.uniform(k), k)
    f(R.key(0), True)
@prog
def cond_then_reuse(L, R, lax):
    @L.jit
    def f(k, p):
        x = lax.cond(p, lambda k: R.normal(k), lambda k: 0.0, k)
        return x + R.normal(k)
    f(R.key(0), True)
@prog
def cond_closure_both_ok(L, R, lax):
    @L.jit
    def f(k, p):
        return lax.cond(p, lambda: R.normal(k), lambda: R.uniform(k))
    f(R.key(0), True)
@prog
def cond_branch_reuse(L, R, lax):
    @L.jit
    def f(k, p):
        return lax.cond(p, lambda k: R.normal(k) + R.normal(k), lambda k: 0.0, k)
    f(R.key(0), True)
@prog
def scan_closure_key(L, R, lax):
    @L.jit
    def f(k):
        return lax.scan(lambda c, _: (c + R.normal(k), None), 0.0, None, length=3)[0]
    f(R.key(0))
@prog
def scan_carry_split_ok(L, R, lax):
    @L.jit
    def f(k):
        def body(k, _):
            k, sub = R.split(k); return k, R.normal(sub)
        return lax.scan(body, k, None, length=3)[1]
    f(R.key(0))
@prog
def scan_carry_unsplit(L, R, lax):
    @L.jit
    def f(k):
        return lax.scan(lambda k, _: (k, R.normal(k)), k, None, length=3)[1]
    f(R.key(0))
@prog
def scan_xs_keys_ok(L, R, lax):
    @L.jit
    def f(ks):
        return lax.scan(lambda c, k: (c + R.normal(k), None), 0.0, ks)[0]
    f(R.split(R.key(0), 3))
@prog
def while_closure_key(L, R, lax):
    @L.jit
    def f(k):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + R.normal(k)), (0, 0.0))
    f(R.key(0))
@prog
def while_carry_split_ok(L, R, lax):
    @L.jit
    def f(k):
        def body(c):
            i, k, x = c; k, s = R.split(k); return i + 1, k, x + R.normal(s)
        return lax.while_loop(lambda c: c[0] < 3, body, (0, k, 0.0))
    f(R.key(0))
@prog
def fori_carry_unsplit(L, R, lax):
    @L.jit
    def f(k):
        return lax.fori_loop(0, 3, lambda i, c: (c[0], c[1] + R.normal(c[0])), (k, 0.0))
    f(R.key(0))
@prog
def vmap_inside_jit_reuse(L, R, lax):
    @L.jit
    def f(ks):
        return L.vmap(lambda k: R.normal(k) + R.normal(k))(ks)
    f(R.split(R.key(0), 2))
@prog
def jit_index_reuse(L, R, lax):
    @L.jit
    def f(ks):
        return R.normal(ks[0]) + R.normal(ks[0])
    f(R.split(R.key(0), 2))
@prog
def jit_index_distinct_ok(L, R, lax):
    @L.jit
    def f(ks):
        return R.normal(ks[0]) + R.normal(ks[1])
    f(R.split(R.key(0), 2))
@prog
def jit_fold_in_twice(L, R, lax):
    @L.jit
    def f(k):
        return R.normal(R.fold_in(k, 1)) + R.normal(R.fold_in(k, 2))
    f(R.key(0))
@prog
def jit_clone_ok(L, R, lax):
    @L.jit
    def f(k):
        return R.normal(R.clone(k)) + R.normal(k)
    f(R.key(0))
@prog
def jit_wrap_unwrap(L, R, lax):
    @L.jit
    def f(k):
        a = R.normal(k)
        return a + R.normal(R.wrap_key_data(R.key_data(k)))
    f(R.key(0))
@prog
def nested_jit_reuse(L, R, lax):
    g = L.jit(lambda k: R.normal(k))
    @L.jit
    def f(k): return g(k) + g(k)
    f(R.key(0))
@prog
def grad_reuse(L, R, lax):
    def f(x, k): return x * R.normal(k) + x * R.normal(k)
    L.grad(f)(1.0, R.key(0))
@prog
def jit_split_twice(L, R, lax):
    @L.jit
    def f(k):
        a = R.split(k); b = R.split(k); return a, b
    f(R.key(0))
@prog
def jit_bits_reuse(L, R, lax):
    @L.jit
    def f(k):
        return R.bits(k), R.uniform(k)
    f(R.key(0))
@prog
def jit_returns_consumed_then_use(L, R, lax):
    f = L.jit(lambda k: (k, R.normal(k)))
    k2, _ = f(R.key(0)); R.normal(k2)
@prog
def jit_returns_split_fresh(L, R, lax):
    f = L.jit(lambda k: R.split(k))
    ks = f(R.key(0)); R.normal(ks[0])
@prog
def eager_permutation_twice(L, R, lax):
    k = R.key(0); R.permutation(k, 5); R.permutation(k, 5)
@prog
def eager_gamma_twice(L, R, lax):
    k = R.key(0); R.gamma(k, 2.0); R.gamma(k, 2.0)


def _outcome(lib, fn):
    L, R = (jax, jr) if lib == "jax" else (funcad, fr)
    with L.debug_key_reuse(True):
        try:
            fn(L, R, L.lax)
        except Exception as e:  # the type and first line are compared
            return f"{type(e).__name__}: {str(e).splitlines()[0]}".replace("jax.", "funcad.")
    return None


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_as_jax(name):
    expected = _outcome("jax", PROGRAMS[name])
    assert _outcome("funcad", PROGRAMS[name]) == expected
