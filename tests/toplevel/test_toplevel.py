"""Top-level helpers against JAX: eval_shape, device queries, device_get,
block_until_ready, disable_jit, ensure_compile_time_eval, named_call and
named_scope; jit's static arguments resolved through the signature."""
from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import FuncadTypeError, ShapeDtypeStruct

Point = collections.namedtuple("Point", "x y")


def _programs(m):
    """(name, fun, args) written once for both numpy modules."""
    return [
        ("matmul_tanh", lambda a, x: m.tanh(a @ x), ((20, 30), (30, 4))),
        ("reduce_pytree", lambda a, x: {"mean": m.mean(a, axis=0), "pair": (a.T, m.sum(x))}, ((5, 3), (2,))),
        ("broadcast", lambda a, x: Point(a[:, None] * x[None, :], m.exp(x)), ((7,), (6,))),
        ("reshape_concat", lambda a, x: m.concatenate([a.reshape(-1), x]), ((2, 3), (4,))),
    ]


@pytest.mark.parametrize("k", range(4), ids=[n for n, *_ in _programs(np)])
def test_eval_shape_matches_jax_and_computes_nothing(k):
    _, ff, shapes = _programs(fnp)[k]
    _, jf, _ = _programs(jnp)[k]
    f_args = [ShapeDtypeStruct(s, np.float32) for s in shapes]
    j_args = [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    got, want = funcad.eval_shape(ff, *f_args), jax.eval_shape(jf, *j_args)
    assert repr(funcad.tree.structure(got)) == repr(jax.tree.structure(want))
    for g, w in zip(funcad.tree.leaves(got), jax.tree.leaves(want)):
        assert type(g) is ShapeDtypeStruct and g.shape == w.shape and g.dtype == w.dtype
    # duck-typed arguments (anything with .shape and .dtype, jax's own struct too)
    again = funcad.eval_shape(ff, *j_args)
    assert funcad.tree.leaves(again) == funcad.tree.leaves(got)


def test_eval_shape_keeps_weak_types_kwargs_and_runs_no_xla():
    out = funcad.eval_shape(lambda x, *, n: (x * 2.0, n + 1), np.ones(3, np.float32), n=1)
    want = jax.eval_shape(lambda x, *, n: (x * 2.0, n + 1), jnp.ones(3, jnp.float32), n=1)
    assert out[0] == ShapeDtypeStruct((3,), np.float32) and out[0].shape == want[0].shape
    assert out[1].weak_type and want[1].weak_type and out[1].shape == ()
    assert repr(out[0]) == "ShapeDtypeStruct(shape=(3,), dtype=float32)"
    calls = []
    big = ShapeDtypeStruct((10**6, 10**6), np.float32)  # 4 TB if anything were computed
    res = funcad.eval_shape(lambda x: calls.append(type(x)) or fnp.sum(x @ x, axis=1), big)
    assert res.shape == (10**6,) and calls and issubclass(calls[0], funcad.core.Tracer)


def test_device_queries_match_jax():
    assert funcad.default_backend() == jax.default_backend()
    for b in (None, "cpu"):
        assert [d.id for d in funcad.devices(b)] == [d.id for d in jax.devices(b)]
        assert [d.platform for d in funcad.devices(b)] == [d.platform for d in jax.devices(b)]
        assert funcad.device_count(b) == jax.device_count(b)
        assert funcad.local_device_count(b) == jax.local_device_count(b)
        assert [d.id for d in funcad.local_devices(backend=b)] == [d.id for d in jax.local_devices(backend=b)]
    assert funcad.process_index() == jax.process_index() and funcad.process_count() == jax.process_count()
    assert [d.id for d in funcad.local_devices(process_index=0)] == [d.id for d in jax.local_devices(0)]
    with pytest.raises(funcad.BackendError, match="Unknown backend"):
        funcad.devices("tpu9")


def test_device_get_turns_arrays_into_numpy_like_jax():
    y = funcad.jit(lambda x: x * 2.0)(np.arange(3.0))
    tree = {"y": y, "np": np.ones(2), "s": 3, "f": 1.5, "none": None, "name": "w"}
    got = funcad.device_get(tree)
    want = jax.device_get({"y": jnp.arange(3.0) * 2.0, "np": np.ones(2), "s": 3, "f": 1.5, "none": None,
                           "name": "w"})
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in want.items()}
    np.testing.assert_array_equal(got["y"], [0.0, 2.0, 4.0])
    assert funcad.device_get(4) == 4 and type(funcad.device_get(np.float64(2.0))) is type(jax.device_get(np.float64(2.0)))
    # under a transformation, traced leaves are passed through as in JAX
    assert float(funcad.grad(lambda x: funcad.device_get(x) ** 2)(3.0)) == 6.0


def test_block_until_ready_on_pytrees_of_anything():
    y = funcad.jit(lambda x: x + 1.0)(np.ones(3))
    tree = {"a": [y, np.zeros(2)], "b": (3, 2.5, None), "c": fnp.sin(np.ones(2)), "d": 10 + y}
    assert funcad.block_until_ready(tree) is tree
    assert funcad.block_until_ready(y) is y and funcad.block_until_ready(4.0) == 4.0
    assert funcad.block_until_ready(np.float64(1.0)) == 1.0
    assert jax.block_until_ready({"a": [np.zeros(2)], "b": (3, None)}) is not None  # same inputs work in JAX
    # inside a transformation it passes tracers through
    np.testing.assert_allclose(funcad.jit(lambda x: funcad.block_until_ready(x * 2))(np.ones(2)), [2.0, 2.0])


def test_disable_jit_runs_the_python_function_eagerly():
    seen = []

    @funcad.jit
    def f(x):
        seen.append(type(x))
        return fnp.where(x > 0, x, 0.0) if isinstance(x, funcad.core.Tracer) else (x if x > 0 else 0.0)

    with funcad.disable_jit():
        assert f(3.0) == 3.0 and f(-1.0) == 0.0  # Python control flow on values works
        assert seen == [float, float]
        g = funcad.grad(f)(2.0)  # under another transformation, too
    assert float(g) == 1.0
    assert f._cache_size() == 0
    assert float(f(2.0)) == 2.0 and issubclass(seen[-1], funcad.core.Tracer)  # compiled again after
    with funcad.disable_jit():
        with funcad.disable_jit(False):
            f(5.0)
        assert f._cache_size() == 1
    # other threads keep compiling, and the dispatch path is restored afterwards
    import threading
    other = []
    with funcad.disable_jit():
        t = threading.Thread(target=lambda: other.append(type(f(np.float64(7.0)))))
        t.start()
        t.join()
    assert other == [funcad.Array]
    assert type(f).__call__ is not funcad.transforms.tracing._maybe_eager_call
    jseen = []
    with jax.disable_jit():
        jax.jit(lambda x: jseen.append(type(x)) or x)(3.0)
    assert jseen == [float]  # what JAX does


def test_ensure_compile_time_eval_under_jit_matches_jax():
    def prog(m, cte):
        def f(x):
            with cte():
                n = int(m.sum(m.arange(4)))  # concrete inside jit: 6
                table = m.cos(m.arange(3.0))
            return x * n + table[1] + m.sin(x)
        return f

    got = funcad.jit(prog(fnp, funcad.ensure_compile_time_eval))(np.float32(0.5))
    want = jax.jit(prog(jnp, jax.ensure_compile_time_eval))(np.float32(0.5))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    with pytest.raises(funcad.ConcretizationError):
        funcad.jit(lambda x: int(x) + 1)(2.0)  # without it, concrete values are staged
    # outside any transformation it is a no-op; with tracers it still traces
    with funcad.ensure_compile_time_eval():
        assert float(fnp.sum(fnp.ones(3))) == 3.0
    assert float(funcad.grad(lambda x: _cte_square(x))(3.0)) == 6.0


def _cte_square(x):
    with funcad.ensure_compile_time_eval():
        return x * x


def test_named_call_and_named_scope_compute_the_same():
    def loss(w):
        with funcad.named_scope("layer"):
            return fnp.sum(fnp.tanh(w) ** 2)
    named = funcad.named_call(loss, name="my_loss")
    assert named.__name__ == "my_loss" and funcad.named_call(loss).__name__ == "loss"
    w = np.linspace(-1, 1, 4)
    np.testing.assert_allclose(funcad.jit(funcad.grad(named))(w), funcad.grad(loss)(w))
    jloss = lambda w: jnp.sum(jnp.tanh(w) ** 2)  # noqa: E731
    with jax.enable_x64(True):
        np.testing.assert_allclose(funcad.grad(named)(w), jax.grad(jax.named_call(jloss, name="l"))(w))


def test_static_argnames_apply_to_positional_arguments_and_argnums_to_keywords():
    traces = []

    def f(x, n):
        traces.append(n)
        for _ in range(n):  # Python control flow: n must be static
            x = x * 2.0
        return x

    by_name = funcad.jit(f, static_argnames="n")
    assert float(by_name(2.0, 3)) == 16.0 and float(by_name(2.0, n=3)) == 16.0
    assert float(jax.jit(f, static_argnames="n")(2.0, 3)) == 16.0
    by_num = funcad.jit(f, static_argnums=1)
    assert float(by_num(2.0, n=2)) == 8.0 and float(by_num(2.0, 2)) == 8.0
    assert by_name.static_argnums == (1,) and by_num.static_argnames == ("n",)
    assert all(isinstance(n, int) for n in traces)
    both = funcad.jit(lambda x, n, *, scale: x * n * scale, static_argnums=1, static_argnames="scale")
    assert float(both(2.0, 3, scale=2.0)) == 12.0
    # negative argnums count from the signature's end, as in JAX
    assert float(funcad.jit(f, static_argnums=-1)(1.0, 1)) == 2.0


def test_static_arg_errors_match_jax():
    def f(x, n):
        return x
    for jit in (funcad.jit, jax.jit):
        with pytest.raises(ValueError):
            jit(f, static_argnums=2)
        with pytest.raises(ValueError):
            jit(f, static_argnames="m")
    with pytest.raises(ValueError, match="positional-only"):
        funcad.jit(lambda x, n, /: x, static_argnames="n")
    funcad.jit(lambda x, **kw: x, static_argnames="anything")  # **kwargs take any name
    funcad.jit(lambda *xs: xs[0], static_argnums=5)  # *args take any position
    assert funcad.jit(max, static_argnums=(0, 1))(1, 2) == 2  # no signature: kept as given


def test_jit_of_a_non_callable_fails_at_once():
    with pytest.raises(FuncadTypeError, match="expected a callable, got 3"):
        funcad.jit(3)
    with pytest.raises(TypeError):
        jax.jit(3)
    with pytest.raises(FuncadTypeError, match="expected a callable"):
        funcad.jit(static_argnums=0)("not a function")


def test_names_exist():
    for name in ("device_get", "block_until_ready", "devices", "local_devices", "device_count",
                 "local_device_count", "default_backend", "eval_shape", "disable_jit", "named_call",
                 "named_scope", "ensure_compile_time_eval", "process_index", "process_count"):
        assert hasattr(jax, name) and callable(getattr(funcad, name)), name


def test_import_funcad_stays_light():
    """scipy's linalg/sparse/special and the user namespaces load on first use (cold start)."""
    import subprocess
    import sys
    code = ("import sys, funcad; heavy = [m for m in ('scipy.linalg', 'scipy.sparse', 'scipy.special', "
            "'funcad.random', 'funcad.nn', 'funcad.scipy', 'funcad.transforms.sparsity') if m in sys.modules]; "
            "print(heavy); assert callable(funcad.sparse_jacfwd) and funcad.random.PRNGKey(0).shape == (2,)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.filterwarnings("ignore:jax.process", "ignore:funcad.host")
def test_process_helpers_match_jax():
    with pytest.warns(UserWarning, match="funcad.host_count has been renamed to funcad.process_count"):
        funcad.host_count()
    assert funcad.host_count() == jax.host_count() == 1  # (both warn: renamed)
    assert funcad.host_id() == jax.host_id() == 0
    assert funcad.host_ids() == jax.host_ids() == [0]
    assert funcad.process_indices() == jax.process_indices() == [0]


def test_device_class_live_arrays_and_copy_to_host_async():
    assert all(isinstance(d, funcad.Device) for d in funcad.devices())
    assert not isinstance("cpu", funcad.Device)
    x = funcad.device_put(np.arange(3.0))
    assert any(a is x for a in funcad.live_arrays()) and any(a is x for a in funcad.live_arrays("cpu"))
    x.delete()
    assert not any(a is x for a in funcad.live_arrays())
    y = funcad.jit(lambda v: v * 2)(np.ones(2))
    tree = {"y": y, "n": 3, "h": np.ones(1)}
    assert funcad.copy_to_host_async(tree) is tree
    np.testing.assert_array_equal(np.asarray(y), [2.0, 2.0])


def test_print_environment_info(capsys):
    assert funcad.print_environment_info() is None
    out = capsys.readouterr().out
    for key in ("funcad:", "jax:", "jaxlib:", "numpy:", "python:", "devices:"):
        assert key in out
    assert funcad.print_environment_info(return_string=True) == out[:-1] or "numpy:" in out


def test_top_level_names_are_in_dir_and_all():
    names = ["Device", "copy_to_host_async", "debug_infs", "debug_nans", "default_matmul_precision",
             "dtypes", "enable_checks", "errors", "host_count", "host_id", "host_ids", "live_arrays",
             "log_compiles", "no_execution", "no_tracing", "numpy_rank_promotion",
             "print_environment_info", "process_indices", "typing"]
    for name in names:
        assert hasattr(jax, name) and name in dir(funcad) and name in funcad.__all__, name
