"""funcad.debug.callback and funcad.experimental.io_callback against JAX's: the calls each
program makes (arguments, count, order) eagerly, under jit, vmap, grad/jvp/hessian and in
scan/fori_loop/while_loop/cond bodies, that jit and the optimiser keep them, the errors, and
effects_barrier."""
import threading

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.experimental import io_callback as f_io_callback

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)
from jax.experimental import io_callback as j_io_callback  # noqa: E402


class Lib:
    """One library's names, so each program is written once for both."""

    def __init__(self, mod, np_mod, io_callback):
        self.m, self.np, self.io_callback, self.log = mod, np_mod, io_callback, []

    def cb(self, *args, **kwargs):
        """A debug callback: records its arguments as plain values (and their kinds)."""
        def plain(x):
            return x if isinstance(x, str) else np.asarray(x).tolist()
        self.log.append(("cb", [plain(a) for a in args], {k: plain(v) for k, v in kwargs.items()}))

    def host(self, x):
        """An io callback: records its argument and returns it doubled."""
        self.log.append(("io", np.asarray(x).tolist()))
        return np.asarray(x) * 2

    def io(self, x, ordered=False):
        spec = self.m.ShapeDtypeStruct(np.shape(x), np.float64)
        return self.io_callback(self.host, spec, x, ordered=ordered)

    def f(self, x):
        self.m.debug.callback(self.cb, x, y=x * 2)
        return self.np.sin(x)


def libs():
    return (Lib(funcad, fnp, f_io_callback), Lib(jax, jnp, j_io_callback))


X = np.array([1.0, 2.0])

PROGRAMS = {
    "eager": lambda L: L.f(1.0),
    "jit": lambda L: L.m.jit(L.f)(1.0),
    "vmap": lambda L: L.m.vmap(L.f)(X),
    "jit_vmap": lambda L: L.m.jit(L.m.vmap(L.f))(X),
    "vmap_in_axes_none": lambda L: L.m.vmap(
        lambda a, b: L.m.debug.callback(L.cb, a, b) or a, in_axes=(0, None))(X, 3.0),
    "nested_vmap": lambda L: L.m.vmap(L.m.vmap(L.f))(np.arange(6.0).reshape(2, 3)),
    "nested_vmap_axes": lambda L: L.m.jit(L.m.vmap(L.m.vmap(
        lambda a, b, c: L.m.debug.callback(L.cb, a, b, c) or a, in_axes=(0, None, 0)), in_axes=(1, 0, None)))(
        np.arange(6.0).reshape(3, 2), np.array([10.0, 20.0]), np.array([7.0, 8.0, 9.0])),
    "vmap3": lambda L: L.m.vmap(L.m.vmap(L.m.vmap(L.f)))(np.arange(8.0).reshape(2, 2, 2)),
    "grad": lambda L: L.m.grad(L.f)(1.0),
    "jit_grad": lambda L: L.m.jit(L.m.grad(L.f))(1.0),
    "grad_jit": lambda L: L.m.grad(L.m.jit(L.f))(1.0),
    "jvp": lambda L: L.m.jvp(L.f, (1.0,), (1.0,)),
    "vjp": lambda L: L.m.vjp(L.f, 1.0)[0],
    "linearize": lambda L: L.m.linearize(L.f, 1.0)[1](2.0),
    "hessian": lambda L: L.m.hessian(L.f)(1.0),
    "vmap_grad": lambda L: L.m.vmap(L.m.grad(L.f))(X),
    "unused_in_grad": lambda L: L.m.grad(lambda x: (L.m.debug.callback(L.cb, x * 3), x * x)[1])(1.0),
    "dead_under_jit": lambda L: L.m.jit(lambda x: (L.m.debug.callback(L.cb, x), x)[1])(1.0),
    "scan": lambda L: L.m.lax.scan(lambda c, xi: (L.f(c + xi), None), 0.0, X),
    "jit_scan": lambda L: L.m.jit(lambda x: L.m.lax.scan(lambda c, xi: (L.f(c + xi), None), 0.0, x))(X),
    "grad_scan": lambda L: L.m.grad(
        lambda x: L.m.lax.scan(lambda c, xi: (L.f(c + xi), None), x, x * L.np.ones(2))[0])(0.5),
    "fori": lambda L: L.m.lax.fori_loop(0, 3, lambda i, c: L.f(c) + i, 0.5),
    "jit_fori": lambda L: L.m.jit(lambda c: L.m.lax.fori_loop(0, 3, lambda i, c: L.f(c) + i, c))(0.5),
    "jit_while": lambda L: L.m.jit(lambda x: L.m.lax.while_loop(
        lambda c: c < 3, lambda c: (L.m.debug.callback(L.cb, c), c + 1)[1], x))(0),
    "jit_cond": lambda L: L.m.jit(lambda p, x: L.m.lax.cond(p, L.f, lambda x: x, x))(True, 1.0),
    "ordered_jit": lambda L: L.m.jit(
        lambda x: [L.m.debug.callback(L.cb, x + i, ordered=True) for i in range(6)] and x)(1.0),
    "unordered_jit": lambda L: L.m.jit(
        lambda x: [L.m.debug.callback(L.cb, x * i) for i in range(6)] and x)(1.0),
    "ordered_vmap": lambda L: L.m.vmap(lambda x: L.m.debug.callback(L.cb, x, ordered=True) or x)(X),
    "two_call_form": lambda L: L.m.jit(lambda x: L.m.debug.callback(ordered=True)(L.cb, x, z=x))(1.0),
    "kwargs_only": lambda L: L.m.jit(lambda x: L.m.debug.callback(L.cb, y=x))(1.0),
    "static_args": lambda L: L.m.jit(lambda x: L.m.debug.callback(L.cb, x, 3, "s"))(1.0),
    "partitioned": lambda L: L.m.jit(lambda x: L.m.debug.callback(L.cb, x, partitioned=True))(1.0),
    "callbacks_around_loop": lambda L: L.m.jit(lambda x: (
        L.m.debug.callback(L.cb, x, ordered=True),
        L.m.lax.fori_loop(0, 2, lambda i, c: (L.m.debug.callback(L.cb, c * 10, ordered=True), c + 1)[1], x),
        L.m.debug.callback(L.cb, -x, ordered=True))[1])(1.0),
    # io_callback
    "io_eager": lambda L: L.io(1.0),
    "io_jit": lambda L: L.m.jit(L.io)(1.0),
    "io_dead_under_jit": lambda L: L.m.jit(lambda x: (L.io(x), x)[1])(1.0),
    "io_vmap": lambda L: L.m.vmap(L.io)(X),
    "io_nested_vmap": lambda L: L.m.vmap(L.m.vmap(L.io))(np.arange(6.0).reshape(2, 3)),
    "io_jit_nested_vmap_axes": lambda L: L.m.jit(L.m.vmap(L.m.vmap(
        lambda a, b: L.io_callback(lambda a, b: (L.log.append(("ab", a.tolist(), b.tolist())), a * b)[1],
                                   L.m.ShapeDtypeStruct((2,), np.float64), a, b),
        in_axes=(0, None)), in_axes=(None, 1)))(np.arange(6.0).reshape(3, 2), np.ones((2, 4))),
    "io_jit_vmap": lambda L: L.m.jit(L.m.vmap(L.io))(X),
    "io_grad_stop_gradient": lambda L: L.m.grad(lambda x: L.io(L.m.lax.stop_gradient(x)) + x)(1.0),
    "io_ordered_jit": lambda L: L.m.jit(lambda x: [L.io(x + i, True) for i in range(4)][-1])(1.0),
    "io_scan": lambda L: L.m.lax.scan(lambda c, xi: (L.io(c + xi), None), 0.0, X),
    "io_jit_scan_ordered": lambda L: L.m.jit(
        lambda x: L.m.lax.scan(lambda c, xi: (L.io(c + xi, True), None), 0.0, x))(X),
    "io_fori": lambda L: L.m.lax.fori_loop(0, 3, lambda i, c: L.io(c), 0.5),
    "io_jit_fori": lambda L: L.m.jit(lambda c: L.m.lax.fori_loop(0, 3, lambda i, c: L.io(c), c))(0.5),
    "io_and_debug_interleaved": lambda L: L.m.jit(lambda x: L.io(
        (L.m.debug.callback(L.cb, x), L.io(x))[1] + (L.m.debug.callback(L.cb, -x), 1.0)[1]))(1.0),
    "io_none_result": lambda L: L.m.jit(
        lambda x: L.io_callback(lambda v: L.log.append(("none", np.asarray(v).tolist())), None, x))(4.0),
    "io_kwargs_pytree": lambda L: L.m.jit(lambda x: L.io_callback(
        lambda d, s: (L.log.append(("kw", np.asarray(d["q"]).tolist(), float(s))),
                      {"a": np.asarray(d["p"] * s), "b": (np.asarray(d["q"]),)})[1],
        {"a": L.m.ShapeDtypeStruct((), np.float64), "b": (L.m.ShapeDtypeStruct((2,), np.float64),)},
        {"p": x, "q": x * L.np.ones(2)}, s=3.0))(2.0),
}


def _outcome(L, program):
    out = program(L)
    leaves = [np.asarray(v).tolist() for v in (jax.tree_util.tree_leaves(out) if out is not None else [])]
    return leaves, L.log


# Compared with JAX 0.12 (the newest supported): jax 0.6 has no two-call form and does not
# call back from a scan body under grad; and jaxlib 0.6's XLA does not keep the order of
# callbacks across a loop's boundary (funcad orders them with an optimization_barrier on
# the block's token, which XLA honours since then; within one block the order holds there too).
NEEDS_NEW_JAX = {"two_call_form", "grad_scan", "callbacks_around_loop"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_calls_match_jax(name):
    if name in NEEDS_NEW_JAX and jax.__version_info__ < (0, 12):
        pytest.skip(f"jax {jax.__version__} differs from the JAX 0.12 behaviour funcad follows")
    ours, theirs = libs()
    our_out, our_log = _outcome(ours, PROGRAMS[name])
    their_out, their_log = _outcome(theirs, PROGRAMS[name])
    if name.startswith("unordered"):  # JAX may reorder unordered callbacks (and does here)
        our_log, their_log = sorted(our_log), sorted(their_log)
    assert our_log == their_log
    assert our_log, "the program made no call at all"
    assert len(our_out) == len(their_out)
    for a, b in zip(our_out, their_out):
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-14)


@pytest.mark.parametrize("name", ["io_grad", "io_jvp", "io_grad_of_unused", "io_vmap_ordered",
                                  "io_jit_vmap_ordered"])
def test_errors_match_jax(name):
    programs = {
        "io_grad": lambda L: L.m.grad(L.io)(1.0),
        "io_jvp": lambda L: L.m.jvp(L.io, (1.0,), (1.0,)),
        "io_grad_of_unused": lambda L: L.m.grad(lambda x: (L.io(x * 0.0), x * x)[1])(1.0),
        "io_vmap_ordered": lambda L: L.m.vmap(lambda x: L.io(x, True))(X),
        "io_jit_vmap_ordered": lambda L: L.m.jit(L.m.vmap(lambda x: L.io(x, True)))(X),
    }
    messages = []
    for L in libs():
        with pytest.raises(ValueError) as e:
            programs[name](L)
        messages.append(str(e.value))
        assert L.log == []
    assert messages[0].startswith(messages[1])  # funcad's adds the fix


def test_callbacks_receive_immutable_funcad_arrays_they_may_keep():
    kept = []
    f = funcad.jit(lambda x: funcad.debug.callback(kept.append, x * 2.0))
    for v in (1.0, 2.0, 3.0):
        f(np.full(3, v))
    assert [type(k) for k in kept] == [type(fnp.zeros(1))] * 3
    np.testing.assert_array_equal(np.stack(kept), [[2.0] * 3, [4.0] * 3, [6.0] * 3])
    with pytest.raises(TypeError, match="immutable"):
        kept[0][0] = 1.0
    assert funcad.debug.callback(lambda v: 5, 1.0) is None


def test_effects_stay_in_the_jaxpr_and_the_optimised_program():
    def f(x):
        funcad.debug.callback(lambda v: None, x * 2.0)
        funcad.experimental.io_callback(lambda v: v, funcad.ShapeDtypeStruct((), np.float64), x)
        return x
    jaxpr = funcad.make_jaxpr(f, optimize=True)(1.0)
    names = [e.prim.name for e in jaxpr.jaxpr.eqns]
    assert names.count("debug_callback") == 1 and names.count("io_callback") == 1 and "mul" in names


def test_calls_keep_program_order_in_one_block():
    log = []
    spec = funcad.ShapeDtypeStruct((), np.float64)

    def f(x):
        for i in range(20):  # independent calls: only their effects order them
            if i % 2:
                funcad.debug.callback(lambda v, i=i: log.append(i), x)
            else:
                funcad.experimental.io_callback(lambda v, i=i: (log.append(i), v)[1], spec, x)
        return x
    funcad.jit(f)(1.0)
    assert log == list(range(20))


def test_x64_off_callbacks_see_32_bit_values():
    seen = []
    with funcad.enable_x64(False):
        spec = funcad.ShapeDtypeStruct((), np.float32)
        out = funcad.jit(lambda x: (funcad.debug.callback(lambda v: seen.append(v.dtype), x),
                                    f_io_callback(lambda v: v * 2, spec, x))[1])(1.5)
        funcad.debug.callback(lambda v: seen.append(v.dtype), 2.0)
    assert seen == [np.float32, np.float32] and float(out) == 3.0 and out.dtype == np.float32


def test_errors():
    spec = funcad.ShapeDtypeStruct((2,), np.float64)
    with pytest.raises(TypeError, match="must be callable"):
        funcad.debug.callback(3, 1.0)
    with pytest.raises(TypeError, match="two-call form"):
        funcad.debug.callback(None, 1.0)
    with pytest.raises(TypeError, match="must be callable"):
        f_io_callback("f", spec, np.ones(2))
    with pytest.raises(ValueError, match="shape"):
        f_io_callback(lambda x: np.ones(3), spec, np.ones(2))
    with pytest.raises(TypeError, match="dtype"):
        f_io_callback(lambda x: np.ones(2, np.float32), spec, np.ones(2))
    with pytest.raises(Exception, match="shape"):
        funcad.jit(lambda x: f_io_callback(lambda v: np.ones(3), spec, x))(np.ones(2))
    with pytest.raises(TypeError, match="ShapeDtypeStruct"):
        f_io_callback(lambda x: x, 3, 1.0)
    with pytest.raises(ValueError, match="SingleDeviceSharding"):
        f_io_callback(lambda x: x, spec, np.ones(2), sharding="cpu")
    with pytest.raises(ZeroDivisionError):
        funcad.debug.callback(lambda v: 1 / 0, 1.0)


def test_effects_barrier_waits_for_callbacks_and_raises_their_errors():
    seen = []
    lock = threading.Lock()

    def record(x):
        with lock:
            seen.append(float(x))

    @funcad.jit
    def f(x):
        funcad.debug.callback(record, x)
        return x + 1.0

    outs = [f(float(i)) for i in range(5)]
    funcad.effects_barrier()
    assert seen == [0.0, 1.0, 2.0, 3.0, 4.0] and [float(o) for o in outs] == [1, 2, 3, 4, 5]
    funcad.effects_barrier()  # nothing pending: returns at once

    def bad(x):
        raise ValueError("boom")

    g = funcad.jit(lambda x: funcad.debug.callback(bad, x) or x)
    with pytest.raises(Exception, match="boom"):  # as JAX's CPU client: the call raises
        g(1.0)
        funcad.effects_barrier()
    funcad.effects_barrier()  # the failure is not reported twice
