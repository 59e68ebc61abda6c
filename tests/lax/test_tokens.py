"""JAX 0.12 names added by the surface2 branch, checked against JAX:

- funcad.lax: create_token/after_all (tokens through jit, grad, vmap), dce_sink,
  pcast(to="varying") and pbroadcast (under vmap(axis_name) and inside shard_map);
- funcad.lax's `*_p` primitive objects and `Eqn.primitive` (walking make_jaxpr);
- funcad.debug.breakpoint (commands fed on stdin, as JAX's own tests do) and debug.log;
- the persistent compilation cache: a second process loads instead of compiling.
"""
from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import lax
from funcad.core.errors import FuncadTypeError, FuncadValueError, UnsupportedError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ------------------------------------------------------------------ tokens ----

def _token_program(lib, lx):
    def f(x):
        t = lx.after_all(lx.create_token(), lx.create_token())
        return lib.sin(x) * 2, lx.after_all(t)
    return f


def test_tokens_flow_through_jit_and_print_as_jax():
    f = _token_program(fnp, lax)
    y, t = funcad.jit(f)(0.5)
    jy, jt = jax.jit(_token_program(jnp, jax.lax))(0.5)
    np.testing.assert_allclose(y, jy, rtol=1e-6)
    assert lax.after_all(t).aval == lax.create_token().aval  # a jit output is a token again
    assert funcad.jit(lambda t: lax.after_all(t))(lax.create_token()).aval.str_short() == "Tok"
    text = str(funcad.make_jaxpr(f)(0.5))
    assert "c:Tok = create_token" in text and "after_all" in text, text
    assert repr(lax.create_token()) == "Token()"


def test_tokens_under_grad_and_vmap():
    f = _token_program(fnp, lax)
    g = funcad.grad(lambda x: f(x)[0])(0.5)
    np.testing.assert_allclose(g, 2 * np.cos(0.5))
    np.testing.assert_allclose(funcad.vmap(lambda x: f(x)[0])(np.arange(3.0)), 2 * np.sin(np.arange(3.0)))


def test_after_all_rejects_arrays():
    with pytest.raises(FuncadTypeError, match="must be tokens, got f64"):
        lax.after_all(lax.create_token(), np.float64(1.0))
    with pytest.raises(FuncadTypeError, match="must be tokens"):
        funcad.jit(lambda x: lax.after_all(x))(np.ones(2))


# ---------------------------------------------------------------- dce_sink ----

def test_dce_sink_keeps_the_computation():
    def f(x):
        lax.dce_sink({"a": fnp.sin(x), "b": [x * 3]})
        return x + 1
    closed = funcad.make_jaxpr(f)(1.0)
    sinks = [e for e in closed.eqns if e.primitive.name == "dce_sink"]
    assert len(sinks) == 2 and sinks[0].params == {"prevent_mlir_dce": False}
    opt = funcad.optimize(closed)
    assert {e.primitive.name for e in opt.eqns} >= {"sin", "mul", "dce_sink"}
    assert funcad.jit(f)(2.0) == 3.0
    assert funcad.grad(f)(2.0) == 1.0
    np.testing.assert_allclose(funcad.vmap(f)(np.arange(3.0)), np.arange(3.0) + 1)


def test_dce_sink_prevent_mlir_dce_lowers_to_the_side_effecting_call():
    def f(x):
        lax.dce_sink(x * 2, prevent_mlir_dce=True)
        return x
    from funcad.primitives.tokens import _has_ffi_sink
    text = funcad.jit(f).lower(1.0).as_text()
    # jaxlib's no-op FFI target where it has one (not 0.6: a host call that does nothing)
    assert ('"dce_sink"' in text) == _has_ffi_sink("cpu") and "has_side_effect = true" in text, text
    assert funcad.jit(f)(1.5) == 1.5


# --------------------------------------------------------- pcast, pbroadcast ----

def test_pbroadcast_and_pcast_under_named_vmap_against_jax():
    x = np.arange(4.0) ** 2
    ours = funcad.vmap(lambda v: lax.pbroadcast(v, "i", 2), axis_name="i")(x)
    theirs = jax.vmap(lambda v: jax.lax.pbroadcast(v, "i", 2), axis_name="i")(x)
    np.testing.assert_allclose(ours, theirs)

    # sum over the 4 entries of x[1]**2 (JAX's own grad of this fails under vmap: NumPy decides)
    g = funcad.grad(lambda x: funcad.vmap(lambda v: lax.pbroadcast(v, "i", 1) ** 2, axis_name="i")(x).sum())(x)
    np.testing.assert_allclose(g, [0.0, 8 * x[1], 0.0, 0.0])
    dyn = funcad.jit(lambda x: funcad.vmap(lambda v: lax.pbroadcast(v, "i", np.int32(3)),
                                           axis_name="i")(x))(x)
    np.testing.assert_allclose(dyn, np.full(4, 9.0))
    np.testing.assert_allclose(funcad.vmap(lambda v: lax.pcast(v, "i", to="varying"), axis_name="i")(x), x)


def test_pcast_and_pbroadcast_errors():
    f = funcad.vmap(lambda v: lax.pcast(v, "i", to="reduced"), axis_name="i")
    with pytest.raises(FuncadValueError, match="no reduced/unreduced"):
        f(np.ones(2))
    with pytest.raises(FuncadValueError, match="allowed values"):
        funcad.vmap(lambda v: lax.pcast(v, "i", to="sideways"), axis_name="i")(np.ones(2))
    with pytest.raises(FuncadTypeError, match="tuple or a str"):
        funcad.vmap(lambda v: lax.pcast(v, {"i"}, to="varying"), axis_name="i")(np.ones(2))
    with pytest.raises(FuncadValueError, match="out of range"):
        funcad.vmap(lambda v: lax.pbroadcast(v, "i", 5), axis_name="i")(np.ones(2))
    with pytest.raises(FuncadTypeError, match="integer scalar"):
        funcad.vmap(lambda v: lax.pbroadcast(v, "i", np.ones(2)), axis_name="i")(np.ones(2))


_SHARD_MAP_CHILD = """
import numpy as np, funcad
from funcad.sharding import PartitionSpec as P
x = np.arange(8.0) + 1
m = funcad.make_mesh((4,), ("x",))
# JAX lowers pbroadcast on GPUs only, and JAX 0.6 has no pcast: NumPy decides.
# Device 2 holds x[4:6].
body = lambda v: funcad.lax.pbroadcast(v * v, "x", 2)
sm = funcad.shard_map(body, mesh=m, in_specs=P("x"), out_specs=P("x"))
np.testing.assert_allclose(sm(x), np.tile(x[4:6] ** 2, 4))
np.testing.assert_allclose(funcad.jit(sm)(x), np.tile(x[4:6] ** 2, 4))
g = funcad.grad(lambda x: sm(x).sum())(x)
np.testing.assert_allclose(g, np.r_[0, 0, 0, 0, 8 * x[4:6], 0, 0])
# an invariant value made varying with pcast, then summed over the devices
summed = lambda v, w: funcad.lax.psum(funcad.lax.pcast(w, "x", to="varying") * v, "x")
out = funcad.jit(funcad.shard_map(summed, mesh=m, in_specs=(P("x"), P()), out_specs=P()))(x, np.float64(3.0))
np.testing.assert_allclose(out, 3 * x.reshape(4, 2).sum(0))
gw = funcad.grad(lambda w: funcad.shard_map(summed, mesh=m, in_specs=(P("x"), P()),
                                            out_specs=P())(x, w).sum())(np.float64(3.0))
np.testing.assert_allclose(gw, x.sum())
print("OK")
"""


def test_pbroadcast_and_pcast_inside_shard_map():
    env = dict(os.environ, FUNCAD_BACKEND="cpu", JAX_PLATFORMS="cpu",
               XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip())
    proc = subprocess.run([sys.executable, "-c", _SHARD_MAP_CHILD], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_left_out_lax_names_say_what_to_use():
    for name, hint in (("psum_scatter_start", "psum_scatter"), ("ragged_all_to_all", "all_to_all")):
        with pytest.raises(UnsupportedError, match=hint):
            getattr(lax, name)


# ------------------------------------------------------ primitive objects ----

def _walk(jaxpr, out):
    for eqn in jaxpr.eqns:
        out.append(eqn.primitive)
        for v in eqn.params.values():
            for sub in v if isinstance(v, (tuple, list)) else (v,):
                inner = getattr(sub, "jaxpr", None)
                if inner is not None:
                    _walk(inner, out)
    return out


def _program(lib, lx):
    def f(x, i):
        y = lx.sin(x) + lx.integer_pow(x, 3) + lx.reduce_sum(lx.exp(x), (0,))
        z = lx.dynamic_slice(lx.cumsum(x, 0), (i,), (2,))
        c = lx.cond(i > 0, lambda a: a * 2.0, lambda a: a - 1.0, x)
        s = lx.scan(lambda cc, xx: (cc + xx, cc * xx), 0.0, x)[1]
        w = lx.while_loop(lambda v: v[0] < 3, lambda v: (v[0] + 1, v[1] * 2.0), (0, x))[1]
        d = lx.dot_general(x, x, (((0,), (0,)), ((), ())))
        return y.sum() + z.sum() + c.sum() + s.sum() + w.sum() + d
    return f


def test_primitive_objects_match_jaxprs_as_jax():
    x, i = np.arange(4.0), np.int32(1)
    names = ["sin_p", "integer_pow_p", "reduce_sum_p", "exp_p", "dynamic_slice_p", "cumsum_p",
             "cond_p", "scan_p", "while_p", "dot_general_p", "mul_p", "add_p", "lt_p"]
    ours = _walk(funcad.make_jaxpr(_program(fnp, lax))(x, i).jaxpr, [])
    theirs = _walk(jax.make_jaxpr(_program(jnp, jax.lax))(x, i).jaxpr, [])
    for n in names:
        assert any(p is getattr(lax, n) for p in ours), n
        assert any(p is getattr(jax.lax, n) for p in theirs), n
        assert getattr(lax, n).name == getattr(jax.lax, n).name
    eqn = funcad.make_jaxpr(fnp.sin)(1.0).eqns[0]
    assert eqn.primitive is lax.sin_p and eqn.invars == eqn.inputs
    assert lax.select_n_p.name == "select_n" and "sin_p" in lax.__all__ and "sin_p" in dir(lax)


def test_every_exported_primitive_object_is_jaxs_name():
    exported = [n for n in lax.__all__ if n.endswith("_p")]
    assert len(exported) >= 115
    for n in exported:
        assert hasattr(jax.lax, n), n
        ours, theirs = getattr(lax, n).name, getattr(jax.lax, n).name
        # funcad's linear solve primitive prints as "linear_solve"; JAX's as "custom_linear_solve"
        assert ours == theirs or (n, ours) == ("linear_solve_p", "linear_solve"), (n, ours, theirs)


# -------------------------------------------------------------- breakpoint ----

def _debugged(cmds):
    out = io.StringIO()

    def f(x):
        y = fnp.sin(x) * 2
        funcad.debug.breakpoint(stdin=io.StringIO(cmds), stdout=out, backend="cli")
        return y
    return f, out


def _jax_debugged(cmds):
    out = io.StringIO()

    def f(x):
        y = jnp.sin(x) * 2
        jax.debug.breakpoint(stdin=io.StringIO(cmds), stdout=out, backend="cli")
        return y
    return f, out


@pytest.mark.parametrize("wrap", ["eager", "jit", "grad"])
def test_breakpoint_shows_live_values(wrap):
    f, out = _debugged("p y\np x + 1\nc\n")
    t = {"eager": lambda f: f, "jit": funcad.jit, "grad": funcad.grad}[wrap]
    t(f)(np.float64(0.5))
    lines = out.getvalue().splitlines()
    assert lines[0] == "Entering jdb:" and lines[1].startswith("(jdb) ")

    def number(line):  # the value in "(jdb) Array(0.95, dtype=float64)" or "np.float64(1.5)"
        return float(re.search(r"\(([-\d.e+]+)", line).group(1))
    assert number(lines[1]) == pytest.approx(2 * np.sin(0.5))
    assert number(lines[2]) == 1.5


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # JAX flattens the test frames' generators
def test_breakpoint_output_matches_jax_under_jit():
    cmds = "p y\npp {'a': x}\nfoo\nu\nd\nw\nc\n"
    ours, out = _debugged(cmds)
    theirs, jout = _jax_debugged(cmds)
    with jax.enable_x64(True) if hasattr(jax, "enable_x64") else jax.experimental.enable_x64():
        funcad.jit(ours)(np.float64(0.5))
        jax.jit(theirs)(np.float64(0.5))
    a = out.getvalue().replace(__file__, "F").splitlines()
    b = jout.getvalue().replace(__file__, "F").splitlines()
    assert a[0] == b[0] and a[1] == b[1] and a[2] == b[2]   # intro, p y, pp
    assert a[3] == b[3] == "(jdb) *** NameError: name 'foo' is not defined"
    assert "F(" in a[4] and "Traceback:" in "\n".join(a)


def test_breakpoint_under_vmap_stops_once_per_entry():
    f, out = _debugged("p y\nc\np y\nc\n")
    funcad.vmap(f)(np.array([0.0, 0.5]))
    text = out.getvalue()
    assert text.count("Entering jdb:") == 2 and "Array(0., dtype=float64)" in text


def test_breakpoint_token_and_frames():
    out = io.StringIO()

    def f(x):
        y = x * 3
        t = funcad.debug.breakpoint(stdin=io.StringIO("p y\nc\n"), stdout=out, token=y, num_frames=1)
        return t + 1
    assert funcad.jit(f)(2.0) == 7.0
    assert "Array(6., dtype=float64)" in out.getvalue()
    with pytest.raises(FuncadValueError, match="mutually exclusive"):
        funcad.debug.breakpoint(token=1.0, ordered=True)
    # filter_frames=False keeps funcad's own frames, so there are more of them
    out2 = io.StringIO()
    funcad.jit(lambda x: funcad.debug.breakpoint(stdin=io.StringIO("w\nc\n"), stdout=out2,
                                                 filter_frames=False) or x)(1.0)
    assert "funcad" + os.sep in out2.getvalue()


def test_breakpoint_quit_exits():
    f, _ = _debugged("q\n")
    with pytest.raises(SystemExit):
        f(1.0)


# -------------------------------------------------------------------- log ----

def test_debug_log_records_under_transforms(caplog):
    def f(x):
        funcad.debug.log("x = {x}", x=x)
        funcad.debug.log(ordered=True)("two {}", x)
        return fnp.sin(x)
    with caplog.at_level(logging.INFO, logger="funcad.debug"):
        funcad.jit(f)(2.0)
        funcad.vmap(f)(np.arange(2.0))
        funcad.grad(f)(3.0)
    msgs = [r.getMessage() for r in caplog.records if r.name == "funcad.debug"]
    assert msgs == ["x = 2.0", "two 2.0", "x = 0.0", "x = 1.0", "two 0.0", "two 1.0", "x = 3.0", "two 3.0"]
    rec = next(r for r in caplog.records if r.name == "funcad.debug")
    assert rec.levelno == logging.INFO and rec.pathname == __file__
    with pytest.raises(FuncadValueError, match="Unused keyword"):
        funcad.debug.log("x", y=1)
    with pytest.raises(FuncadTypeError, match="two-call form"):
        funcad.debug.log(None, 1)


# ------------------------------------------------------ compilation cache ----

_CACHE_CHILD = """
import sys, numpy as np, funcad, funcad.numpy as fnp
from funcad.experimental.compilation_cache import compilation_cache as cc
from funcad.lowering import compilation_cache as pc, xla
funcad.config.update("jax_persistent_cache_min_compile_time_secs", 0)
cc.set_cache_dir(sys.argv[1])
if sys.argv[2] == "load":  # the second process must not compile: every compile now refuses
    def refuse(*a, **k):
        raise AssertionError("compiled instead of loading from the cache")
    xla.BIG_PROGRAM_LINES = 0   # so every compile goes through _on_big_stack
    xla._on_big_stack = refuse
f = funcad.jit(lambda x: fnp.tanh(x) @ x.T + 1)
print(float(f(np.ones((3, 3))).sum()), pc.stats["hits"], pc.stats["writes"])
"""


def test_second_process_loads_from_the_persistent_cache(tmp_path):
    def run(mode):
        proc = subprocess.run([sys.executable, "-c", _CACHE_CHILD, str(tmp_path), mode], cwd=ROOT,
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, FUNCAD_BACKEND="cpu"))
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout.split()
    value, hits, writes = run("store")
    assert (hits, writes) == ("0", "1") and len(os.listdir(tmp_path)) == 1
    value2, hits, writes = run("load")
    assert (hits, writes) == ("1", "0") and value2 == value
    assert float(value) == pytest.approx(float((np.tanh(np.ones((3, 3))) @ np.ones((3, 3)) + 1).sum()))


def test_cache_thresholds_and_api(tmp_path):
    from funcad.experimental.compilation_cache import compilation_cache as cc
    from funcad.lowering import compilation_cache as pc
    assert set(cc.__all__) >= {"set_cache_dir", "reset_cache"} and cc.is_initialized()
    assert "compilation_cache" in funcad.experimental.__all__
    old = {k: funcad.config.read(k) for k in ("compilation_cache_dir", "persistent_cache_min_compile_time_secs",
                                               "persistent_cache_min_entry_size_bytes")}
    try:
        cc.set_cache_dir(tmp_path)
        assert funcad.config.jax_compilation_cache_dir == str(tmp_path)
        funcad.config.update("persistent_cache_min_compile_time_secs", 1e9)  # nothing compiles that slowly
        funcad.jit(lambda x: x * 7.25 - 1)(1.0)
        assert os.listdir(tmp_path) == []
        funcad.config.update("persistent_cache_min_compile_time_secs", 0)
        funcad.config.update("jax_persistent_cache_min_entry_size_bytes", 10 ** 9)  # all too small
        funcad.jit(lambda x: x * 7.5 - 2)(1.0)
        assert os.listdir(tmp_path) == []
        funcad.config.update("persistent_cache_min_entry_size_bytes", 0)
        funcad.jit(lambda x: x * 7.75 - 3)(1.0)
        assert len(os.listdir(tmp_path)) == 1
        cc.reset_cache()
        assert pc.stats == {"hits": 0, "misses": 0, "writes": 0}
        with pytest.raises(FuncadTypeError, match="directory path"):
            funcad.config.update("compilation_cache_dir", 3)
    finally:
        for k, v in old.items():
            funcad.config.update(k, v)
        cc.reset_cache()
