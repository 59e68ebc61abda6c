"""Robustness: every misuse gets a funcad error that names the problem and the
fix; tracebacks end in the user's code; debug_nans and debug.print work under
every transformation; funcad.config; numerically careful gradients (checked
against JAX's numbers); bounded memory and caches."""
from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import tracemalloc
import traceback
import warnings

import numpy as np
from funcad.core.errors import FuncadValueError
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
from funcad import FuncadError

HERE = os.path.basename(__file__)


def raises(exc, fun, *args, **kwargs) -> str:
    """Run fun, expect `exc` (a FuncadError), return its message."""
    with pytest.raises(exc) as info:
        fun(*args, **kwargs)
    assert isinstance(info.value, FuncadError), type(info.value)
    return str(info.value)


# ------------------------------------------------------------- misuse ----

MISUSE = [
    # (id, thunk, exception, fragments the message must contain)
    ("grad_nonscalar", lambda: funcad.grad(lambda x: 2.0 * x)(np.ones(3)), funcad.FuncadTypeError,
     ["scalar", "f64[3]", ".sum()", "jacrev"]),
    ("grad_int_input", lambda: funcad.grad(lambda x: x * 2.0)(3), funcad.FuncadTypeError,
     ["float inputs", "i64[]", "allow_int"]),
    ("grad_bool_input", lambda: funcad.grad(lambda x: x * 2.0)(np.array(True)), funcad.FuncadTypeError,
     ["bool[]", "Cast"]),
    ("grad_complex_input", lambda: funcad.grad(lambda x: x * 2.0)(1j), funcad.FuncadTypeError,
     ["c128[]", "holomorphic=True"]),
    ("grad_int_output", lambda: funcad.grad(lambda x: (x > 0).astype(int).sum())(1.0),
     funcad.FuncadTypeError, ["float output", "i64[]"]),
    ("grad_tuple_output", lambda: funcad.grad(lambda x: (x, x))(1.0), funcad.FuncadTypeError,
     ["tuple", "has_aux=True"]),
    ("jvp_tangent_tree", lambda: funcad.jvp(lambda x, y: x * y, (1.0, 2.0), (1.0,)), FuncadError,
     ["jvp tangents", "structure"]),
    ("jvp_tangent_shape", lambda: funcad.jvp(fnp.sin, (np.ones(3),), (np.ones(2),)),
     funcad.FuncadTypeError, ["f64[3]", "f64[2]"]),
    ("jvp_tangent_dtype", lambda: funcad.jvp(fnp.sin, (np.ones(3),), (np.ones(3, np.float32),)),
     funcad.FuncadTypeError, ["f64[3]", "f32[3]"]),
    ("vjp_cotangent_shape", lambda: funcad.vjp(fnp.sin, np.ones(3))[1](np.ones(2)),
     funcad.FuncadTypeError, ["f64[3]", "f64[2]"]),
    ("vjp_cotangent_tree", lambda: funcad.vjp(fnp.sin, np.ones(3))[1]((np.ones(3),)),
     funcad.FuncadTypeError, ["f64[3]", "tuple", "structure"]),
    ("vmap_sizes", lambda: funcad.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4)),
     funcad.FuncadTypeError, ["inconsistent sizes", "size 3", "size 4", "f64[4]"]),
    ("vmap_in_axes_range", lambda: funcad.vmap(fnp.sin, in_axes=2)(np.ones(3)), FuncadValueError,
     ["axis 2", "f64[3]", "only 1", "in_axes=None"]),  # JAX's ValueError words, then funcad's fix
    ("vmap_in_axes_length", lambda: funcad.vmap(lambda a, b: a + b, in_axes=(0,))(np.ones(3), np.ones(3)),
     funcad.FuncadTypeError, ["1 entries", "2 positional"]),
    ("vmap_in_axes_type", lambda: funcad.vmap(fnp.sin, in_axes="a")(np.ones(3)), funcad.FuncadTypeError,
     ["ints or None", "str"]),
    ("vmap_out_axes", lambda: funcad.vmap(fnp.sin, out_axes=3)(np.ones(3)), funcad.FuncadTypeError,
     ["out_axes=3"]),
    ("vmap_python_if", lambda: funcad.vmap(lambda x: x if x > 0 else -x)(np.ones(3)),
     funcad.ConcretizationError, ["bool[]", "each lane", "where", "cond"]),
    ("jit_python_if", lambda: funcad.jit(lambda x: x if x > 0 else -x)(1.0), funcad.ConcretizationError,
     ["bool[]", "static_argnums", "lax.cond", HERE]),
    ("jit_int", lambda: funcad.jit(lambda x: int(x))(1.0), funcad.ConcretizationError, ["int()", HERE]),
    ("jit_float", lambda: funcad.jit(lambda x: float(x))(1.0), funcad.ConcretizationError, ["float()"]),
    ("jit_bool", lambda: funcad.jit(lambda x: bool(x))(1.0), funcad.ConcretizationError, ["bool()"]),
    ("jit_np_asarray", lambda: funcad.jit(lambda x: np.asarray(x))(np.ones(2)), funcad.ConcretizationError,
     ["np.asarray()", "f64[2]"]),
    ("jit_unhashable_static", lambda: funcad.jit(lambda x, n: x, static_argnums=1)(1.0, [1]),
     funcad.FuncadTypeError, ["hashable", "list", "tuple"]),
    ("unsupported_numpy", lambda: fnp.busday_count, funcad.UnsupportedError,
     ["funcad.numpy.busday_count", "numpy.busday_count exists"]),
    ("misspelled_numpy", lambda: fnp.arctan3, funcad.UnsupportedError, ["arctan2", "arctan"]),
    ("misspelled_linalg", lambda: fnp.linalg.nrom, funcad.UnsupportedError, ["norm"]),
    ("misspelled_lax", lambda: lax.while_lop, funcad.UnsupportedError, ["while_loop"]),
    ("axis_sum", lambda: fnp.sum(np.ones((2, 3)), axis=2), funcad.core.errors.AxisError,
     ["axis 2", "-2..1"]),
    ("axis_moveaxis", lambda: funcad.make_jaxpr(lambda x: fnp.moveaxis(x, 0, 4))(np.ones((2, 3))),
     funcad.core.errors.AxisError, ["moveaxis", "axis 4", "f64[2,3]"]),
    ("axis_sort", lambda: fnp.sort(np.ones((2, 3)), axis=3), funcad.core.errors.AxisError, ["sort", "axis 3"]),
    ("axis_take", lambda: fnp.take(np.ones((2, 3)), np.array([0]), axis=4), funcad.core.errors.AxisError,
     ["take", "f64[2,3]"]),
    ("axis_lax_reduce", lambda: funcad.make_jaxpr(lambda x: lax.reduce_sum(x, (2,)))(np.ones(3)),
     funcad.core.errors.AxisError, ["axis 2", "f64[3]"]),
    ("reshape", lambda: funcad.make_jaxpr(lambda x: fnp.reshape(x, (4, -1)))(np.ones((2, 3))),
     funcad.core.errors.FuncadValueError, ["f64[2,3]", "(4, -1)"]),
    ("squeeze", lambda: fnp.squeeze(np.ones((2, 3)), 0), funcad.core.errors.FuncadValueError,
     ["f64[2,3]", "size 2"]),
    ("split", lambda: fnp.split(np.ones(6), 4), funcad.core.errors.FuncadValueError,
     ["f64[6]", "array_split"]),
    ("too_many_indices", lambda: funcad.make_jaxpr(lambda x: x[0, 0, 0])(np.ones((2, 3))),
     funcad.core.errors.FuncadIndexError, ["f64[2,3]", "3 were indexed"]),
    ("index_out_of_bounds", lambda: funcad.make_jaxpr(lambda x: x[5])(np.ones((0, 3))),
     funcad.core.errors.FuncadIndexError, ["index 5", "size 0"]),
    ("integer_pow_float", lambda: lax.integer_pow(np.ones(3), 1.5), funcad.FuncadTypeError,
     ["integer exponent", "pow"]),
    ("convert_bad_dtype", lambda: lax.convert_element_type(np.ones(3), "foo"), funcad.FuncadTypeError,
     ["'foo'", "float32"]),
    ("eager_slice_out_of_range", lambda: lax.slice(np.ones(3), (0,), (5,)), funcad.FuncadTypeError,
     ["slice", "f64[3]"]),
    ("eager_dynamic_slice_size", lambda: lax.dynamic_slice(np.ones(3), (np.array(0),), (5,)),
     funcad.FuncadTypeError, ["dynamic_slice", "f64[3]"]),
]


@pytest.mark.parametrize("thunk,exc,fragments", [pytest.param(*c[1:], id=c[0]) for c in MISUSE])
def test_misuse_raises_a_funcad_error_that_explains(thunk, exc, fragments):
    msg = raises(exc, thunk)
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in: {msg}"


BINARY_OPS = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "arctan2",
              "hypot", "logaddexp", "equal", "less", "where2", "matmul", "dot"]


@pytest.mark.parametrize("name", BINARY_OPS)
@pytest.mark.parametrize("mode", ["eager", "jit", "grad", "vmap"])
def test_every_binary_op_names_both_shapes(name, mode):
    fun = (lambda x, y: fnp.where(x > 0, x, y)) if name == "where2" else getattr(fnp, name)
    x, y = np.ones((2, 3)), np.ones((4, 5))
    if mode == "eager":
        run = lambda: fun(x, y)  # noqa: E731
    elif mode == "jit":
        run = lambda: funcad.jit(fun)(x, y)  # noqa: E731
    elif mode == "grad":
        run = lambda: funcad.grad(lambda a: fnp.sum(fun(a, y)).astype(float))(x)  # noqa: E731
    else:
        x, y = np.ones((2, 2, 3)), np.ones((2, 4, 5))
        run = lambda: funcad.vmap(fun)(x, y)  # noqa: E731
    msg = raises(funcad.FuncadTypeError, run)
    assert "f64[2,3]" in msg and "f64[4,5]" in msg, msg


# ------------------------------------------------------- leaked tracers ----

TRANSFORMS = {
    "jvp": lambda f: funcad.jvp(f, (1.0,), (1.0,)),
    "grad": lambda f: funcad.grad(f)(1.0),
    "vmap": lambda f: funcad.vmap(f)(np.ones(3)),
    "jit": lambda f: funcad.jit(f)(1.0),
    "make_jaxpr": lambda f: funcad.make_jaxpr(f)(1.0),
    "linearize": lambda f: funcad.linearize(f, 1.0),
    "hessian": lambda f: funcad.hessian(f)(1.0),
}
USES = {
    "eager_op": lambda t: fnp.sin(t),
    "operator": lambda t: t + 1.0,
    "in_grad": lambda t: funcad.grad(lambda y: y * t)(2.0),
    "in_jit": lambda t: funcad.jit(lambda y: y * t)(2.0),
    "in_vmap": lambda t: funcad.vmap(lambda y: y * t)(np.ones(2)),
    "float": lambda t: float(t),
    "np_asarray": lambda t: np.asarray(t),
}
NAMES = {"jvp": "jvp", "grad": "jvp (which grad", "vmap": "vmap", "jit": "jit(", "make_jaxpr": "make_jaxpr",
         "linearize": "jvp (which grad", "hessian": "jvp (which grad"}


@pytest.mark.parametrize("use", USES)
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_leaked_tracer_is_named_in_every_transform(transform, use):
    store = []

    def f(x):
        store.append(x)
        return fnp.sin(x)
    TRANSFORMS[transform](f)
    leaked = store[0]
    msg = raises(funcad.TracerLeakError, USES[use], leaked)
    assert f"tracer from a finished {NAMES[transform]}" in msg, msg
    assert "Return the value" in msg and HERE in msg  # the fix, and the line that used it


# ------------------------------------------------------------ missing rules ----

def test_missing_rule_names_the_primitive_and_the_transform():
    from funcad.core.trace import Primitive, abstract_eval_rules, impl_rules
    p = Primitive("my_op")
    impl_rules[p] = lambda x: np.asarray(x) * 2
    abstract_eval_rules[p] = lambda a: a
    try:
        assert float(p.bind(np.array(2.0))) == 4.0
        msg = raises(funcad.MissingRuleError, funcad.grad(lambda x: p.bind(x)), 1.0)
        assert "`my_op`" in msg and "jvp" in msg and "custom_jvp" in msg
        msg = raises(funcad.MissingRuleError, funcad.vmap(lambda x: p.bind(x)), np.ones(2))
        assert "`my_op`" in msg and "vmap" in msg
        msg = raises(funcad.MissingRuleError, funcad.jit(lambda x: p.bind(x)), 1.0)
        assert "my_op" in msg
    finally:
        del impl_rules[p], abstract_eval_rules[p]


# ------------------------------------------------------------- tracebacks ----

def _user_function(x):
    y = fnp.sin(x)
    return fnp.add(y, np.ones(4))  # the bad line


def _frames(tb):
    return [(os.path.basename(f.filename), f.name) for f in traceback.extract_tb(tb)]


def test_traceback_ends_in_the_users_code():
    with pytest.raises(funcad.FuncadTypeError) as info:
        funcad.grad(lambda x: _user_function(x).sum())(np.ones(3))
    frames = _frames(info.value.__traceback__)
    assert frames[-1] == (HERE, "_user_function"), frames
    inner = [f for f, _ in frames if f not in (HERE, "traceback_util.py")]
    assert not inner, f"funcad frames left in the traceback: {frames}"
    assert any("FUNCAD_TRACEBACK_FILTERING=off" in n for n in info.value.__notes__)
    # The unfiltered traceback stays reachable.
    full = _frames(info.value.__funcad_unfiltered_traceback__)
    assert len(full) > len(frames) + 5 and ("trace.py", "bind") in full


@pytest.mark.parametrize("transform", ["grad", "jit", "vmap", "make_jaxpr", "jit_of_grad", "jacfwd"])
def test_traceback_filtering_in_every_transform(transform):
    wrap = {"grad": lambda f: funcad.grad(lambda x: f(x).sum()), "jit": funcad.jit, "vmap": funcad.vmap,
            "make_jaxpr": funcad.make_jaxpr, "jacfwd": funcad.jacfwd,
            "jit_of_grad": lambda f: funcad.jit(funcad.grad(lambda x: f(x).sum()))}[transform]
    with pytest.raises(funcad.FuncadTypeError) as info:
        wrap(_user_function)(np.ones((2, 3)))
    assert _frames(info.value.__traceback__)[-1] == (HERE, "_user_function")


def test_traceback_filtering_can_be_turned_off():
    with funcad.config.override(traceback_filtering="off"):
        with pytest.raises(funcad.FuncadTypeError) as info:
            funcad.jit(_user_function)(np.ones(3))
    files = {f for f, _ in _frames(info.value.__traceback__)}
    assert {"jit.py", "trace.py"} <= files
    assert not hasattr(info.value, "__funcad_unfiltered_traceback__")


def test_errors_caught_inside_a_transformed_function_are_untouched():
    def f(x):
        try:
            funcad.jit(_user_function)(x)
        except funcad.FuncadTypeError as e:  # an inner boundary must not filter
            assert not hasattr(e, "__funcad_unfiltered_traceback__")
            return x * 2.0
    assert float(funcad.grad(lambda x: f(x).sum())(np.ones(3))[0]) == 2.0


# --------------------------------------------------------------- config ----

def test_config_reads_updates_and_overrides():
    assert funcad.config.debug_nans is False
    assert funcad.config.traceback_filtering == "on"
    with funcad.config.override(debug_nans=True, traceback_filtering=False):
        assert funcad.config.debug_nans is True and funcad.config.traceback_filtering == "off"
    assert funcad.config.debug_nans is False and funcad.config.traceback_filtering == "on"
    assert set(funcad.config.values()) == {"debug_nans", "use_shardy_partitioner", "default_backend", "default_prng_impl", "enable_x64",
                                           "jit_cache_size", "threefry_partitionable", "traceback_filtering",
                                           "debug_infs", "default_matmul_precision", "numpy_rank_promotion",
                                           "log_compiles", "no_tracing", "no_execution", "enable_checks",
                                           "default_device", "transfer_guard", "transfer_guard_host_to_device",
                                           "transfer_guard_device_to_host", "transfer_guard_device_to_device",
                                           "explain_cache_misses", "numpy_dtype_promotion", "legacy_prng_key",
                                           "softmax_custom_jvp", "check_tracer_leaks", "enable_custom_prng",
                                           "compilation_cache_dir", "enable_compilation_cache",
                                           "persistent_cache_min_compile_time_secs",
                                           "persistent_cache_min_entry_size_bytes", "debug_key_reuse",
                                           "eager_backend"}
    with pytest.raises(AttributeError, match="debug_nans"):
        funcad.config.update("debug_nan", True)
    with pytest.raises(funcad.FuncadTypeError, match="True or False"):
        funcad.config.update("debug_nans", "maybe")
    with pytest.raises(funcad.FuncadTypeError, match="positive int"):
        funcad.config.update("jit_cache_size", 0)


def test_config_default_backend_is_wired_to_xla():
    from funcad.lowering import xla
    before = xla._default_backend
    try:
        funcad.config.update("default_backend", "cpu")
        assert xla.default_backend() == "cpu" and funcad.config.default_backend == "cpu"
        assert float(funcad.jit(lambda x: x + 1.0)(1.0)) == 2.0
        with pytest.raises(FuncadError, match="Unknown backend 'tpu'"):
            funcad.config.update("default_backend", "tpu")
    finally:
        funcad.config.update("default_backend", before)


def test_config_jit_cache_size_bounds_every_jitted_function():
    f = funcad.jit(lambda x: x * 2.0)
    for n in range(5):
        f(np.ones(n + 1))
    assert f._cache_size() == 5
    try:
        funcad.config.update("jit_cache_size", 3)
        assert f._cache_size() == 3  # shrunk at once
        for n in range(5, 9):
            f(np.ones(n + 1))
        assert f._cache_size() == 3
        assert np.array_equal(f(np.ones(8)), 2 * np.ones(8))  # the newest survive: no re-trace needed
    finally:
        funcad.config.update("jit_cache_size", 128)
    f.clear_cache()
    assert f._cache_size() == 0
    funcad.clear_caches()


def test_config_from_the_environment():
    code = ("import funcad; print(funcad.config.debug_nans, funcad.config.traceback_filtering, "
            "funcad.config.jit_cache_size)")
    env = dict(os.environ, FUNCAD_DEBUG_NANS="1", FUNCAD_TRACEBACK_FILTERING="off",
               FUNCAD_JIT_CACHE_SIZE="7")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.split() == ["True", "off", "7"], out.stderr


# ------------------------------------------------------------ debug_nans ----

def _log_of_sin(x):
    y = fnp.sin(x)
    z = fnp.log(y)  # NaN where sin(x) < 0
    return z * 2.0


NAN_CASES = {
    "eager": lambda x: _log_of_sin(x),
    "grad": lambda x: funcad.grad(lambda v: _log_of_sin(v).sum())(x),
    "vmap": lambda x: funcad.vmap(_log_of_sin)(x),
    "jit": lambda x: funcad.jit(_log_of_sin)(x),
    "jit_of_vmap": lambda x: funcad.jit(funcad.vmap(_log_of_sin))(x),
    "grad_of_jit": lambda x: funcad.grad(lambda v: funcad.jit(_log_of_sin)(v).sum())(x),
    "jvp": lambda x: funcad.jvp(_log_of_sin, (x,), (x,)),
}


@pytest.mark.parametrize("case", NAN_CASES)
def test_debug_nans_names_the_primitive_and_the_users_line(case):
    x = np.array([1.0, 4.0])  # sin(4) < 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        NAN_CASES[case](x)  # off: no error, NaNs flow
        with funcad.config.override(debug_nans=True):
            msg = raises(funcad.NaNError, NAN_CASES[case], x)
            NAN_CASES[case](np.array([1.0, 2.0]))  # no NaN: no error
    assert "primitive `log`" in msg, msg
    assert f"{HERE}:" in msg and "z = fnp.log(y)" in msg, msg
    assert "f64[2] = [ 0.841471 -0.756802]" in msg, msg  # the offending input values


def test_debug_nans_in_the_backward_pass():
    with warnings.catch_warnings(), funcad.config.override(debug_nans=True):
        warnings.simplefilter("ignore")
        msg = raises(funcad.NaNError, funcad.grad(lambda x: fnp.sqrt(x * x)), 0.0)
    assert "primitive `mul`" in msg and HERE in msg  # 0 * inf: the cotangent of sqrt at 0
    assert funcad.config.debug_nans is False


def test_debug_nans_names_a_nan_input_to_jit():
    with funcad.config.override(debug_nans=True):
        msg = raises(funcad.NaNError, funcad.jit(lambda x: x + 1.0), np.nan)
    assert "primitive `add`" in msg and "already held a NaN" in msg


# ----------------------------------------------------------- debug.print ----

def _printing(x):
    funcad.debug.print("x = {x}", x=x)
    y = fnp.sin(x)
    funcad.debug.print("y = {} {}", y, 7)
    return y


PRINTS = {
    "eager": (lambda: _printing(0.5), "x = 0.5\ny = 0.479425538604203 7\n"),
    "grad": (lambda: funcad.grad(_printing)(0.5), "x = 0.5\ny = 0.479425538604203 7\n"),
    "jvp": (lambda: funcad.jvp(_printing, (0.5,), (1.0,)), "x = 0.5\ny = 0.479425538604203 7\n"),
    "vmap": (lambda: funcad.vmap(_printing)(np.array([0.0, 0.5])),
             "x = [0.  0.5]\ny = [0.         0.47942554] 7\n"),
    "jit": (lambda: funcad.jit(_printing)(0.5), "x = 0.5\ny = 0.479425538604203 7\n"),
    "jit_twice": (lambda: [funcad.jit(_printing)(v) for v in (0.5, 0.0)],
                  "x = 0.5\ny = 0.479425538604203 7\nx = 0.0\ny = 0.0 7\n"),
    "jit_of_grad": (lambda: funcad.jit(funcad.grad(_printing))(0.5), "x = 0.5\ny = 0.479425538604203 7\n"),
    "grad_of_jit": (lambda: funcad.grad(funcad.jit(_printing))(0.5), "x = 0.5\ny = 0.479425538604203 7\n"),
    "vmap_of_jit": (lambda: funcad.vmap(funcad.jit(_printing))(np.array([0.0, 0.5])),
                    "x = [0.  0.5]\ny = [0.         0.47942554] 7\n"),
    "nested_jit": (lambda: funcad.jit(lambda v: funcad.jit(_printing)(v) * 2.0)(0.5),
                   "x = 0.5\ny = 0.479425538604203 7\n"),
    "eager_cond": (lambda: lax.cond(True, _printing, lambda v: v, 0.5), "x = 0.5\ny = 0.479425538604203 7\n"),
}


@pytest.mark.parametrize("case", PRINTS)
def test_debug_print_in_every_transform(case, capsys):
    thunk, want = PRINTS[case]
    thunk()
    assert capsys.readouterr().out == want


@pytest.mark.parametrize("loop", ["scan", "fori", "cond"])
def test_debug_print_inside_control_flow_prints_once_per_step_under_grad(loop, capsys):
    f = {"scan": lambda x: lax.scan(lambda c, xi: (_printing(c) + xi, c), x, np.arange(2.0))[0],
         "fori": lambda x: lax.fori_loop(0, 2, lambda i, c: _printing(c), x),
         "cond": lambda x: lax.cond(x > 0, _printing, lambda v: v, x)}[loop]
    f(0.5)
    eager = capsys.readouterr().out
    assert eager.count("x = ") == (1 if loop == "cond" else 2)
    funcad.grad(f)(0.5)
    assert capsys.readouterr().out == eager
    funcad.jvp(f, (0.5,), (1.0,))
    assert capsys.readouterr().out == eager


def test_debug_print_survives_optimisation_and_dce():
    def f(x):
        funcad.debug.print("unused {}", x * 3.0)  # its input is used by nothing else
        funcad.debug.print("no arguments")
        return x + 1.0
    closed = funcad.optimize(funcad.make_jaxpr(f)(1.0))
    assert [e.prim.name for e in closed.eqns].count("debug_print") == 2
    assert "mul" in [e.prim.name for e in closed.eqns]


def test_debug_print_under_jit_prints_after_the_call_in_program_order(capsys):
    out = funcad.jit(lambda x: (funcad.debug.print("first {}", x), funcad.debug.print("second"),
                                x * 2.0)[-1])(np.arange(2.0))
    assert np.array_equal(out, [0.0, 2.0])
    assert capsys.readouterr().out == "first [0. 1.]\nsecond\n"


def test_debug_print_inside_control_flow_under_jit_is_a_clear_error():
    fun = funcad.jit(lambda x: lax.cond(x > 0, _printing, lambda v: v, x))
    msg = raises(FuncadError, fun, 0.5)
    assert "`cond`" in msg and "without jit" in msg


def test_debug_print_needs_a_format_string():
    assert "format string" in raises(FuncadError, funcad.debug.print, 1.0)


# ----------------------------------------------------- numerical care ----
# Expected numbers are JAX's (jax 0.10, x64), computed once and written here.

NUMERICS = [
    ("logsumexp_neg_inf", lambda x: fnp.logsumexp(x), np.array([0.0, -np.inf]), 0.0, [1.0, 0.0]),
    ("logsumexp_large", lambda x: fnp.logsumexp(x), np.array([1000.0, 1000.0]), 1000.6931471805599, [0.5, 0.5]),
    ("logaddexp_neg_inf", lambda x: fnp.logaddexp(x, -np.inf), 1.0, 1.0, 1.0),
    ("logaddexp_equal", lambda x: fnp.logaddexp(x, x), 2.0, 2.6931471805599454, 1.0),
    ("logaddexp_both_inf", lambda x: fnp.logaddexp(x, x), np.inf, np.inf, 2.0),
    ("logaddexp_both_neg_inf", lambda x: fnp.logaddexp(x, x), -np.inf, -np.inf, np.nan),
    ("softplus_big", lambda x: fnp.logaddexp(x, 0.0), 1000.0, 1000.0, 1.0),
    ("softplus_small", lambda x: fnp.logaddexp(x, 0.0), -1000.0, 0.0, 0.0),
    ("logaddexp2_big", lambda x: fnp.logaddexp2(x, 0.0), 2000.0, 2000.0, 1.0),
    ("sqrt_at_0", fnp.sqrt, 0.0, 0.0, np.inf),
    ("sqrt_of_square_at_0", lambda x: fnp.sqrt(x * x), 0.0, 0.0, np.nan),
    ("norm_at_0", lambda x: fnp.linalg.norm(x), np.zeros(3), 0.0, [np.nan] * 3),
    ("norm_1_at_0", lambda x: fnp.linalg.norm(x, 1), np.zeros(3), 0.0, [1.0] * 3),
    ("hypot_at_0", lambda x: fnp.hypot(x, 0.0), 0.0, 0.0, 0.5),
    ("hypot_both_0", lambda x: fnp.hypot(x, x), 0.0, 0.0, 1.0),
    # (Not 1e300: XLA rewrites (a / b) / b as a / (b * b), which overflows there; JAX's jit does too.)
    ("hypot_big", lambda x: fnp.hypot(x, 1e150), 1e150, 1.4142135623730952e150, 0.7071067811865476),
    ("abs_at_0", fnp.abs, 0.0, 0.0, 1.0),
    ("where_nan_branch", lambda x: fnp.where(x > 0, fnp.log(x), 0.0), -1.0, 0.0, -0.0),
    ("where_inf_branch_at_0", lambda x: fnp.where(x > 0, fnp.sqrt(x), 0.0), 0.0, 0.0, np.nan),
    ("double_where", lambda x: fnp.where(x > 0, fnp.sqrt(fnp.where(x > 0, x, 1.0)), 0.0), 0.0, 0.0, 0.0),
    ("softmax_extremes", lambda x: (fnp.exp(x - fnp.logsumexp(x)) * np.arange(3.0)).sum(),
     np.array([1000.0, 0.0, -1000.0]), 0.0, [0.0, 0.0, 0.0]),
]


@pytest.mark.parametrize("fun,x,value,grad", [pytest.param(*c[1:], id=c[0]) for c in NUMERICS])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_gradients_at_the_edges_match_jax(fun, x, value, grad, mode):
    vg = funcad.value_and_grad(fun)
    if mode == "jit":
        vg = funcad.jit(vg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v, g = vg(x)
    np.testing.assert_allclose(np.asarray(v), value, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g), grad, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("fun", [fnp.logaddexp, fnp.logaddexp2, fnp.hypot])
def test_careful_functions_keep_float32_and_second_derivatives(fun):
    x = np.linspace(-1.0, 1.5, 4).astype(np.float32)
    assert fun(x, x).dtype == np.float32
    assert funcad.grad(lambda a: fun(a, 0.5).sum())(x).dtype == np.float32
    # Second derivative against central differences of the first (float64).
    g = funcad.grad(lambda a: fun(a, 0.5))
    for a in (-1.0, 0.3, 1.5):
        fd = (g(a + 1e-5) - g(a - 1e-5)) / 2e-5
        np.testing.assert_allclose(funcad.grad(g)(a), fd, rtol=1e-5, atol=1e-8)


def test_where_gradient_page_examples():
    x = np.array([-1.0, 0.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trap = funcad.grad(lambda x: fnp.where(x > 0, fnp.sqrt(x), 0.0).sum())(x)
    assert np.isnan(trap[:2]).all() and trap[2] == 0.25

    def safe(x):
        ok = x > 0
        return fnp.where(ok, fnp.sqrt(fnp.where(ok, x, 1.0)), 0.0).sum()
    assert np.array_equal(funcad.grad(safe)(x), [0.0, 0.0, 0.25])
    page = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "where_gradient.md")).read()
    assert "double-`where`" in page and "debug_nans" in page


# ------------------------------------------------------ resource safety ----

def _growth(step, n: int) -> int:
    """Bytes held by Python after n more calls of step (after a warm-up)."""
    for _ in range(50):
        step()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(n):
            step()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_eager_grad_loop_does_not_grow_memory():
    f = funcad.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2))
    x = np.ones(8)
    assert _growth(lambda: f(x), 2000) < 64 * 1024


def test_jit_call_loop_does_not_grow_memory():
    f = funcad.jit(lambda x, y: fnp.tanh(x) * y + 1.0)
    x, y = np.ones(8), np.ones(8)
    assert _growth(lambda: f(x, y), 3000) < 64 * 1024


def test_jit_of_grad_loop_does_not_grow_memory():
    f = funcad.jit(funcad.grad(lambda x: fnp.sum(fnp.sin(x) ** 2)))
    x = np.ones(8)
    assert _growth(lambda: f(x), 2000) < 64 * 1024


def test_retracing_many_signatures_is_bounded_by_the_cache():
    f = funcad.jit(lambda x: x + 1.0)
    try:
        funcad.config.update("jit_cache_size", 4)
        for n in range(1, 12):
            f(np.ones(n))
        assert f._cache_size() == 4 and len(f._fast) <= 8
    finally:
        funcad.config.update("jit_cache_size", 128)


# ------------------------------------------------------------- doctests ----


def test_vjp_cotangent_of_another_dtype_is_refused():
    y, pullback = funcad.vjp(lambda x: x * 2, np.ones(3, np.float32))
    with pytest.raises(funcad.FuncadTypeError, match=r"f32\[3\] but its cotangent is f64\[3\].*float32"):
        pullback(np.ones(3))
    np.testing.assert_allclose(pullback(np.ones(3, np.float32))[0], 2 * np.ones(3))
    np.testing.assert_allclose(funcad.vjp(lambda x: x * 2, 1.0)[1](1.0)[0], 2.0)  # weak scalars are fine
