"""funcad.api_util, funcad.extend.linear_util, funcad.interpreters.partial_eval,
funcad.monitoring and the public core names, each run as the same source on
JAX's modules and funcad's (the usages numpyro and equinox make of them)."""
from types import SimpleNamespace

import numpy as np
import pytest

import funcad
import funcad.api_util
import funcad.core
import funcad.extend
import funcad.interpreters
import funcad.monitoring
import funcad.numpy as fnp
import funcad.tree_util
import jax
import jax.api_util
import jax.extend
import jax.interpreters.partial_eval
import jax.monitoring
import jax.numpy as jnp

FUNCAD = SimpleNamespace(api=funcad, np=fnp, au=funcad.api_util, lu=funcad.extend.linear_util,
                         core=funcad.extend.core, jcore=funcad.core, pe=funcad.interpreters.partial_eval,
                         ad=funcad.interpreters.ad, batching=funcad.interpreters.batching,
                         mlir=funcad.interpreters.mlir, tu=funcad.tree_util, mon=funcad.monitoring)
JAX = SimpleNamespace(api=jax, np=jnp, au=jax.api_util, lu=jax.extend.linear_util, core=jax.extend.core,
                      jcore=jax.core, pe=jax.interpreters.partial_eval, ad=jax.interpreters.ad,
                      batching=jax.interpreters.batching, mlir=jax.interpreters.mlir, tu=jax.tree_util,
                      mon=jax.monitoring)
BOTH = pytest.mark.parametrize("m", [FUNCAD, JAX], ids=["funcad", "jax"])


def _flat_program(m):
    """numpyro's pattern: flatten a model's arguments, stage the flat function, run its jaxpr."""
    args = ({"x": np.arange(3, dtype=np.float32), "y": np.float32(0.5)}, np.float32(2.0))
    kwargs = {"scale": np.float32(3.0)}
    f = lambda a, b, *, scale: {"s": a["x"] * scale + b, "t": (m.np.sin(a["y"]), b)}
    flat, in_tree = m.tu.tree_flatten((args, kwargs))
    dbg = m.au.debug_info("test", f, args, kwargs)
    flat_f, out_tree = m.au.flatten_fun(m.lu.wrap_init(f, debug_info=dbg), in_tree)
    avals = [m.au.shaped_abstractify(x) for x in flat]
    jaxpr, out_avals, consts = m.pe.trace_to_jaxpr_dynamic(flat_f, avals)
    outs = m.core.jaxpr_as_fun(m.core.ClosedJaxpr(jaxpr, consts))(*flat)
    return (m.tu.tree_unflatten(out_tree(), outs), [(tuple(a.shape), a.dtype) for a in out_avals],
            dbg.arg_names)


def test_flatten_fun_and_trace_to_jaxpr_dynamic_match_jax():
    got, want = _flat_program(FUNCAD), _flat_program(JAX)
    assert funcad.tree_util.tree_structure(got[0]) == funcad.tree_util.tree_structure(
        jax.tree_util.tree_map(np.asarray, want[0]))
    for g, w in zip(funcad.tree_util.tree_leaves(got[0]), jax.tree_util.tree_leaves(want[0])):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    assert got[1] == want[1]
    assert len(got[2]) == len(want[2]) == 4 and got[2][0] == want[2][0].split("[")[0]


@BOTH
def test_out_tree_thunk_before_call_raises(m):
    _, out_tree = m.au.flatten_fun_nokwargs(m.lu.wrap_init(lambda x: x, debug_info=None),
                                            m.tu.tree_structure((1,)))
    with pytest.raises(Exception):
        out_tree()


def _argnums(m):
    f = m.lu.wrap_init(lambda a, b, c: a * b + c, debug_info=None)
    g, dyn = m.au.argnums_partial(f, (0, 2), (np.float32(2), 5, np.float32(1)))
    return float(g.call_wrapped(*[d * 2 for d in dyn])), len(dyn)


def test_argnums_partial_matches_jax():
    assert _argnums(FUNCAD) == _argnums(JAX) == (22.0, 2)


@pytest.mark.parametrize("x", [np.float32(1), 1.0, 3, True, np.ones((2, 3), np.int16)],
                         ids=["f32", "pyfloat", "pyint", "pybool", "i16"])
def test_shaped_abstractify_matches_jax(x):
    g, w = funcad.api_util.shaped_abstractify(x), jax.api_util.shaped_abstractify(x)
    assert (g.shape, g.weak_type) == (w.shape, w.weak_type)
    assert g.dtype.kind == w.dtype.kind


def test_shaped_abstractify_of_shape_dtype_struct_and_tracer_matches_jax():
    for m in (FUNCAD, JAX):
        a = m.au.shaped_abstractify(m.api.ShapeDtypeStruct((2, 3), np.int8))
        assert (a.shape, a.dtype, a.weak_type) == ((2, 3), np.int8, False)
    got, want = [], []
    funcad.jit(lambda x: got.append(funcad.api_util.shaped_abstractify(x)) or x)(np.ones(4, np.float32))
    jax.jit(lambda x: want.append(jax.api_util.shaped_abstractify(x)) or x)(np.ones(4, np.float32))
    assert (got[0].shape, got[0].dtype) == (want[0].shape, want[0].dtype) == ((4,), np.float32)


def test_donation_and_axes_helpers_match_jax():
    args = ((np.ones(2), (np.ones(1), np.ones(3))), {"k": np.ones(2), "a": (1.0, 2.0)})
    for m in (FUNCAD, JAX):
        m.tree = m.tu.tree_structure(args)
    assert funcad.api_util.donation_vector((1,), ("a",), FUNCAD.tree) == \
        jax.api_util.donation_vector((1,), ("a",), JAX.tree)
    assert funcad.api_util.rebase_donate_argnums((1, 4), (0, 2)) == \
        jax.api_util.rebase_donate_argnums((1, 4), (0, 2))
    pos = ((np.ones(2), (np.ones(1), np.ones(3))), np.ones(2))
    for axes in [0, (None, 1), ((0, (1, None)), 0)]:
        assert funcad.api_util.flatten_axes("in_axes", funcad.tree_util.tree_structure(pos), axes) == \
            jax.api_util.flatten_axes("in_axes", jax.tree_util.tree_structure(pos), axes)
    with pytest.raises(ValueError, match="tree prefix"):
        funcad.api_util.flatten_axes("in_axes", funcad.tree_util.tree_structure(pos), (0, 1, 2))


def _dce(m):
    f = lambda x, y, z: [m.np.sin(x) * 2, m.np.cos(y), x + z]
    closed = m.api.make_jaxpr(f)(1.0, 2.0, 3.0)
    jaxpr = closed.jaxpr
    pruned, used = m.pe.dce_jaxpr(jaxpr, [True, False, False])
    pruned2, used2 = m.pe.dce_jaxpr(jaxpr, [False, True, False], instantiate=[False, False, True])
    return used, len(pruned.outvars), used2, len(pruned2.invars)


def test_dce_jaxpr_matches_jax():
    assert _dce(FUNCAD) == _dce(JAX) == ([True, False, False], 1, [False, True, True], 2)


def _transformations(m):
    lu = m.lu

    @lu.transformation2
    def scale(f, k, *args):
        return [k * y for y in f(*args)]

    @lu.transformation_with_aux2
    def with_len(f, store, *args):
        out = f(*args)
        store.store(len(out))
        return out
    base = lu.wrap_init(lambda x, y: [x + y, x * y], debug_info=None)
    h, aux = with_len(scale(base, 10))
    return h.call_wrapped(2, 3), aux()


def test_linear_util_transformations_match_jax():
    assert _transformations(FUNCAD) == _transformations(JAX) == ([50, 60], 2)


@BOTH
def test_monitoring_listeners(m):
    events, durations = [], []
    on_event = lambda e, **kw: events.append((e, kw))
    on_duration = lambda e, d, **kw: durations.append(e)
    m.mon.register_event_listener(on_event)
    m.mon.register_event_duration_secs_listener(on_duration)
    try:
        m.mon.record_event("/my/event", tag="a")
        m.api.jit(lambda x: x * 3.5 - 0.25)(np.arange(7, dtype=np.float32))  # a fresh compile
    finally:
        m.mon.unregister_event_listener(on_event)
        m.mon.unregister_event_duration_listener(on_duration)
    assert events[0] == ("/my/event", {"tag": "a"})
    assert "/jax/core/compile/backend_compile_duration" in durations
    with pytest.raises(Exception):
        m.mon.unregister_event_listener(on_event)


@BOTH
def test_public_core_names(m):
    c = m.jcore
    aval = c.ShapedArray((2,), np.float32)
    assert isinstance(aval, c.AbstractValue)
    assert c.max_dim(3, 5) == 5 and c.min_dim(3, 5) == 3

    @m.api.jit
    def f(x):
        with c.ensure_compile_time_eval():
            n = int(m.np.arange(4).sum())
        with c.eval_context():
            k = int(m.np.ones(3).sum())
        return x * n + k
    assert float(f(np.float32(1))) == 9.0
    closed = m.api.make_jaxpr(lambda x: m.np.sin(x) + 1)(np.float32(0.5))
    np.testing.assert_allclose(c.eval_jaxpr(closed.jaxpr, closed.consts, np.float32(0.5))[0],
                               np.sin(np.float32(0.5)) + 1, rtol=1e-6)


def _opaque_state(m):
    outside = m.core.get_opaque_trace_state(convention="nnx")
    seen = {}

    @m.api.jit
    def f(x):
        seen["inside"] = m.core.get_opaque_trace_state(convention="nnx")
        seen["same"] = seen["inside"] == m.core.get_opaque_trace_state(convention="nnx")
        seen["top"] = m.core.find_top_trace([x]) is not None
        return x
    f(1.0)
    return outside == m.core.get_opaque_trace_state(convention="nnx"), seen["inside"] == outside, \
        seen["same"], seen["top"]


def test_opaque_trace_state_matches_jax():
    """flax's check that a value is used under the trace it was made in."""
    assert _opaque_state(FUNCAD) == _opaque_state(JAX) == (True, False, True, True)


def _unvmap_any(m):
    """equinox's unvmap_any: a primitive whose batched output is not mapped."""
    p = m.core.Primitive("unvmap_any")
    p.def_impl(lambda x: np.any(x))
    p.def_abstract_eval(lambda x: m.jcore.ShapedArray((), np.bool_))
    m.batching.primitive_batchers[p] = lambda args, dims: (p.bind(*args), None)
    m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x: m.np.any(x), multiple_results=False))
    xs = np.array([[-1.0, -2.0], [-3.0, 4.0]], np.float32)
    f = lambda x: m.np.where(p.bind(x > 0), x, -x)
    return [np.asarray(m.api.vmap(f)(xs)), np.asarray(m.api.jit(m.api.vmap(f))(xs)),
            np.asarray(m.api.vmap(f)(xs[:1]))]


def test_equinox_style_unmapped_output_matches_jax():
    for g, w in zip(_unvmap_any(FUNCAD), _unvmap_any(JAX)):
        np.testing.assert_array_equal(g, w)


def _compile_events(m):
    seen = []
    listener = lambda e, d, **kw: seen.append((e, kw.get("fun_name")))
    m.mon.register_event_duration_secs_listener(listener)
    try:
        def my_fun(x):
            return x * 1.75 + 0.125
        m.api.jit(my_fun)(np.arange(5, dtype=np.float32))
        m.api.jit(my_fun)(np.arange(5, dtype=np.float32))  # cached: no new events
    finally:
        m.mon.unregister_event_duration_listener(listener)
    return seen


def test_compile_events_match_jax():
    assert _compile_events(FUNCAD) == _compile_events(JAX) == [
        ("/jax/core/compile/jaxpr_trace_duration", "my_fun"),
        ("/jax/core/compile/jaxpr_to_mlir_module_duration", "jit(my_fun)"),
        ("/jax/core/compile/backend_compile_duration", "jit(my_fun)")]


def test_register_exclusion_hides_library_frames(tmp_path):
    """flax registers its files so that errors point at the user's line, not flax's."""
    import importlib.util
    import sys
    from funcad.core import traceback_util
    lib = tmp_path / "mylib_excl.py"
    lib.write_text("import funcad.numpy as fnp\ndef where_am_i():\n    return __import__("
                   "'funcad.core.traceback_util', fromlist=['x']).user_source()\n")
    spec = importlib.util.spec_from_file_location("mylib_excl", lib)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert "mylib_excl.py" in mod.where_am_i()
    saved = list(traceback_util._exclusions)
    try:
        funcad.extend.source_info_util.register_exclusion(str(tmp_path))
        assert "test_api_util.py" in mod.where_am_i()
    finally:
        traceback_util._exclusions[:] = saved
        traceback_util._internal_cache.clear()
    sys.modules.pop("mylib_excl", None)
