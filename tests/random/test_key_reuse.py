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
def cond_closure_concrete_key_ok(L, R, lax):
    k = R.key(0)
    L.jit(lambda p: lax.cond(p, lambda: R.normal(k), lambda: R.uniform(k)))(True)
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


# ---------------------------------------------------------- beyond the corpus ----

def test_option_names_scope_and_error_class():
    assert funcad.config.debug_key_reuse is False
    assert issubclass(funcad.errors.KeyReuseError, funcad.errors.JAXTypeError)
    with funcad.debug_key_reuse(True):
        assert funcad.config.debug_key_reuse is True
        k = fr.key(0)
        fr.uniform(k)
        with pytest.raises(funcad.errors.KeyReuseError, match="jit-compiled function at index 0"):
            fr.uniform(k)
    assert funcad.config.debug_key_reuse is False
    fr.uniform(k)  # off: nothing is checked
    funcad.config.update("jax_debug_key_reuse", True)
    try:
        with pytest.raises(TypeError, match="Previously-consumed key passed to random_split"):
            fr.split(k)
    finally:
        funcad.config.update("jax_debug_key_reuse", False)


def test_environment_variable():
    import os
    import subprocess
    import sys
    code = ("import funcad, funcad.random as fr\n"
            "k = fr.key(0); fr.normal(k)\n"
            "try:\n    fr.normal(k)\nexcept funcad.errors.KeyReuseError as e:\n    print(e)\n")
    env = dict(os.environ, FUNCAD_DEBUG_KEY_REUSE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "Previously-consumed key passed to jit-compiled function at index 0"


def test_values_unchanged_and_raw_keys_untracked():
    f = funcad.jit(lambda k: fr.normal(k, (3,)) + fr.uniform(fr.split(k)[1], (3,)))
    k = fr.key(3)
    off = np.asarray(f(k))
    with funcad.debug_key_reuse(True):
        on = np.asarray(funcad.jit(lambda k: fr.normal(k, (3,)))(fr.key(3)))
        raw = fr.PRNGKey(0)
        a, b = fr.normal(raw, (2,)), fr.normal(raw, (2,))  # raw keys are not tracked (as JAX's)
    np.testing.assert_array_equal(on, np.asarray(fr.normal(fr.key(3), (3,))))
    np.testing.assert_array_equal(a, b)
    assert off.shape == (3,)


def test_jaxpr_shows_the_markers():
    with funcad.debug_key_reuse(True):
        text = str(funcad.make_jaxpr(lambda k: fr.normal(fr.clone(k)))(fr.key(0)))
    assert "random_clone" in text and "random_consume" in text
    text = str(funcad.make_jaxpr(lambda k: fr.normal(k))(fr.key(0)))
    assert "random_consume" not in text  # off: the program is unchanged


def test_masks_from_indexing_and_vmap():
    with funcad.debug_key_reuse(True):
        ks = fr.split(fr.key(0), 4)
        fr.normal(ks[1])
        fr.normal(ks[2])
        np.testing.assert_array_equal(ks._consumed, [False, True, True, False])
        with pytest.raises(funcad.errors.KeyReuseError, match="passed to slice at index 0"):
            ks[2]
        funcad.vmap(fr.normal)(ks[::3])  # keys 0 and 3, batched
        assert ks._consumed is True
        # A jitted function that consumes one row of its argument marks only that row.
        kk = fr.split(fr.key(1), 3)
        funcad.jit(lambda ks: fr.normal(ks[0]))(kk)
        np.testing.assert_array_equal(kk._consumed, [True, False, False])
        funcad.jit(lambda ks: fr.normal(ks[1]))(kk)
        with pytest.raises(funcad.errors.KeyReuseError, match="jit-compiled function at index 0"):
            funcad.jit(lambda ks: fr.normal(ks[1]) + fr.normal(ks[2]))(kk)


def test_pytree_arguments_and_outputs():
    @funcad.jit
    def step(state):
        k, sub = fr.split(state["key"])
        return {"key": k, "x": state["x"] + fr.normal(sub)}
    with funcad.debug_key_reuse(True):
        s0 = {"key": fr.key(0), "x": 0.0}
        s1 = step(s0)
        s2 = step(s1)  # the new key is fresh
        assert s2["key"]._consumed is False and s1["key"]._consumed is True
        with pytest.raises(funcad.errors.KeyReuseError, match="at index 0"):
            step(s0)


def test_closed_over_key_consumed_before_the_call():
    with funcad.debug_key_reuse(True):
        k = fr.key(0)
        fr.normal(k)
        with pytest.raises(funcad.errors.KeyReuseError, match="Previously-consumed key passed to"):
            funcad.jit(lambda x: x + fr.normal(k))(1.0)
