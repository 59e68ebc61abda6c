"""Eager results are immutable funcad arrays with JAX's Array methods (funcad/core/eager.py)."""
from __future__ import annotations

import copy
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.eager import EagerArray
from funcad.core.errors import FuncadTypeError, FuncadValueError


def _jnp():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return jnp


# ------------------------------------------------------------ what comes back ----

@pytest.mark.parametrize("make", [
    lambda: fnp.sin(np.ones(3)), lambda: fnp.zeros(3), lambda: fnp.arange(4), lambda: fnp.array([1, 2]),
    lambda: fnp.asarray(np.ones(2)), lambda: fnp.linspace(0, 1, 3), lambda: fnp.eye(2),
    lambda: fnp.ones(3) + 1, lambda: fnp.sum(fnp.ones(3)), lambda: fnp.unique(np.array([3, 1, 3])),
    lambda: fnp.meshgrid(np.arange(2), np.arange(3))[0], lambda: fnp.split(fnp.arange(4), 2)[1],
    lambda: funcad.grad(lambda x: fnp.sum(x ** 2))(np.ones(2)),
    lambda: funcad.vmap(fnp.sin)(np.ones((2, 3))),
], ids=["sin", "zeros", "arange", "array", "asarray", "linspace", "eye", "add", "sum", "unique",
        "meshgrid", "split", "grad", "vmap"])
def test_results_are_eager_arrays(make):
    x = make()
    assert type(x) is EagerArray
    assert isinstance(x, fnp.ndarray) and isinstance(x, np.ndarray)
    assert not x.flags.writeable


def test_zero_d_results_and_scalar_arithmetic():
    y = 10 + fnp.array(3)  # weakly typed, as in JAX: both operands are
    assert isinstance(y, EagerArray) and y.weak_type and y.shape == () and y.dtype == np.int64
    assert y.block_until_ready() is y and int(y) == 13
    s = fnp.sin(0.5)  # a Python float in, a 0-d array out (not numpy.float64)
    assert isinstance(s, EagerArray) and s.weak_type and s.shape == () and float(s) == np.sin(0.5)
    assert type(fnp.sum(fnp.ones(3))) is EagerArray


# ------------------------------------------------------------ immutability ----

def test_item_assignment_raises_pointing_to_at():
    a = fnp.zeros(3)
    with pytest.raises(FuncadTypeError, match=r"x = x.at\[1\].set\(y\)"):
        a[1] = 5.0
    with pytest.raises(TypeError):  # also a TypeError, as in JAX
        a[0] = 1.0
    assert a.tolist() == [0.0, 0.0, 0.0]


def test_inplace_operators_rebind():
    a = fnp.arange(3.0)
    b = a
    b += 10
    assert a.tolist() == [0.0, 1.0, 2.0] and b.tolist() == [10.0, 11.0, 12.0]
    c = fnp.arange(4)
    d = c
    d *= 2
    d <<= 1
    d //= 3
    assert c.tolist() == [0, 1, 2, 3] and d.tolist() == [0, 1, 2, 4]
    assert type(b) is EagerArray and type(d) is EagerArray


@pytest.mark.parametrize("mutate", [
    lambda a: a.fill(1.0), lambda a: a.put([0], [1.0]), lambda a: a.resize(4),
    lambda a: a.setflags(write=True), lambda a: np.add(a, 1.0, out=a),
], ids=["fill", "put", "resize", "setflags", "ufunc_out"])
def test_mutating_methods_raise(mutate):
    a = fnp.zeros(3)
    with pytest.raises(FuncadTypeError, match="immutable"):
        mutate(a)
    assert a.tolist() == [0.0, 0.0, 0.0]


def test_np_asarray_is_a_plain_read_only_view():
    a = fnp.arange(3.0)
    v = np.asarray(a)
    assert type(v) is np.ndarray and np.shares_memory(v, a) and not v.flags.writeable
    with pytest.raises(ValueError):
        v[0] = 1.0
    w = np.array(a)  # a copy is the user's to change
    w[0] = 5.0
    assert a.tolist() == [0.0, 1.0, 2.0]


# ------------------------------------------------------------ JAX's Array methods ----

def test_array_methods():
    a = fnp.arange(6.0).reshape(2, 3)
    assert a.block_until_ready() is a and a.is_ready()
    assert a.device == funcad.devices("cpu")[0] and a.devices() == {funcad.devices("cpu")[0]}
    assert a.is_fully_replicated and a.weak_type is False
    assert a.item(1, 2) == 5.0 and a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert fnp.array(7).item() == 7 and isinstance(fnp.array(7).item(), int)
    b = a.astype(np.float32)
    assert type(b) is EagerArray and b.dtype == np.float32
    c = a.copy()
    assert type(c) is EagerArray and not np.shares_memory(c, a) and not c.flags.writeable
    rows = list(a)
    assert [type(r) for r in rows] == [EagerArray, EagerArray] and rows[1].tolist() == [3.0, 4.0, 5.0]
    elems = list(fnp.arange(3))
    assert all(type(e) is EagerArray and e.shape == () for e in elems) and [int(e) for e in elems] == [0, 1, 2]
    with pytest.raises(TypeError, match="0-d"):
        iter(fnp.array(1.0))
    assert a.T.shape == (3, 2) and type(a.T) is EagerArray
    assert float(a.sum()) == 15.0 and a.mean(axis=0).tolist() == [1.5, 2.5, 3.5]
    assert 4.0 in a and 9.0 not in a
    assert f"{fnp.array(2.5):.2f}" == "2.50" and len(a) == 2


def test_copy_deepcopy_pickle():
    a = fnp.linspace(0.0, 1.0, 4)
    for b in (copy.copy(a), copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert type(b) is EagerArray and not b.flags.writeable
        np.testing.assert_array_equal(b, a)
        with pytest.raises(FuncadTypeError):
            b[0] = 1.0


def test_repr_and_str_like_jax():
    assert repr(fnp.arange(3.0)) == "Array([0., 1., 2.], dtype=float64)"
    assert repr(fnp.array(3, np.int32)) == "Array(3, dtype=int32)"
    assert repr(fnp.ones((2, 2), np.float32)) == "Array([[1., 1.],\n       [1., 1.]], dtype=float32)"
    assert str(fnp.arange(3.0)) == "[0. 1. 2.]"
    assert repr(fnp.arange(3.0)) == repr(_jnp().arange(3.0)).replace("float32", "float64")


# ------------------------------------------------------------ NumPy on eager arrays ----

def test_numpy_functions_give_numpy_values():
    a = fnp.arange(1.0, 5.0)
    s = np.sum(a)
    assert type(s) is np.float64 and s == 10.0
    assert type(np.sin(a)) is EagerArray and np.allclose(np.sin(a), np.sin(np.arange(1.0, 5.0)))
    assert np.median(a) == 2.5 and np.percentile(a, 50) == 2.5
    assert type(np.concatenate([a, a])) is np.ndarray and np.concatenate([a, a]).shape == (8,)
    np.testing.assert_allclose(a, [1.0, 2.0, 3.0, 4.0])
    assert np.linalg.norm(a) == pytest.approx(np.sqrt(30.0))
    assert np.array_equal(np.sort(a[::-1]), a)


def test_mixed_with_numpy_arrays_and_scalars():
    a = fnp.arange(3.0)
    for r in (np.ones(3) + a, a + np.ones(3), np.float64(2.0) * a, a * np.float32(2.0), 1 - a, a ** 2):
        assert type(r) is EagerArray
    assert (np.ones(3) + a).tolist() == [1.0, 2.0, 3.0]
    assert (a == pytest.approx([0.0, 1.0, 2.0])) is True  # unknown operands are asked back


# ------------------------------------------------------------ with jit and tracers ----

def test_closed_over_eager_array_indexed_by_traced_value():
    arr = fnp.arange(10)
    assert int(funcad.jit(lambda i: arr[i])(3)) == 3
    table = fnp.linspace(0.0, 1.0, 5)
    assert float(funcad.jit(lambda i: table[i] * 2)(np.int64(4))) == 2.0
    assert funcad.grad(lambda w: fnp.sum(table * w))(1.0) == pytest.approx(2.5)


def test_eager_op_tracer_gives_tracer_and_device_arrays_interplay():
    a = fnp.arange(3.0)
    f = funcad.jit(lambda x: (a + x, x * a, a @ x))
    out = f(np.ones(3))
    assert [np.asarray(o).tolist() for o in out[:2]] == [[1.0, 2.0, 3.0], [0.0, 1.0, 2.0]]
    assert float(out[2]) == 3.0
    d = funcad.jit(lambda x: x * 2)(np.ones(3))  # a device funcad.Array
    assert type(d) is funcad.Array
    for r in (d + a, a + d):
        assert type(r) is EagerArray and r.tolist() == [2.0, 3.0, 4.0]
    assert np.asarray(funcad.jit(lambda x: x + 1)(a)).tolist() == [1.0, 2.0, 3.0]
    assert np.asarray(funcad.vmap(lambda x: x * a)(fnp.ones((2, 3)))).tolist() == [[0.0, 1.0, 2.0]] * 2


# ------------------------------------------------------------ .at, against JAX ----

_I = np.array([3, 3, 9, -1, 0])
_V = np.array([-1.0, -2.0, 5.0, 7.0, 0.5])
AT_CASES = {
    "set": lambda x, m: x.at[1].set(9.0),
    "set_dup_last_wins": lambda x, m: x.at[m.asarray([1, 1])].set(m.asarray([5.0, 6.0])),
    "set_oob_dropped": lambda x, m: x.at[m.asarray([10, 1, -7])].set(9.0),
    "set_clip": lambda x, m: x.at[m.asarray([5])].set(9.0, mode="clip"),
    "set_drop": lambda x, m: x.at[10].set(9.0, mode="drop"),
    "set_no_wrap": lambda x, m: x.at[-1].set(9.0, wrap_negative_indices=False),
    "add_dup": lambda x, m: x.at[m.asarray([0, 0, 2])].add(1.0),
    "multiply_dup": lambda x, m: x.at[m.asarray([1, 1, 2])].multiply(3.0),
    "divide": lambda x, m: x.at[m.asarray([1, 1])].divide(2.0),
    "power": lambda x, m: x.at[m.asarray([2, 2, 3])].power(2.0),
    "min": lambda x, m: x.at[m.asarray([0, 0, 2])].min(m.asarray([-1.0, -2.0, 5.0])),
    "max": lambda x, m: x.at[m.asarray([3, 3, 2, 3])].max(m.asarray([7.0, 9.0, 1.0, 8.0])),
    "apply_dup": lambda x, m: x.at[m.asarray([1, 1, 3])].apply(lambda v: v * 10),
    "get": lambda x, m: x.at[2].get(),
    "get_clamps": lambda x, m: x.at[10].get(),
    "get_fill_nan": lambda x, m: x.at[m.asarray([1, 7, -1])].get(mode="fill"),
    "get_fill_value": lambda x, m: x.at[m.asarray([1, 7])].get(mode="fill", fill_value=-1),
    "get_slice": lambda x, m: x.at[1:3].get(mode="fill", fill_value=3),
    "slice_rev_set": lambda x, m: x.at[::-2].set(1.0),
    "mask_set": lambda x, m: x.at[np.array([True, False, True, False, False])].set(7.0),
    "newaxis_add": lambda x, m: x.at[None, 2].add(1.0),
    "traced_like_min": lambda x, m: x.at[m.asarray(_I)].min(m.asarray(_V)),
    "traced_like_set": lambda x, m: x.at[m.asarray(_I)].set(m.asarray(_V)),
    "traced_like_mul": lambda x, m: x.at[m.asarray(_I)].multiply(m.asarray(_V)),
    "traced_like_apply": lambda x, m: x.at[m.asarray(_I)].apply(lambda t: t + 1),
    "traced_like_get_fill": lambda x, m: x.at[m.asarray(_I)].get(mode="fill"),
}


@pytest.mark.parametrize("name", sorted(AT_CASES))
def test_at_eager_matches_jax(name):
    f = AT_CASES[name]
    want = np.asarray(f(_jnp().arange(5.0), _jnp()))
    got = f(fnp.arange(5.0), fnp)
    assert type(got) is EagerArray
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("name", [n for n in sorted(AT_CASES) if n.startswith("traced_like")])
def test_at_with_traced_indices_matches_jax(name):
    """The same updates with the indices and values traced (jit), so duplicates are unknown."""
    f = AT_CASES[name]
    want = np.asarray(f(_jnp().arange(5.0), _jnp()))

    class Traced:  # m.asarray(_I)/m.asarray(_V) become the jitted arguments
        @staticmethod
        def asarray(v):
            return {id(_I): i_t, id(_V): v_t}[id(v)]

    def run(i, v):
        global i_t, v_t
        i_t, v_t = i, v
        return f(fnp.arange(5.0), Traced)
    np.testing.assert_array_equal(np.asarray(funcad.jit(run)(_I, _V)), want)


def test_at_int_and_bool_arrays():
    jnp = _jnp()
    ints = fnp.arange(5).at[fnp.asarray([0, 0])].min(fnp.asarray([-3, -4]))
    assert ints.tolist() == np.asarray(jnp.arange(5).at[jnp.asarray([0, 0])].min(jnp.asarray([-3, -4]))).tolist()
    assert fnp.arange(5).at[7].get(mode="fill").item() == np.iinfo(np.int64).min
    assert fnp.zeros(3, bool).at[1].set(True).tolist() == [False, True, False]
    with pytest.raises(FuncadTypeError, match="booleans"):
        fnp.zeros(3, bool).at[0].add(True)


def test_at_gradients():
    g = funcad.grad(lambda x: fnp.sum(x.at[fnp.asarray([0, 0, 2])].multiply(3.0)))(np.arange(1.0, 4.0))
    np.testing.assert_allclose(g, [9.0, 1.0, 3.0])
    g = funcad.grad(lambda v: fnp.sum(fnp.zeros(3).at[fnp.asarray([1, 1])].max(v)))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [0.0, 1.0])


def test_at_bad_arguments():
    with pytest.raises(FuncadValueError, match="mode"):
        fnp.zeros(3).at[0].set(1.0, mode="wrap")
    with pytest.raises(FuncadValueError, match="scalar"):
        fnp.zeros(3).at[5].get(mode="fill", fill_value=np.ones(2))
    with pytest.raises(FuncadTypeError, match="broadcast"):
        fnp.zeros(3).at[:2].set(np.ones(3))


def test_eager_arrays_pass_into_jax_functions():
    jnp = pytest.importorskip("jax.numpy")
    a = fnp.arange(3.0)
    np.testing.assert_array_equal(np.asarray(jnp.sin(a) + a), np.sin(np.arange(3.0)) + np.arange(3.0))


# -------------------------------------------- the eager fast lane (_ufuncs.py) ----

LANE_OPERANDS = {
    "f64[3]*py float": lambda a: (a, 2.5), "py int/f32[3]": lambda a: (3, a.astype(np.float32)),
    "f16[3]-py float": lambda a: (a.astype(np.float16), 0.5), "f64[] 0-d, py float": lambda a: (a[0], 2.0),
    "f32[3] with f32[3]": lambda a: (a.astype(np.float32), a[::-1].astype(np.float32)),
    "eager f64[3] with f64[3]": lambda a: (fnp.asarray(a), a + 1.0),
    "f32[3]*py float 1e300": lambda a: (a.astype(np.float32), 1e300),
}


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "true_divide", "maximum", "less", "equal"])
@pytest.mark.parametrize("case", LANE_OPERANDS)
def test_fast_lane_matches_jax(op, case):
    jnp = _jnp()
    x, y = LANE_OPERANDS[case](np.array([0.5, -1.5, 2.0]))
    with np.errstate(over="ignore"):
        got = getattr(fnp, op)(x, y)
        want = getattr(jnp, op)(x, y)
    assert type(got) is EagerArray and not got.flags.writeable
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-15)  # XLA's divide may differ by an ulp


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_fast_lane_unary_and_operators_match_jax(dtype):
    jnp = _jnp()
    x = np.array([0.25, 1.0, 3.0], dtype)
    for got, want in [(fnp.sin(fnp.asarray(x)), jnp.sin(x)), (fnp.tanh(x), jnp.tanh(x)),
                      (2.0 * fnp.asarray(x) - 1, 2.0 * jnp.asarray(x) - 1),
                      (-fnp.asarray(x), -jnp.asarray(x)), (fnp.negative(x), jnp.negative(x))]:
        assert type(got) is EagerArray and got.dtype == want.dtype
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-3 if dtype == np.float16 else 1e-7)


def test_fast_lane_keeps_x32_and_debug_nans():
    with funcad.enable_x64(False):  # a float64 NumPy input is computed in 32 bits, as in JAX
        assert fnp.multiply(np.ones(2), 2.0).dtype == np.float32
        assert fnp.sin(np.ones(2)).dtype == np.float32
    with funcad.config.override(debug_nans=True), pytest.raises(funcad.NaNError, match="primitive `log`"):
        with np.errstate(invalid="ignore"):
            fnp.log(np.array([-1.0]))


def test_fast_lane_broadcasts_as_jax_and_explains_a_bad_shape():
    jnp = _jnp()
    a, b = np.arange(3.0).reshape(3, 1), fnp.asarray(np.arange(4.0))
    for got, want in [(a * b, jnp.asarray(a) * jnp.asarray(b)), (b - a, jnp.asarray(b) - jnp.asarray(a)),
                      (fnp.maximum(a, b), jnp.maximum(a, np.asarray(b)))]:
        assert type(got) is EagerArray and not got.flags.writeable and got.shape == (3, 4)
        np.testing.assert_array_equal(got, np.asarray(want))
    with pytest.raises(TypeError, match=r"add got f64\[3\], f64\[4\]: shapes do not broadcast"):
        fnp.ones(3) + fnp.ones(4)  # funcad's message, not NumPy's


def test_fast_lane_keeps_rank_promotion_and_debug_infs():
    a, b = fnp.ones((2, 3)), fnp.ones(3)
    with funcad.numpy_rank_promotion("raise"), pytest.raises(ValueError, match="rank_promotion"):
        a + b
    assert (a + fnp.ones((2, 3))).shape == (2, 3)  # equal ranks stay allowed
    with funcad.config.override(debug_infs=True), pytest.raises(funcad.InfError, match="div"):
        fnp.ones(2) / 0.0
    assert np.isinf(fnp.ones(2) / 0.0).all()  # the lane is back after the block


def test_operators_defer_to_unknown_operands():
    e = fnp.asarray([1.0, 2.0])
    assert e[0] == pytest.approx(1.0) and not (e[1] != pytest.approx(2.0))

    class Other:
        def __radd__(self, other):
            return "Other.__radd__"

        def __rmul__(self, other):
            return "Other.__rmul__"

    assert e + Other() == "Other.__radd__" and e * Other() == "Other.__rmul__"
    with pytest.raises(TypeError):
        e - object()
    with pytest.raises(TypeError):
        fnp.add(e, object())


def test_no_op_methods_of_a_device_array_give_funcad_arrays():
    # flax's normalization calls x.astype(x.dtype).mean(axes, where=None) on a jit result;
    # a plain ndarray there would take NumPy's mean, which refuses where=None.
    jnp = _jnp()
    x = funcad.jit(lambda: fnp.arange(6.0, dtype=np.float32).reshape(2, 3))()
    want = jnp.arange(6.0, dtype=np.float32).reshape(2, 3)
    for f in (lambda a: a.astype(np.float32), lambda a: a.reshape(2, 3), lambda a: a.squeeze(),
              lambda a: a.transpose((0, 1))):
        got = f(x)
        assert type(got) is EagerArray, type(got)
        np.testing.assert_array_equal(got.mean((1,), where=None), f(want).mean((1,), where=None))


def test_shard_is_jax_shard_shaped():
    a = funcad.device_put(fnp.arange(6.0).reshape(2, 3))
    (s,) = a.addressable_shards
    assert isinstance(s, funcad.Shard)
    assert s.replica_id == 0 and s.device == funcad.devices()[0]
    assert s.index == (slice(None), slice(None))
    np.testing.assert_array_equal(np.asarray(s.data), np.arange(6.0).reshape(2, 3))
    (j,) = jax.device_put(jnp.arange(6.0).reshape(2, 3)).addressable_shards
    assert (j.replica_id, j.index) == (s.replica_id, s.index)
    assert set(vars(type(j)).keys()) >= {"device", "index", "replica_id", "data"}
