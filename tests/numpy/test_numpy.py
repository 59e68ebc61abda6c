"""funcad.numpy and the primitives' impl/shape rules, driven by the shared op table.

For every row and dtype: the eager result equals NumPy's (values, shape,
dtype); the staged jaxpr's output types equal the eager result's and the
jaxpr type-checks; evaluating the staged jaxpr gives the eager result.
Then the NEP 50 dtype rules and the indexing cases the table cannot express.
"""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
from funcad.core.trace import typecheck
from tests.op_table import OPS

CASES = [pytest.param(spec, np.dtype(dt), id=f"{spec.name}-{np.dtype(dt).name}")
         for spec in OPS for dt in spec.dtypes]


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _inputs(spec, dtype):
    return spec.args(np.random.default_rng(0), dtype)


def _tol(spec, dtype):
    base = 2e-6 if dtype in (np.float32, np.complex64) else 1e-12
    return max(base, spec.rtol or 0.0)


@pytest.mark.parametrize("spec,dtype", CASES)
def test_impl_matches_numpy(spec, dtype):
    args = _inputs(spec, dtype)
    outs, refs = _tuple(spec.fun(*args)), _tuple(spec.ref(*args))
    assert len(outs) == len(refs)
    for out, ref in zip(outs, refs):
        out, ref = np.asarray(out), np.asarray(ref)
        assert out.shape == ref.shape
        assert out.dtype == ref.dtype
        tol = _tol(spec, dtype)
        np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("spec,dtype", CASES)
def test_abstract_eval_matches_eager(spec, dtype):
    args = _inputs(spec, dtype)
    eager = _tuple(spec.fun(*args))
    closed = funcad.make_jaxpr(spec.fun)(*args)
    typecheck(closed.jaxpr)
    assert [(a.shape, a.dtype) for a in closed.out_avals] == [
        (np.shape(x), np.asarray(x).dtype) for x in eager]


@pytest.mark.parametrize("spec,dtype", CASES)
def test_staged_eval_matches_eager(spec, dtype):
    args = _inputs(spec, dtype)
    eager = _tuple(spec.fun(*args))
    staged = funcad.make_jaxpr(spec.fun)(*args)(*args)
    for s, e in zip(staged, eager, strict=True):
        assert np.asarray(s).dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(s, e)


def test_table_covers_every_primitive():
    """Each primitive of the array families is staged by at least one row of the table."""
    from funcad.core.trace import Primitive
    from funcad.primitives import elementwise, indexing, linalg, reductions, structural
    families = (elementwise, structural, reductions, linalg, indexing)
    prims = {p.name for m in families for p in vars(m).values() if isinstance(p, Primitive)}
    seen = set()
    for spec in OPS:
        args = _inputs(spec, spec.dtypes[0])
        seen |= {e.prim.name for e in funcad.make_jaxpr(spec.fun)(*args).eqns}
    assert len(prims) > 80
    assert prims - seen == set()


# ------------------------------------------------------------- NEP 50 ----

DTYPE_CASES = [
    # (id, function, arguments)
    ("f32_times_weak_float", lambda x: x * 2.0, (np.ones(3, np.float32),)),
    ("f32_times_weak_int", lambda x: fnp.multiply(x, 2), (np.ones(3, np.float32),)),
    ("f64_times_weak_float", lambda x: x * 2.0, (np.ones(3),)),
    ("weak_float_minus_f32", lambda x: fnp.subtract(1.5, x), (np.ones(3, np.float32),)),
    ("i32_plus_weak_int", lambda x: fnp.add(x, 1), (np.ones(3, np.int32),)),
    ("i32_plus_weak_float", lambda x: fnp.add(x, 1.5), (np.ones(3, np.int32),)),
    ("u8_plus_weak_int", lambda x: fnp.add(x, 3), (np.ones(3, np.uint8),)),
    ("i32_plus_f32", fnp.add, (np.ones(3, np.int32), np.ones(3, np.float32))),
    ("i64_plus_f32", fnp.add, (np.ones(3, np.int64), np.ones(3, np.float32))),
    ("f32_plus_f64", fnp.add, (np.ones(3, np.float32), np.ones(3))),
    ("f32_plus_0d_f64", fnp.add, (np.ones(3, np.float32), np.array(2.0))),
    ("f32_plus_np_float64", lambda x: fnp.add(x, np.float64(2.0)), (np.ones(3, np.float32),)),
    ("bool_plus_weak_int", lambda x: fnp.add(x, 1), (np.ones(3, bool),)),
    ("bool_times_f32", fnp.multiply, (np.ones(3, bool), np.ones(3, np.float32))),
    ("i32_divide_i32", fnp.divide, (np.ones(3, np.int32), np.ones(3, np.int32))),
    ("i8_divide_weak", lambda x: fnp.divide(x, 2), (np.ones(3, np.int8),)),
    ("sin_i32", fnp.sin, (np.ones(3, np.int32),)),
    ("sin_i8", fnp.sin, (np.ones(3, np.int8),)),
    ("sin_bool", fnp.sin, (np.ones(3, bool),)),
    ("sqrt_i16", fnp.sqrt, (np.ones(3, np.int16),)),
    ("exp_f32", fnp.exp, (np.ones(3, np.float32),)),
    ("sum_i32", fnp.sum, (np.ones(3, np.int32),)),
    ("sum_bool", fnp.sum, (np.ones(3, bool),)),
    ("sum_f32", fnp.sum, (np.ones(3, np.float32),)),
    ("prod_u8", fnp.prod, (np.ones(3, np.uint8),)),
    ("mean_i64", fnp.mean, (np.ones(3, np.int64),)),  # (int32 averages in float32, JAX's rule: test_numpy_parameters)
    ("mean_f32", fnp.mean, (np.ones(3, np.float32),)),
    ("var_i64", fnp.var, (np.ones(3, np.int64),)),
    ("cumsum_i32", fnp.cumsum, (np.ones(3, np.int32),)),
    ("maximum_f32_weak", lambda x: fnp.maximum(x, 0.0), (np.ones(3, np.float32),)),
    ("where_f32_weak", lambda x: fnp.where(x > 0, x, 0.0), (np.ones(3, np.float32),)),
    ("where_i32_f32", lambda x, y: fnp.where(x > 0, x, y), (np.ones(3, np.int32), np.ones(3, np.float32))),
    ("power_f32_weak", lambda x: x ** 2.5, (np.ones(3, np.float32),)),
    ("power_i32_int", lambda x: x ** 2, (np.ones(3, np.int32),)),
    ("matmul_f32_f64", fnp.matmul, (np.ones((2, 2), np.float32), np.ones((2, 2)))),
    ("matmul_i32", fnp.matmul, (np.ones((2, 2), np.int32), np.ones((2, 2), np.int32))),
    ("concatenate_f32_f64", lambda x, y: fnp.concatenate([x, y]), (np.ones(2, np.float32), np.ones(2))),
    ("clip_i32_weak", lambda x: fnp.clip(x, 0, 5), (np.ones(3, np.int32),)),
    ("floor_divide_i32", fnp.floor_divide, (np.full(3, 7, np.int32), np.full(3, 2, np.int32))),
    ("remainder_i32", fnp.remainder, (np.full(3, -7, np.int32), np.full(3, 3, np.int32))),
    ("arctan2_i32", fnp.arctan2, (np.ones(3, np.int32), np.ones(3, np.int32))),
    ("logical_and_f32", fnp.logical_and, (np.ones(3, np.float32), np.zeros(3, np.float32))),
    ("equal_i32_f32", fnp.equal, (np.ones(3, np.int32), np.ones(3, np.float32))),
]


def _numpy_twin(fn):
    """Run a function written with funcad.numpy against NumPy by swapping the module in."""
    import types
    g = dict(fn.__globals__, fnp=np)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


@pytest.mark.parametrize("fn,args", [pytest.param(f, a, id=i) for i, f, a in DTYPE_CASES])
def test_dtype_rules_match_numpy(fn, args):
    """Eager and staged dtypes both equal NumPy 2's (NEP 50: Python scalars are weak)."""
    want = np.asarray(_numpy_twin(fn)(*args) if fn.__name__ == "<lambda>" else
                      getattr(np, fn.__name__)(*args)).dtype
    got = np.asarray(fn(*args))
    assert got.dtype == want
    staged = funcad.make_jaxpr(fn)(*args)
    assert staged.out_avals[0].dtype == want
    np.testing.assert_array_equal(staged(*args)[0], got)


def test_weak_scalar_is_a_typed_literal_in_the_jaxpr():
    closed = funcad.make_jaxpr(lambda x: x * 2.0 + 1)(np.ones(3, np.float32))
    assert str(closed) == ("{ lambda ; a:f32[3]. let\n"
                           "    b:f32[3] = mul a 2.0:f32[]\n"
                           "    c:f32[3] = add b 1.0:f32[]\n"
                           "  in (c,) }")


def test_python_scalar_argument_is_weak():
    closed = funcad.make_jaxpr(lambda x, y: fnp.multiply(x, y))(np.ones(2, np.float32), 3.0)
    assert closed.in_avals[1].weak_type and closed.in_avals[1].dtype == np.float64
    assert closed.out_avals[0].dtype == np.float32
    np.testing.assert_array_equal(closed(np.ones(2, np.float32), 3.0)[0], np.full(2, 3.0, np.float32))


def test_all_weak_scalars_stay_python_values():
    assert fnp.add(2, 3) == 5 and fnp.multiply(2.0, 3) == 6.0
    assert np.asarray(fnp.add(2, 3.5)).dtype == np.float64


def test_int_scalar_argument_to_float_op():
    out = fnp.sqrt(4)
    assert out == 2.0 and np.asarray(out).dtype == np.float64


# ------------------------------------------------------------ indexing ----

X234 = np.arange(24.0).reshape(2, 3, 4)

INDEX_CASES = [
    ("int", 1), ("neg_int", -2), ("slice", slice(1, None)), ("neg_step", slice(None, None, -1)),
    ("neg_step_bounds", (slice(None), slice(2, 0, -1))), ("neg_start", (Ellipsis, slice(-3, -1))),
    ("step_3", (Ellipsis, slice(None, None, 3))), ("empty_slice", (slice(None), slice(2, 1))),
    ("none", None), ("none_ellipsis_none", (None, Ellipsis, None)), ("ellipsis_int", (Ellipsis, 0)),
    ("int_none_slice", (0, None, slice(None, None, -2))), ("int_array", np.array([1, 0, 1])),
    ("int_array_2d", (slice(None), np.array([[0, 2], [1, 1]]))), ("neg_int_array", (0, np.array([-1, -3]))),
    ("list", [1, 0]), ("two_arrays", (np.array([0, 1]), np.array([2, 0]))),
    ("separated_arrays", (np.array([0, 1]), slice(None), np.array([3, 0]))),
    ("array_then_slice", (np.array([1, 0]), slice(1, 3))),
    ("slice_then_arrays", (slice(None), np.array([0, 2]), np.array([1, 3]))),
    ("bool_mask_axis0", np.array([False, True])), ("bool_mask_full", X234 > 11.5),
    ("bool_mask_middle", (slice(None), np.array([True, False, True]))),
    ("scalar_array_index", np.array(1)), ("tuple_of_ints", (1, 2, 3)),
]


@pytest.mark.parametrize("idx", [pytest.param(i, id=n) for n, i in INDEX_CASES])
def test_getitem_matches_numpy(idx):
    from funcad.arrays.indexing import getitem
    want = X234[idx]
    np.testing.assert_array_equal(getitem(X234, idx), want)
    staged = funcad.make_jaxpr(lambda x: x[idx])(X234)
    assert staged.out_avals[0].shape == want.shape
    np.testing.assert_array_equal(staged(X234)[0], want)


@pytest.mark.parametrize("i", [0, 2, -1, -3])
def test_getitem_with_a_traced_integer(i):
    closed = funcad.make_jaxpr(lambda x, k: x[:, k])(X234, np.int64(i))
    assert [e.prim.name for e in closed.eqns].count("dynamic_slice") == 1
    np.testing.assert_array_equal(closed(X234, np.int64(i))[0], X234[:, i])


def test_getitem_with_a_traced_integer_array():
    idx = np.array([2, -1, 0])
    closed = funcad.make_jaxpr(lambda x, k: x[1, k])(X234, idx)
    np.testing.assert_array_equal(closed(X234, idx)[0], X234[1, idx])


def test_dynamic_slice_wraps_negative_starts_then_clamps_like_jax():
    x = np.arange(5.0)
    np.testing.assert_array_equal(lax.dynamic_slice(x, (np.int64(4),), (2,)), [3.0, 4.0])
    np.testing.assert_array_equal(lax.dynamic_slice(x, (np.int64(-3),), (2,)), [2.0, 3.0])  # -3 + 5
    np.testing.assert_array_equal(lax.dynamic_slice(x, (np.int64(-9),), (2,)), [0.0, 1.0])  # clamped


def test_gather_clamps_and_scatter_drops_out_of_range():
    x = np.arange(4.0)
    np.testing.assert_array_equal(lax.gather(x, np.array([[7], [-2]])), [3.0, 0.0])
    np.testing.assert_array_equal(lax.scatter_add(x, np.array([[1], [9]]), np.array([10.0, 20.0])),
                                  [0.0, 11.0, 2.0, 3.0])


def test_at_updates_with_traced_index():
    x = np.arange(6.0).reshape(2, 3)
    f = lambda x, i, v: (x.at[i].add(v), x.at[:, i].set(v[:2]))  # noqa: E731
    closed = funcad.make_jaxpr(f)(x, np.int64(1), np.ones(3))
    added, setted = closed(x, np.int64(1), np.full(3, 5.0))
    np.testing.assert_array_equal(added, [[0, 1, 2], [8, 9, 10]])
    np.testing.assert_array_equal(setted, [[0, 5, 2], [3, 5, 5]])


def test_at_set_repeated_index_last_wins():
    from tests.op_table import _at
    out = _at(np.zeros(3))[np.array([1, 1, 2])].set(np.array([5.0, 6.0, 7.0]))
    np.testing.assert_array_equal(out, [0.0, 6.0, 7.0])


@pytest.mark.parametrize("idx,err", [
    ((0, 0, 0, 0), IndexError),
    ((Ellipsis, Ellipsis), IndexError), (1.5, IndexError), (np.array([0.0]), IndexError)],
    ids=["too_many", "two_ellipses", "float", "float_array"])
def test_getitem_errors(idx, err):
    with pytest.raises(err):
        funcad.make_jaxpr(lambda x: x[idx])(X234)


def test_traced_boolean_mask_raises_concretization_error():
    with pytest.raises(funcad.ConcretizationError, match="where"):
        funcad.make_jaxpr(lambda x: x[x > 1])(np.arange(3.0))


# ------------------------------------------------------------ odds and ends ----

@pytest.mark.parametrize("sub,shapes", [
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]), ("...ij,...jk", [(2, 3), (2, 3, 2)]),
    ("...ij->...", [(2, 3, 4)]), ("i...,i...", [(3, 2), (3, 1)]), ("ij...,j->i...", [(2, 3, 4), (3,)])],
    ids=["batched_matmul", "implicit", "sum_trailing", "broadcast_one", "middle"])
def test_einsum_ellipsis_broadcasts_like_numpy(sub, shapes):
    rng = np.random.default_rng(0)
    ops = [rng.normal(size=s) for s in shapes]
    want = np.einsum(sub, *ops)
    got = fnp.einsum(sub, *ops)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_functions_accept_lists_and_scalars():
    np.testing.assert_array_equal(fnp.add([1, 2], 1), [2, 3])
    np.testing.assert_allclose(fnp.sum([[1.0, 2.0], [3.0, 4.0]], axis=0), [4.0, 6.0])
    assert fnp.sin(0.0) == 0.0


def test_all_and_any_of_empty_arrays():
    e = np.zeros((0, 3), bool)
    assert fnp.all(e) == np.True_ and fnp.any(e) == np.False_
    np.testing.assert_array_equal(fnp.all(np.zeros((0, 3)), axis=0), [True, True, True])
    np.testing.assert_array_equal(funcad.make_jaxpr(lambda x: fnp.any(x, axis=0))(e)(e)[0], [False] * 3)


def test_traced_integer_power_with_array_exponent():
    x, y = np.array([2, -3, 5]), np.array([3, 2, 0])
    closed = funcad.make_jaxpr(lambda a: a ** y)(x)
    out = closed(x)[0]
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [8, 9, 1])


def test_var_method_of_a_traced_array():
    x = np.arange(6.0).reshape(2, 3)
    f = lambda a: a.var(-1, keepdims=True) + a.std()
    np.testing.assert_allclose(funcad.jit(f)(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(funcad.vmap(lambda a: a.var())(x), x.var(1), rtol=1e-12)
    np.testing.assert_allclose(funcad.grad(lambda a: a.var())(x), 2 * (x - x.mean()) / 6, rtol=1e-12)
