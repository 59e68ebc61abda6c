"""jit: StableHLO lowering, XLA execution, caching, composition with the other transforms
(jit_p's rules: weak types kept, any batch axis, forwarded residuals)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import lax
from funcad.core.errors import ConcretizationError, FuncadTypeError, MissingRuleError
from funcad.core.trace import Primitive, abstract_eval_rules, impl_rules
from funcad.lowering import xla
from funcad.lowering.array import Array
from funcad.transforms import jit as jit_mod
from funcad.transforms.jaxpr_transforms import forward_residuals, partial_eval_jaxpr
from funcad.tree_util import tree_leaves

from tests.op_table import OPS

FLOATS = (np.float32, np.float64)


def tol(dtype, extra=None):
    # XLA's float32 transcendental approximations differ from NumPy's by a few ulps.
    base = 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-9
    return base + (extra or 0.0)


def assert_close(got, want, dtype, extra=None):
    got_l, want_l = tree_leaves(got), tree_leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            t = tol(dtype, extra)
            np.testing.assert_allclose(g, w, rtol=t, atol=t)


# ------------------------------------------------------------- the op table ----

def _summed(f):
    def g(*args):
        return sum(fnp.sum(leaf) for leaf in tree_leaves(f(*args)))
    return g


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in OPS])
def test_op_table_under_jit_matches_eager(spec):
    """Every dtype of a row under jit equals the NumPy interpreter, and for
    differentiable rows jit(grad(sum f)) equals eager grad in every float dtype.

    All of a row's cases run in one jitted function, so each row compiles once.
    """
    cases = []  # (dtype, args, function of args)
    for dtype in spec.dtypes:
        args = spec.args(np.random.default_rng(0), dtype)
        cases.append((dtype, args, spec.fun))
        if spec.diff and np.dtype(dtype).kind == "f":
            argnums = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
            cases.append((dtype, args, funcad.grad(_summed(spec.fun), argnums=argnums)))
    outs = funcad.jit(lambda all_args: [f(*a) for (_, _, f), a in zip(cases, all_args)])(
        [args for _, args, _ in cases])
    for (dtype, args, f), got in zip(cases, outs):
        extra = spec.rtol if f is spec.fun else 10 * (spec.rtol or 0) + (1e-4 if dtype == np.float32 else 0)
        assert_close(got, f(*args), dtype, extra)


# ------------------------------------------------------------- composition ----

def f_scalar(x):
    return fnp.sum(fnp.sin(x) * x + fnp.exp(-x * x))


def f_mlp(params, x):
    (w1, b1), (w2, b2) = params
    h = fnp.tanh(x @ w1 + b1)
    return fnp.mean((h @ w2 + b2) ** 2)


def _mlp_args(dtype):
    rng = np.random.default_rng(1)
    params = [(rng.normal(size=(4, 5)).astype(dtype), rng.normal(size=5).astype(dtype)),
              (rng.normal(size=(5, 3)).astype(dtype), rng.normal(size=3).astype(dtype))]
    return params, rng.normal(size=(6, 4)).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_composition_matrix_agrees_with_eager(dtype):
    x = np.linspace(-1.0, 1.5, 5).astype(dtype)
    jf = funcad.jit(f_scalar)
    assert_close(jf(x), f_scalar(x), dtype)
    g = funcad.grad(f_scalar)(x)
    assert_close(funcad.grad(jf)(x), g, dtype)
    assert_close(funcad.jit(funcad.grad(f_scalar))(x), g, dtype)
    assert_close(funcad.jit(funcad.jit(f_scalar))(x), f_scalar(x), dtype)
    assert_close(funcad.jit(funcad.grad(jf))(x), g, dtype)
    t = np.ones_like(x)
    assert_close(funcad.jvp(jf, (x,), (t,)), funcad.jvp(f_scalar, (x,), (t,)), dtype)
    assert_close(funcad.hessian(jf)(x), funcad.hessian(f_scalar)(x), dtype, 1e-4)
    y, f_lin = funcad.linearize(jf, x)
    assert_close(f_lin(t), funcad.jvp(f_scalar, (x,), (t,))[1], dtype)


def test_composition_with_pytrees_and_vmap():
    params, x = _mlp_args(np.float64)
    jf = funcad.jit(f_mlp)
    want = funcad.grad(f_mlp)(params, x)
    assert_close(funcad.grad(jf)(params, x), want, np.float64)
    assert_close(funcad.jit(funcad.grad(f_mlp))(params, x), want, np.float64)
    xs = np.stack([x, 2 * x, -x])
    per = [funcad.grad(f_mlp, argnums=1)(params, xi) for xi in xs]
    batched = funcad.vmap(funcad.grad(jf, argnums=1), in_axes=(None, 0))(params, xs)
    assert_close(batched, np.stack(per), np.float64)
    assert_close(funcad.jit(funcad.vmap(f_mlp, in_axes=(None, 0)))(params, xs),
                 np.array([f_mlp(params, xi) for xi in xs]), np.float64)


def test_vmap_of_jit_batches_the_inner_jaxpr():
    jf = funcad.jit(lambda a, b: (fnp.sin(a) * b, b.sum()))
    a, b = np.arange(6.0).reshape(2, 3), np.array([2.0, -1.0])
    out, total = funcad.vmap(jf, in_axes=(1, None))(a, b)
    np.testing.assert_allclose(out, (np.sin(a) * b[:, None]).T)
    np.testing.assert_allclose(total, np.full(3, 1.0))
    # the batched jaxpr is a jit call too
    assert "jit[" in str(funcad.make_jaxpr(funcad.vmap(jf, in_axes=(1, None)))(a, b))


def test_vjp_of_jit_with_vector_output_and_closure_over_tracer():
    x = np.array([0.3, -1.2, 2.0])
    y, pull = funcad.vjp(funcad.jit(lambda v: fnp.sin(v) * v), x)
    (ct,) = pull(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(ct, np.array([1.0, 2.0, 3.0]) * (np.cos(x) * x + np.sin(x)), rtol=1e-12)
    # The jitted function closes over the differentiated value.
    g = funcad.grad(lambda a: funcad.jit(lambda v: fnp.sin(a) * v)(a))(3.0)
    np.testing.assert_allclose(g, np.cos(3.0) * 3.0 + np.sin(3.0), rtol=1e-12)


def test_grad_of_jit_compiles_once_and_runs_two_calls():
    calls = []

    def f(x):
        calls.append(1)
        return fnp.sum(fnp.tanh(x) ** 2)

    jf = funcad.jit(f)
    x = np.linspace(0, 1, 7)
    g1 = funcad.grad(jf)(x)
    n_compiled = len(xla._exe_cache)
    g2 = funcad.grad(jf)(x + 1.0)
    assert len(calls) == 1 and len(xla._exe_cache) == n_compiled
    np.testing.assert_allclose(g2, 2 * np.tanh(x + 1) * (1 - np.tanh(x + 1) ** 2), rtol=1e-12)
    assert isinstance(g1, Array)


def test_partial_eval_jaxpr_splits_known_and_unknown():
    closed = funcad.make_jaxpr(lambda x, t: (fnp.cos(x) * 2.0, fnp.sin(x) * t))(1.0, 2.0)
    known, unknown, out_unknowns, nres = partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [False, True] and nres == 1
    assert [e.prim.name for e in known.eqns] == ["cos", "mul", "sin"]
    assert [e.prim.name for e in unknown.eqns] == ["mul"]
    k_out, res = known(0.5)
    np.testing.assert_allclose(k_out, 2 * np.cos(0.5))
    np.testing.assert_allclose(unknown(res, 3.0)[0], np.sin(0.5) * 3.0)


# ----------------------------------------------------------- cache & API ----

def test_cache_hits_do_not_retrace():
    calls = []

    def f(x, y):
        calls.append(1)
        return x * y + 1.0

    jf = funcad.jit(f)
    a, b = np.ones(3, np.float32), np.full(3, 2.0, np.float32)
    out = jf(a, b)
    jf(a + 1, b)
    jf(out, b)            # a device Array of the same type: same entry
    jf(a, y=b)            # keyword: a new signature (traced once more)
    jf(a, y=b)
    assert len(calls) == 2
    jf(np.ones(4, np.float32), np.ones(4, np.float32))
    jf(a.astype(np.float64), b.astype(np.float64))
    assert len(calls) == 4 and jf._cache_size() == 4
    np.testing.assert_allclose(jf(a, b), [3.0, 3.0, 3.0])


def test_cache_is_bounded_lru_and_clearable(monkeypatch):
    monkeypatch.setattr(jit_mod, "CACHE_SIZE", 2)
    calls = []
    jf = funcad.jit(lambda x: calls.append(1) or x + 1)
    for n in (1, 2, 3, 1):
        jf(np.zeros(n))
    assert jf._cache_size() == 2 and len(calls) == 4  # shape 1 was evicted, traced again
    jf(np.zeros(1))
    assert len(calls) == 4
    jf.clear_cache()
    assert jf._cache_size() == 0
    jf(np.zeros(1))
    assert len(calls) == 5


def test_static_argnums_and_argnames():
    calls = []

    def f(x, n, *, scale):
        calls.append(1)
        for _ in range(n):  # Python control flow on static values
            x = fnp.sin(x)
        return x * scale

    jf = funcad.jit(f, static_argnums=1, static_argnames="scale")
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(jf(x, 2, scale=3.0), np.sin(np.sin(x)) * 3.0)
    jf(x + 1, 2, scale=3.0)
    assert len(calls) == 1
    np.testing.assert_allclose(jf(x, 3, scale=3.0), np.sin(np.sin(np.sin(x))) * 3.0)
    assert len(calls) == 2
    with pytest.raises(FuncadTypeError, match="hashable"):
        funcad.jit(lambda x, s: x, static_argnums=1)(x, [1, 2])


def test_pytrees_kwargs_and_decorator_forms():
    @funcad.jit
    def f(d, scale=1.0):
        return {"sum": d["a"] + d["b"][0], "none": None, "pair": (d["a"] * scale, 2)}

    out = f({"a": np.ones(2), "b": (np.arange(2.0),)}, scale=3.0)
    np.testing.assert_allclose(out["sum"], [1.0, 2.0])
    np.testing.assert_allclose(out["pair"][0], [3.0, 3.0])
    assert out["none"] is None and int(out["pair"][1]) == 2

    @funcad.jit(static_argnums=(1,))
    def g(x, k):
        return x[:k]

    np.testing.assert_allclose(g(np.arange(5.0), 2), [0.0, 1.0])


def test_lower_as_text_and_compile():
    jf = funcad.jit(lambda x, y: fnp.dot(x, y) + 1.0)
    x = np.ones((2, 3), np.float32)
    y = np.ones((3, 4), np.float32)
    lowered = jf.lower(x, y)
    text = lowered.as_text()
    assert "func.func public @main" in text and "stablehlo.dot_general" in text
    assert "tensor<2x3xf32>" in text and "tensor<2x4xf32>" in text
    compiled = lowered.compile()
    np.testing.assert_allclose(compiled(x, y), np.full((2, 4), 4.0))
    with pytest.raises(FuncadTypeError, match="other argument types"):
        compiled(x.astype(np.float64), y)


def test_reductions_sort_gather_scatter_cumulative_in_one_module():
    def f(x, idx):
        s = fnp.sort(x, axis=1)
        return (fnp.max(x, axis=0), fnp.argmax(x, axis=1), fnp.cumsum(x, axis=1)[:, ::-1],
                x[idx], lax.scatter_add(fnp.zeros_like(x), idx[:, None], fnp.ones((3, 5))), s,
                fnp.prod(x, axis=1))

    x = np.random.default_rng(0).normal(size=(4, 5))
    idx = np.array([3, 0, 3])
    assert_close(funcad.jit(f)(x, idx), f(x, idx), np.float64)


def test_special_float_values_follow_numpy():
    x = np.array([[1.0, np.nan, 3.0], [-0.0, 0.0, -np.inf]])

    def f(x):
        return fnp.argmax(x, axis=1), fnp.argmin(x, axis=1), fnp.sort(x, axis=1), fnp.max(x, axis=1)

    got, want = funcad.jit(f)(x), f(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


# ------------------------------------------------------------ dtypes ----

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_])
def test_dtypes_round_trip(dtype):
    x = (np.arange(6) % 3).astype(dtype).reshape(2, 3)

    def f(x):
        if x.dtype == np.bool_:
            return fnp.logical_not(x), fnp.any(x, axis=1)
        return x * 2 + 1, fnp.sum(x, axis=1), x > 1

    got, want = funcad.jit(f)(x), f(x)
    assert_close(got, want, dtype if np.dtype(dtype).kind == "f" else np.float64)
    assert got[0].dtype == np.dtype(dtype)


def test_weak_types_and_python_scalars():
    x32 = np.ones(3, np.float32)
    out = funcad.jit(lambda x: x * 2.0 + 1)(x32)
    assert out.dtype == np.float32
    c = funcad.jit(lambda: 1.0)()
    assert c.dtype == np.float64 and c.weak_type
    assert funcad.jit(lambda x: x * 2)(3).dtype == np.int64
    assert float(funcad.jit(lambda x, y: x / y)(1.0, 4)) == 0.25


def test_float64_is_exact_without_jax_x64():
    x = np.array([1.0 + 2 ** -40, 1e-300])
    np.testing.assert_array_equal(funcad.jit(lambda v: v * 1.0)(x), x)


def test_grad_with_integer_argument_gives_float0_under_jit():
    g = funcad.jit(funcad.grad(lambda x, n: fnp.sin(x) * n, argnums=(0, 1), allow_int=True))(0.5, 3)
    np.testing.assert_allclose(g[0], 3 * np.cos(0.5))
    assert g[1].dtype == funcad.float0


# ------------------------------------------------- device-resident arrays ----

def test_results_stay_on_device_and_chain_without_host_copies():
    f = funcad.jit(lambda x: x * 2.0 + 1.0)
    y = f(np.arange(4, dtype=np.float32))
    z = f(f(y))
    assert type(y) is Array and type(z) is Array
    assert y._host is None and z._host is None  # never copied to the host
    np.testing.assert_allclose(np.asarray(z), ((np.arange(4) * 2 + 1) * 2 + 1) * 2 + 1)
    assert z.block_until_ready() is z


def test_array_behaves_like_an_array_eagerly():
    y = funcad.jit(lambda x: x * 2.0)(np.arange(6.0).reshape(2, 3))
    assert repr(y) == "Array([[ 0.,  2.,  4.],\n       [ 6.,  8., 10.]], dtype=float64)"
    assert str(y) == str(np.arange(6.0).reshape(2, 3) * 2)
    assert y.shape == (2, 3) and y.ndim == 2 and y.size == 6 and len(y) == 2
    np.testing.assert_allclose(y + 1, np.arange(6.0).reshape(2, 3) * 2 + 1)
    np.testing.assert_allclose(y.T.sum(axis=1), [6.0, 10.0, 14.0])
    np.testing.assert_allclose(fnp.sin(y), np.sin(np.asarray(y)))
    np.testing.assert_allclose(np.exp(y), np.exp(np.asarray(y)))
    assert float(y[1, 2]) == 10.0 and y[0].tolist() == [0.0, 2.0, 4.0]
    assert f"{funcad.jit(lambda: 2.5)():.2f}" == "2.50"
    # used inside other transforms, it is a constant
    np.testing.assert_allclose(funcad.grad(lambda a: fnp.sum(a * y))(np.ones((2, 3))), np.asarray(y))


def test_closed_over_arrays_are_passed_as_arguments():
    w = np.random.default_rng(0).normal(size=(50, 50))
    dev = funcad.device_put(w)
    f = funcad.jit(lambda x: lax.dot_general(x, dev, (((1,), (0,)), ((), ()))) + x @ w)
    text = f.lower(np.ones((2, 50))).as_text()
    assert "%c0: tensor<50x50xf64>" in text and "%c1: tensor<50x50xf64>" in text  # not inlined
    np.testing.assert_allclose(f(np.ones((2, 50))), 2 * np.ones((2, 50)) @ w, rtol=1e-12)


def test_donation_deletes_donated_device_input():
    f = funcad.jit(lambda x, y: x + y, donate_argnums=0)
    assert "jax.buffer_donor = true" in f.lower(np.ones(4), np.ones(4)).as_text()
    a = funcad.device_put(np.ones(4))
    out = f(a, np.ones(4))
    np.testing.assert_allclose(out, 2.0)
    assert a.is_deleted()
    with pytest.raises(RuntimeError, match="donated"):
        np.asarray(a)
    host = np.ones(4)
    f(host, host)
    np.testing.assert_allclose(host, 1.0)  # NumPy inputs are copied, never donated


# ----------------------------------------------------------------- errors ----

def test_python_control_flow_on_traced_value_explains():
    with pytest.raises(ConcretizationError, match="static_argnums"):
        funcad.jit(lambda x: x if x > 0 else -x)(1.0)


def test_missing_lowering_rule_names_the_primitive():
    p = Primitive("my_unlowerable")
    impl_rules[p] = lambda x: x
    abstract_eval_rules[p] = lambda x: x
    with pytest.raises(MissingRuleError, match="my_unlowerable"):
        funcad.jit(lambda x: p.bind(x))(1.0)


# --------------------------------------------------------------- backends ----

def test_import_funcad_does_not_import_jax():
    code = ("import sys, numpy as np, funcad, funcad.numpy as fnp\n"
            "jf = funcad.jit(fnp.sin)\n"
            "print(funcad.make_jaxpr(funcad.grad(jf))(1.0), jf.lower(np.ones(3)).as_text())\n"
            "assert not any(m == 'jax' or m.startswith(('jax.', 'jaxlib')) for m in sys.modules), "
            "sorted(m for m in sys.modules if m.startswith('jax'))\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_default_backend_setting_drops_compiled_entries():
    jf = funcad.jit(lambda x: x + 1.0)
    jf(np.ones(2))
    assert jf._cache_size() == 1
    try:
        xla.set_default_backend("cpu")
        assert xla.default_backend() == "cpu" and jf._cache_size() == 0
        np.testing.assert_allclose(jf(np.ones(2)), 2.0)
        assert jf(np.ones(2)).device.platform == "cpu"
    finally:
        xla.set_default_backend(None)


@pytest.mark.skipif(xla.gpu_available(), reason="checks the error raised without a GPU")
def test_gpu_backend_without_gpu_raises_clearly():
    with pytest.raises(xla.BackendError, match="no CUDA GPU"):
        funcad.jit(fnp.sin, backend="gpu")(1.0)


@pytest.mark.gpu
@pytest.mark.skipif(not xla.gpu_available(), reason="no CUDA GPU")
def test_gpu_backend_runs_and_moves_arrays():
    f = funcad.jit(lambda x: fnp.tanh(x) @ x.T, backend="gpu")
    x = np.random.default_rng(0).normal(size=(64, 64)).astype(np.float32)
    y = f(x)
    assert y.device.platform in ("gpu", "cuda")
    np.testing.assert_allclose(y, np.tanh(x) @ x.T, rtol=1e-2, atol=1e-2)  # TF32 dots
    z = funcad.jit(lambda v: v + 1.0, backend="cpu")(y)  # crosses devices through the host
    np.testing.assert_allclose(z, np.asarray(y) + 1.0, rtol=1e-6)
    g = funcad.grad(funcad.jit(lambda v: fnp.sum(fnp.sin(v) ** 2), backend="gpu"))(x.astype(np.float64))
    np.testing.assert_allclose(g, np.sin(2 * x.astype(np.float64)), rtol=1e-10)


def _jit_eqns(closed):
    return [e for e in closed.jaxpr.eqns if e.prim.name == "jit"]


def test_jvp_of_jit_keeps_weak_types():
    f = funcad.jit(lambda x, y: (x, x * y))
    (p0, p1), (t0, t1) = funcad.jvp(f, (1.0, 2.0), (1.0, 1.0))
    assert (p0.weak_type, p1.weak_type, t0.weak_type) == (True, True, True)
    assert (float(p1), float(t1)) == (2.0, 3.0)


def test_vmap_of_jit_batches_inside_the_call_along_any_axis():
    g = funcad.jit(lambda a: fnp.sin(a) * 2.0)
    xs = np.arange(12.0).reshape(3, 4)
    closed = funcad.make_jaxpr(funcad.vmap(g, in_axes=1))(xs)
    assert [e.prim.name for e in closed.jaxpr.eqns] == ["jit"]  # no transpose outside
    np.testing.assert_allclose(funcad.vmap(g, in_axes=1)(xs), (np.sin(xs) * 2.0).T, rtol=1e-15)


def test_forward_residuals_passes_known_inputs_on():
    closed = funcad.make_jaxpr(lambda x, t: fnp.cos(x) * t + x * t)(1.0, 2.0)
    known, unknown, _, nres = partial_eval_jaxpr(closed, [False, True])
    fwd, sources = forward_residuals(known, nres)
    assert ("in", 0) in sources  # x itself is a residual: not an output any more
    assert len(fwd.jaxpr.outvars) == len(known.jaxpr.outvars) - sources.count(("in", 0))
    k_outs = fwd(1.0)
    res = [1.0 if kind == "in" else k_outs[i] for kind, i in sources]
    np.testing.assert_allclose(unknown(*res, 2.0)[0], np.cos(1.0) * 2.0 + 2.0, rtol=1e-15)


def test_grad_of_jit_known_call_returns_no_forwarded_input():
    f = funcad.jit(lambda x: fnp.sum(fnp.sin(x) * x))
    x = np.linspace(0.1, 1.0, 5)
    closed = funcad.make_jaxpr(funcad.grad(f))(x)
    known = _jit_eqns(closed)[0]
    assert all(v is not known.params["jaxpr"].jaxpr.invars[0] for v in known.params["jaxpr"].jaxpr.outvars)
    np.testing.assert_allclose(funcad.grad(f)(x), np.cos(x) * x + np.sin(x), rtol=1e-14)
