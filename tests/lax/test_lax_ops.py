"""funcad.lax's operations beyond the op rows, against JAX: precision and mode types, bit
and rounding ops at their edges, top_k, gather and scatter modes and errors, ragged_dot,
custom_linear_solve and custom_root derivatives in every mode, and the small helpers."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
from funcad.core.errors import FuncadError

jl = jax.lax
jax.config.update("jax_enable_x64", True)


def _needs(*names):
    """Skip where the installed (oldest supported) JAX lacks the oracle."""
    missing = [n for n in names if not hasattr(jl, n)]
    return pytest.mark.skipif(bool(missing), reason=f"this JAX has no lax.{missing}")


# ---------------------------------------------------------------- types ----

@_needs('RoundingMethod')
def test_precision_and_mode_enums():
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("tensorfloat32") is lax.Precision.HIGH
    assert lax.GatherScatterMode.from_any(None) is lax.GatherScatterMode.FILL_OR_DROP
    assert lax.GatherScatterMode.from_any("clip") is lax.GatherScatterMode.CLIP
    assert lax.GatherScatterMode.from_any(jl.GatherScatterMode.CLIP) is lax.GatherScatterMode.CLIP
    with pytest.raises(FuncadError, match="Unknown gather mode"):
        lax.GatherScatterMode.from_any("wrap")
    assert int(lax.RoundingMethod.TO_NEAREST_EVEN) == int(jl.RoundingMethod.TO_NEAREST_EVEN)
    dn = lax.GatherDimensionNumbers((1,), (0,), (0,))
    assert dn.operand_batching_dims == () and dn._fields == jl.GatherDimensionNumbers._fields
    assert lax.ScatterDimensionNumbers._fields == jl.ScatterDimensionNumbers._fields


@pytest.mark.parametrize("precision", [None, "highest", lax.Precision.HIGH, jl.Precision.DEFAULT,
                                       ("high", "highest")])
def test_dot_general_precision_forms(precision):
    x, y = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    out = lax.dot_general(x, y, (((1,), (0,)), ((), ())), precision=precision)
    np.testing.assert_array_equal(out, x @ y)


def test_dot_general_preferred_element_type():
    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    out = lax.dot_general(x, x.T, (((1,), (0,)), ((), ())), preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, jl.dot_general(x, x.T, (((1,), (0,)), ((), ())),
                                                      preferred_element_type=np.int32))
    with pytest.raises(FuncadError, match="precision"):
        lax.dot_general(x, x.T, (((1,), (0,)), ((), ())), precision="fast")


# ------------------------------------------------------- elementwise bits ----

@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_reduce_precision_matches_jax_bitwise(dt):
    rng = np.random.default_rng(0)
    with np.errstate(over="ignore"):
        x = (rng.standard_normal(500) * np.exp(rng.uniform(-20, 20, 500))).astype(dt)
    x[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    e_max, m_max = {np.float16: (5, 10), np.float32: (8, 23), np.float64: (11, 52)}[dt]
    for e, m in [(5, 10), (8, 7), (4, 3), (2, 1), (3, 0), (e_max, m_max)]:
        if e > e_max or m > m_max:
            continue
        want = np.asarray(jl.reduce_precision(x, e, m))
        # With no mantissa bits, XLA before jaxlib 0.7 turned NaN into inf; newer XLA (and
        # funcad's NumPy impl) keep NaN. Compare the NaN entry only where they agree.
        keep = slice(None) if m > 0 or np.isnan(want[0]) else slice(1, None)
        for got in (lax.reduce_precision(x, e, m), funcad.jit(lambda v: lax.reduce_precision(v, e, m))(x)):
            np.testing.assert_array_equal(np.asarray(got)[keep].view(f"u{x.itemsize}"),
                                          want[keep].view(f"u{x.itemsize}"))


def test_reduce_precision_derivative_is_rounded_tangent():
    f = lambda x: lax.reduce_precision(x * 3.0, 5, 10)  # noqa: E731
    assert float(funcad.grad(f)(1.0)) == float(jax.grad(lambda x: jl.reduce_precision(x * 3.0, 5, 10))(1.0))
    _, t = funcad.jvp(f, (1.0,), (1.0 + 2.0 ** -13,))
    assert float(t) == 3.0  # 3 (1 + 2^-13) rounded to float16's grid
    with pytest.raises(FuncadError, match="float16, float32 or float64"):
        lax.reduce_precision(np.arange(3), 5, 10)


def test_nextafter_edges_match_numpy_and_jax():
    x = np.array([0.0, 0.0, -0.0, 1.0, np.nan, 1.0, np.inf, -np.inf, 5e-324, 3.0])
    y = np.array([1.0, -1.0, 1.0, 1.0, 1.0, np.nan, 0.0, 0.0, 0.0, 3.0])
    for got in (lax.nextafter(x, y), funcad.jit(lax.nextafter)(x, y)):
        np.testing.assert_array_equal(got, np.nextafter(x, y))
        np.testing.assert_array_equal(got, jl.nextafter(x, y))
    np.testing.assert_array_equal(lax.nextafter(np.float32(1), np.float32(2)), np.nextafter(np.float32(1), np.float32(2)))


@_needs('mulhi')
def test_mulhi_extremes_and_scalar_broadcast():
    for dt in (np.int32, np.int64, np.uint32, np.uint64, np.int8):
        info = np.iinfo(dt)
        v = np.array([info.min, info.max, 0, 1, -1 if info.min else 2], dt)
        x, y = np.meshgrid(v, v)
        np.testing.assert_array_equal(lax.mulhi(x, y), jl.mulhi(x, y))
    np.testing.assert_array_equal(lax.mulhi(np.arange(4, dtype=np.uint32) * 2 ** 30, np.uint32(7)),
                                  jl.mulhi(np.arange(4, dtype=np.uint32) * 2 ** 30, np.uint32(7)))
    with pytest.raises(FuncadError, match="integer"):
        lax.mulhi(np.ones(2), np.ones(2))


@_needs('one_minus_square')
def test_round_methods_and_one_minus_square_derivative():
    x = np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 0.49999999999999994])
    np.testing.assert_array_equal(lax.round(x), jl.round(x))
    np.testing.assert_array_equal(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                                  jl.round(x, jl.RoundingMethod.TO_NEAREST_EVEN))
    # The rule -2x, exact near 0 and to every order.
    assert float(funcad.grad(lax.one_minus_square)(1e-20)) == -2e-20
    assert float(funcad.grad(funcad.grad(lax.one_minus_square))(0.3)) == -2.0


@_needs('polynomial')
def test_polynomial_broadcasts_and_differentiates_in_coefficients():
    x, c = np.linspace(-1, 1, 4), np.array([0.5, -1.0, 2.0])
    f = lambda x, c: lax.polynomial(x, [c[0], c[1], c[2]]).sum()  # noqa: E731
    g = lambda x, c: jl.polynomial(x, [c[0], c[1], c[2]]).sum()  # noqa: E731
    np.testing.assert_allclose(funcad.grad(f, (0, 1))(x, c)[1], jax.grad(g, (0, 1))(x, c)[1], rtol=1e-12)
    assert float(lax.polynomial(3.0, [2.0])) == 2.0


# -------------------------------------------------------------- top k ----

def test_approx_k_indices_ties_and_reduction_size():
    x = np.array([[3.0, 1, 4, 1, 5, 9, 2, 6], [5, 3, 5, 8, 9, 7, 9, 3]])
    for fn, jfn in ((lax.approx_max_k, jl.approx_max_k), (lax.approx_min_k, jl.approx_min_k)):
        for kw in ({}, {"aggregate_to_topk": False}, {"reduction_dimension": 0, "recall_target": 0.9}):
            k = 2 if kw.get("reduction_dimension") == 0 else 3
            for got, want in zip(fn(x, k, **kw), jfn(x, k, **kw)):
                np.testing.assert_array_equal(got, want)
                assert np.asarray(got).dtype == np.asarray(want).dtype
    with pytest.raises(FuncadError, match="k must be smaller"):
        lax.approx_max_k(x, 9)


def test_approx_output_size_matches_xla():
    from funcad.lax._sorting import _approx_output_size
    try:
        from jax._src.lib import _jax
    except ImportError:
        pytest.skip("this jaxlib does not expose XLA's approx_top_k_reduction_output_size")
    for args in [(100, 1, 3, .95, False, -1), (5000, 1, 3, .95, False, -1), (5000, 2, 3, .95, False, -1),
                 (100000, 2, 10, .9, False, -1), (100000, 2, 10, .99, False, -1), (100000, 1, 10, .999, False, -1),
                 (3000, 2, 10, 1.0, False, -1), (3000, 2, 10, .95, False, 4000), (3000, 2, 10, .95, True, -1),
                 (1 << 20, 2, 100, .95, False, -1), (1 << 20, 2, 1, .5, False, -1), (777, 2, 5, .8, False, -1)]:
        assert _approx_output_size(*args) == _jax.approx_top_k_reduction_output_size(*args)[0], args


# -------------------------------------------------------- gather/scatter ----

def test_gather_batching_dims_and_errors():
    rng = np.random.default_rng(1)
    x, idx = rng.standard_normal((3, 6)), np.array([[[1], [4]], [[0], [5]], [[2], [2]]])
    kw = dict(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,),
              start_indices_batching_dims=(0,))
    np.testing.assert_array_equal(lax.gather(x, idx, lax.GatherDimensionNumbers(**kw), (1, 1)),
                                  jl.gather(x, idx, jl.GatherDimensionNumbers(**kw), (1, 1)))
    with pytest.raises(FuncadError, match="slice_sizes"):
        lax.gather(x, idx, lax.GatherDimensionNumbers(**kw), (1, 9))
    with pytest.raises(FuncadError, match="both dimension_numbers and slice_sizes"):
        lax.gather(x, idx, lax.GatherDimensionNumbers(**kw))
    # The point form (funcad's shorthand) still clamps.
    np.testing.assert_array_equal(lax.gather(np.arange(5.0), np.array([[7], [-2]])), [4.0, 0.0])


def test_gather_fill_defaults_per_dtype():
    dn = lax.GatherDimensionNumbers((), (0,), (0,))
    idx = np.array([[1], [9]])
    for dt in (np.float32, np.int32, np.uint8, np.bool_):
        x = np.arange(4).astype(dt)
        np.testing.assert_array_equal(lax.gather(x, idx, dn, (1,), mode="fill"),
                                      jl.gather(x, idx, jl.GatherDimensionNumbers((), (0,), (0,)), (1,), mode="fill"))


def test_scatter_repeated_set_last_wins_and_max_ties():
    dn, jdn = lax.ScatterDimensionNumbers((), (0,), (0,)), jl.ScatterDimensionNumbers((), (0,), (0,))
    idx, u = np.array([[1], [1], [2]]), np.array([5.0, 7.0, 3.0])
    np.testing.assert_array_equal(lax.scatter(np.zeros(4), idx, u, dn), jl.scatter(np.zeros(4), idx, u, jdn))
    g = funcad.grad(lambda u: lax.scatter(np.zeros(4), idx, u, dn).sum())(u)
    np.testing.assert_array_equal(g, jax.grad(lambda u: jl.scatter(np.zeros(4), idx, u, jdn).sum())(u))
    t = np.array([5.0, 5.0, 0.0])  # ties with each other and with the operand
    np.testing.assert_array_equal(funcad.grad(lambda u: lax.scatter_max(np.zeros(4), idx, u, dn).sum())(t),
                                  jax.grad(lambda u: jl.scatter_max(np.zeros(4), idx, u, jdn).sum())(t))


def test_scatter_apply_repeats_func_per_hit_and_jits():
    dn, jdn = lax.ScatterDimensionNumbers((), (0,), (0,)), jl.ScatterDimensionNumbers((), (0,), (0,))
    idx = np.array([[1], [1], [2], [8]])
    want = jl.scatter_apply(np.ones(4), idx, lambda v: v * 3, jdn, update_shape=(4,))
    np.testing.assert_array_equal(lax.scatter_apply(np.ones(4), idx, lambda v: v * 3, dn, update_shape=(4,)), want)
    f = funcad.jit(lambda x: lax.scatter_apply(x, idx, lambda v: v * 3, dn, update_shape=(4,)))
    np.testing.assert_array_equal(f(np.ones(4)), want)


def test_scatter_errors_name_the_problem():
    dn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    with pytest.raises(FuncadError, match="scatter dimensions"):
        lax.scatter_add(np.zeros((4, 3)), np.array([[1], [2]]), np.ones((3, 3)), dn)
    with pytest.raises(FuncadError, match="ONE_HOT"):
        lax.scatter_add(np.zeros((4, 3)), np.array([[1]]), np.ones((1, 3)), dn, mode="one_hot")
    with pytest.raises(FuncadError, match="integers"):
        lax.scatter_add(np.zeros((4, 3)), np.array([[1.0]]), np.ones((1, 3)), dn)


@_needs('ragged_dot_general', 'RaggedDotDimensionNumbers')
def test_ragged_dot_matches_jax_and_contracting_mode():
    rng = np.random.default_rng(3)
    x, r, gs = rng.standard_normal((7, 4)), rng.standard_normal((3, 4, 5)), np.array([2, 3, 1])
    np.testing.assert_allclose(lax.ragged_dot(x, r, gs), jl.ragged_dot(x, r, gs.astype(np.int32)), rtol=1e-12)
    np.testing.assert_allclose(funcad.jit(lambda a, b: lax.ragged_dot(a, b, gs))(x, r),
                               jl.ragged_dot(x, r, gs.astype(np.int32)), rtol=1e-12)
    a, b = rng.standard_normal((7, 4)), rng.standard_normal((7, 5))
    dn = lax.RaggedDotDimensionNumbers((((0,), (0,)), ((), ())), (0,), ())
    jdn = jl.RaggedDotDimensionNumbers((((0,), (0,)), ((), ())), (0,), ())
    np.testing.assert_allclose(lax.ragged_dot_general(a, b, gs, dn),
                               jl.ragged_dot_general(a, b, gs.astype(np.int32), jdn), rtol=1e-12)
    # a ragged batch dimension (JAX's third mode)
    a, b, gs2 = rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 2, 5)), np.array([1, 3])
    dn = lax.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), (0,), ())
    jdn = jl.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), (0,), ())
    want = jl.ragged_dot_general(a, b, gs2.astype(np.int32), jdn)
    np.testing.assert_allclose(lax.ragged_dot_general(a, b, gs2, dn), want, rtol=1e-12)
    np.testing.assert_allclose(funcad.jit(lambda u, v: lax.ragged_dot_general(u, v, gs2, dn))(a, b), want,
                               rtol=1e-12)


# ------------------------------------------------------- implicit solves ----

_A0 = np.array([[4.0, 1.0], [1.0, 3.0]])


def _lin(lx, np_, sym=True):
    def f(a, b):
        A = _A0 * a + np_.array([[0.0, 0.5], [0.0, 0.0]])

        def solve(mv, r):  # an iterative solver (never differentiated)
            return lx.fori_loop(0, 60, lambda i, x: x + 0.2 * (r - mv(x)), np_.zeros_like(r))
        kw = {"symmetric": True} if sym else {"transpose_solve": lambda vm, r: np_.linalg.solve(A.T, r)}
        return lx.custom_linear_solve(lambda x: A @ x, b, lambda mv, r: np_.linalg.solve(A, r), **kw) \
            if not sym else lx.custom_linear_solve(lambda x: A @ x, b, solve, **kw)
    return f


def test_custom_linear_solve_all_modes_match_jax():
    b = np.array([1.0, 2.0])
    F, J = _lin(lax, fnp, sym=False), _lin(jl, jnp, sym=False)
    np.testing.assert_allclose(F(2.0, b), J(2.0, b), rtol=1e-12)
    for tf, tj in ((funcad.jacfwd, jax.jacfwd), (funcad.jacrev, jax.jacrev)):
        for k in (0, 1):
            np.testing.assert_allclose(tf(F, k)(2.0, b), tj(J, k)(2.0, b), rtol=1e-10)
    h = funcad.hessian(lambda a: F(a, b).sum())(2.0)
    np.testing.assert_allclose(h, jax.hessian(lambda a: J(a, b).sum())(2.0), rtol=1e-10)
    np.testing.assert_allclose(funcad.jit(funcad.grad(lambda a: F(a, b).sum()))(2.0),
                               jax.grad(lambda a: J(a, b).sum())(2.0), rtol=1e-10)
    a = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(funcad.vmap(funcad.grad(lambda a: F(a, b).sum()))(a),
                               jax.vmap(jax.grad(lambda a: J(a, b).sum()))(a), rtol=1e-10)


def test_custom_linear_solve_iterative_solver_is_not_differentiated():
    # The solver is a fixed-point loop of a non-symmetric operator's symmetric part
    # approximation; symmetric=True lets reverse mode reuse it.
    def f(a, b):
        A = np.diag([2.0, 4.0]) * a
        solve = lambda mv, r: lax.fori_loop(0, 80, lambda i, x: x + 0.3 * (r - mv(x)) / a, fnp.zeros_like(r))  # noqa: E731
        return lax.custom_linear_solve(lambda x: A @ x, b, solve, symmetric=True)
    b = np.array([1.0, 1.0])
    np.testing.assert_allclose(f(1.0, b), [0.5, 0.25], rtol=1e-8)
    np.testing.assert_allclose(funcad.grad(lambda a: f(a, b).sum())(1.0), -0.75, rtol=1e-8)
    with pytest.raises(FuncadError, match="transpose_solve"):
        funcad.grad(lambda b: lax.custom_linear_solve(lambda x: 2.0 * x, b, lambda mv, r: r / 2.0).sum())(b)


def test_custom_linear_solve_has_aux_and_pytrees():
    b = {"u": np.array([2.0]), "v": np.array([4.0, 8.0])}
    mv = lambda x: {"u": 2.0 * x["u"], "v": 4.0 * x["v"]}  # noqa: E731
    solve = lambda m, r: ({"u": r["u"] / 2.0, "v": r["v"] / 4.0}, 7)  # noqa: E731
    x, aux = lax.custom_linear_solve(mv, b, solve, symmetric=True, has_aux=True)
    np.testing.assert_array_equal(x["v"], [1.0, 2.0])
    assert int(aux) == 7


def _root(lx, np_):
    def newton(f, x):
        return lx.while_loop(lambda s: np_.abs(f(s)) > 1e-13, lambda s: s - f(s) / (3.0 * s * s), x)
    return lambda a: lx.custom_root(lambda x: x ** 3 - a, 1.0, newton, lambda g, y: y / g(1.0))


def test_custom_root_derivatives_match_jax():
    f, g = _root(lax, fnp), _root(jl, jnp)
    assert abs(float(f(2.0)) - 2.0 ** (1 / 3)) < 1e-12
    for d in (funcad.grad(f), funcad.jit(funcad.grad(f)), funcad.jacfwd(f)):
        np.testing.assert_allclose(d(2.0), jax.grad(g)(2.0), rtol=1e-10)
    np.testing.assert_allclose(funcad.grad(funcad.grad(f))(2.0), jax.grad(jax.grad(g))(2.0), rtol=1e-8)
    np.testing.assert_allclose(funcad.vmap(funcad.grad(f))(np.array([2.0, 3.0])),
                               jax.vmap(jax.grad(g))(np.array([2.0, 3.0])), rtol=1e-10)


def test_custom_root_has_aux():
    solve = lambda f, x: (x - f(x) / 2.0, 3)  # noqa: E731  (exact for a linear f)
    r = lambda a: lax.custom_root(lambda x: 2.0 * x - a, 0.0, solve, lambda g, y: y / g(1.0), has_aux=True)  # noqa: E731
    x, aux = r(3.0)
    assert float(x) == 1.5 and int(aux) == 3
    assert float(funcad.grad(lambda a: r(a)[0])(3.0)) == 0.5


# ----------------------------------------------------------- small ones ----

def test_optimization_barrier_is_staged_and_differentiable():
    f = lambda x: lax.optimization_barrier((x * 2.0, x))[0].sum()  # noqa: E731
    assert "optimization_barrier" in str(funcad.make_jaxpr(f)(np.ones(3)))
    np.testing.assert_array_equal(funcad.jit(funcad.grad(f))(np.ones(3)), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(funcad.vmap(f)(np.ones((2, 3))), [6.0, 6.0])


@_needs('shape_as_value')
def test_platform_dependent_composite_and_small_helpers():
    assert float(funcad.jit(lambda x: lax.platform_dependent(x, cpu=lambda v: v + 1, default=lambda v: v))(1.0)) == 2.0
    assert float(lax.platform_dependent(1.0, tpu=lambda v: v + 1, default=lambda v: v * 5)) == 5.0
    with pytest.raises(FuncadError, match="no branch"):
        lax.platform_dependent(1.0, tpu=lambda v: v)
    tan = lax.composite(lambda x: fnp.sin(x) / fnp.cos(x), "my.tan")
    assert abs(float(funcad.grad(tan)(0.3)) - 1 / np.cos(0.3) ** 2) < 1e-12
    assert lax.dtype(np.float32(1)) == np.float32 and lax.dtype("int16") == np.int16
    assert lax.dtype(jnp.ones(2, jnp.int8)) == jl.dtype(jnp.ones(2, jnp.int8))
    np.testing.assert_array_equal(lax.shape_as_value((2, 3)), jl.shape_as_value((2, 3)))
    assert lax.shape_as_value(()).shape == (0,)
    assert lax.broadcast_like(np.arange(3), np.zeros((2, 3))).shape == (2, 3)
    assert funcad.make_jaxpr(lambda: lax.stage(np.float32(2)))().out_avals[0].dtype == np.float32


def test_stop_gradient_of_a_pytree_and_broadcast_shapes_errors_as_jax():
    tree = {"w": 3.0, "b": (np.float32(2.0), np.arange(2.0))}
    f = lambda t, stop: t["w"] * stop(t)["w"] + fnp.sum(t["b"][1] * stop(t)["b"][1])
    jf = lambda t, stop: t["w"] * stop(t)["w"] + jnp.sum(t["b"][1] * stop(t)["b"][1])
    got, want = funcad.grad(f)(tree, lax.stop_gradient), jax.grad(jf)(tree, jl.stop_gradient)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w))
    assert jax.tree.structure(lax.stop_gradient(tree)) == jax.tree.structure(tree)
    for ours, theirs in [(lax.broadcast_shapes, jl.broadcast_shapes), (fnp.broadcast_shapes, jnp.broadcast_shapes)]:
        assert ours((2, 1), (1, 3)) == theirs((2, 1), (1, 3))
        with pytest.raises(ValueError) as want:
            theirs((2,), (3,), (1,))
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            ours((2,), (3,), (1,))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        fnp.broadcast_arrays(np.ones(2), np.ones(3))


def same(a, b, rtol=1e-10):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x.shape, y.shape)
        np.testing.assert_allclose(x.astype(float), y.astype(float), rtol=rtol, atol=1e-12, equal_nan=True)


def test_lax_reduce_monoids_and_pytrees():
    x = np.random.default_rng(3).normal(size=(3, 4))
    same(lax.reduce(x, 0.0, lax.add, (0, 1)), jax.lax.reduce(x, 0.0, jax.lax.add, (0, 1)))
    same(lax.reduce(x, -np.inf, lax.max, (1,)), jax.lax.reduce(x, -np.inf, jax.lax.max, (1,)))
    idx = np.broadcast_to(np.arange(4), (3, 4))

    def argmax_fn(m):
        return lambda a, b: (m.max(a[0], b[0]), m.select(a[0] >= b[0], a[1], b[1]))
    same(funcad.jit(lambda v: lax.reduce((v, idx), (-np.inf, 0), argmax_fn(lax), (1,)))(x),
         jax.lax.reduce((x, idx), (-np.inf, 0), argmax_fn(jax.lax), (1,)))
    same(funcad.grad(lambda v: lax.reduce_window(v, 0.0, lax.add, (2, 2), (1, 1), "SAME").sum())(x),
         jax.grad(lambda v: jax.lax.reduce_window(v, 0.0, jax.lax.add, (2, 2), (1, 1), "SAME").sum())(x))


def test_lax_reduce_with_a_python_reducer_is_a_sequential_fold():
    # XLA leaves a non-associative reducer's order open; funcad folds in index order.
    x = np.random.default_rng(4).normal(size=(3, 4))
    want = np.stack([((1.0 * 0.5 + c[0]) * 0.5 + c[1]) * 0.5 + c[2] for c in x.T])
    f = lambda v: lax.reduce(v, 1.0, lambda a, b: a * 0.5 + b, (0,))  # noqa: E731
    same(f(x), want)
    same(funcad.jit(f)(x), want)
    same(funcad.grad(lambda v: f(v).sum())(x), np.broadcast_to(np.array([[0.25], [0.5], [1.0]]), (3, 4)))


def test_lax_in_dim_helpers():
    x = np.arange(24.0).reshape(4, 6)
    for m, l in ((lax, jax.lax),):
        same(m.slice_in_dim(x, 1, None, 2, axis=1), l.slice_in_dim(x, 1, None, 2, axis=1))
        same(m.index_in_dim(x, -1, 1, keepdims=False), l.index_in_dim(x, -1, 1, keepdims=False))
        same(funcad.jit(lambda i: m.dynamic_index_in_dim(x, i, 1, False))(-2), l.dynamic_index_in_dim(x, -2, 1, False))
        same(m.dynamic_update_index_in_dim(x, np.ones(6), 5, 0), l.dynamic_update_index_in_dim(x, np.ones(6), 5, 0))
        same(m.collapse(np.ones((2, 3, 4)), 0, 2), l.collapse(np.ones((2, 3, 4)), 0, 2))
        same(m.sort_key_val(np.array([3.0, 1.0, 2.0]), np.array([0, 1, 2])),
             l.sort_key_val(np.array([3.0, 1.0, 2.0]), np.array([0, 1, 2])))
