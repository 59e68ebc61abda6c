"""JAX's array semantics on funcad values: `isinstance(x, funcad.Array)` and out-of-bounds
indices (static ones clamp, as JAX's dynamic_slice and gather do; take/take_along_axis
fill), eagerly and under jit/vmap, each checked against JAX."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

A5 = np.arange(5.0)
A34 = np.arange(12.0).reshape(3, 4)


# ----------------------------------------------------------- isinstance(x, Array) ----

def test_isinstance_array_eager_device_and_tracers():
    assert isinstance(fnp.arange(5.0), funcad.Array)
    assert isinstance(fnp.sin(1.0), funcad.Array)
    assert isinstance(funcad.jit(lambda x: x * 2)(A5), funcad.Array)
    assert issubclass(type(fnp.ones(2)), funcad.Array)
    seen = []
    funcad.jit(lambda x: seen.append(isinstance(x, funcad.Array)) or x)(1.0)
    funcad.grad(lambda x: seen.append(isinstance(x, funcad.Array)) or x)(1.0)
    funcad.vmap(lambda x: seen.append(isinstance(x, funcad.Array)) or x)(A5)
    assert seen == [True, True, True]


@pytest.mark.parametrize("value", [np.ones(3), 1.0, [1.0], np.float64(2.0), "a"])
def test_isinstance_array_false_for_non_funcad_values(value):
    # As in JAX: NumPy arrays, scalars and lists are not Arrays.
    assert not isinstance(value, funcad.Array)
    assert isinstance(value, jax.Array) is False


def test_device_array_type_is_still_array():
    y = funcad.jit(lambda x: x + 1)(A5)
    assert type(y) is funcad.Array
    assert type(y).__name__ == "Array"


# ----------------------------------------------------------------- out of bounds ----

INDICES = {
    "int_high": 10, "int_low": -10, "int_minus_n_minus_1": -6, "int_last": -1,
    "array": np.array([10, -10, -6, 2]), "array_2d": np.array([[7, 0], [-1, -9]]),
}


@pytest.mark.parametrize("name", list(INDICES))
def test_out_of_bounds_index_clamps_like_jax(name):
    idx = INDICES[name]
    want = np.asarray(jnp.asarray(A5)[idx])
    np.testing.assert_array_equal(fnp.asarray(A5)[idx], want)
    np.testing.assert_array_equal(funcad.jit(lambda x: x[idx])(A5), want)
    # A traced index, and a closed-over eager array indexed by a traced value.
    arr = fnp.asarray(A5)
    np.testing.assert_array_equal(funcad.jit(lambda i: arr[i])(idx), want)


def test_out_of_bounds_index_2d_mixed_and_vmap():
    x = fnp.asarray(A34)
    np.testing.assert_array_equal(x[5, -9], jnp.asarray(A34)[5, -9])
    np.testing.assert_array_equal(x[np.array([5, -7]), 1:3], jnp.asarray(A34)[np.array([5, -7]), 1:3])
    np.testing.assert_array_equal(x[-7, ::2], jnp.asarray(A34)[-7, ::2])
    i = np.array([10, -10, -6, 3])
    np.testing.assert_array_equal(funcad.vmap(lambda k: x[k])(i), jax.vmap(lambda k: jnp.asarray(A34)[k])(i))
    np.testing.assert_array_equal(funcad.vmap(lambda k: x[1, k])(i), np.asarray(A34)[1, [3, 0, 0, 3]])


def test_out_of_bounds_gradient_goes_to_the_clamped_entry():
    np.testing.assert_array_equal(funcad.grad(lambda x: x[10])(A5), [0, 0, 0, 0, 1.0])
    np.testing.assert_array_equal(funcad.grad(lambda x: x[-10] * 3)(A5), [3.0, 0, 0, 0, 0])
    # The derivative of the clamped gather, in both modes. JAX's forward mode gives this
    # too; its reverse mode gives 0 for the out-of-bounds entry (its scatter transpose
    # drops it), so JAX's jacfwd and jacrev disagree there; funcad's agree with jacfwd.
    np.testing.assert_array_equal(funcad.grad(lambda x: x[np.array([10, 1])].sum())(A5), [0, 1.0, 0, 0, 1.0])
    i = np.array([10, 1])
    np.testing.assert_array_equal(funcad.jacfwd(lambda v: v[i])(np.arange(1.0, 6.0)),
                                  jax.jacfwd(lambda v: v[i])(np.arange(1.0, 6.0)))
    np.testing.assert_array_equal(funcad.jacrev(lambda v: v[i])(np.arange(1.0, 6.0)),
                                  funcad.jacfwd(lambda v: v[i])(np.arange(1.0, 6.0)))


def test_index_into_empty_axis_raises():
    with pytest.raises(IndexError, match="size 0"):
        fnp.zeros((0, 3))[0]


@pytest.mark.parametrize("mode", [None, "fill", "clip", "wrap"])
def test_take_modes_like_jax(mode):
    idx = np.array([-1, -7, 7, 2])
    np.testing.assert_array_equal(fnp.take(A5, idx, mode=mode), jnp.take(A5, idx, mode=mode))
    np.testing.assert_array_equal(funcad.jit(lambda x, i: fnp.take(x, i, mode=mode))(A5, idx),
                                  jnp.take(A5, idx, mode=mode))
    np.testing.assert_array_equal(fnp.take(A34, np.array([[4, 0]]), axis=1, mode=mode),
                                  jnp.take(A34, np.array([[4, 0]]), axis=1, mode=mode))


def test_take_fill_values_and_ints():
    assert np.isnan(fnp.take(A5, 10))
    assert fnp.take(A5, 10, fill_value=-1.0) == -1.0
    assert fnp.take(np.arange(5), 7) == np.iinfo(np.int64).min
    assert fnp.take(np.arange(5, dtype=np.uint8), 7) == 255
    np.testing.assert_array_equal(funcad.vmap(lambda i: fnp.take(A5, i))(np.array([0, 9])), [0.0, np.nan])
    g = funcad.grad(lambda x: fnp.take(x, np.array([1, 10]), fill_value=0.0).sum())(A5)
    np.testing.assert_array_equal(g, [0, 1.0, 0, 0, 0])


@pytest.mark.parametrize("mode", [None, "fill", "clip"])
def test_take_along_axis_modes_like_jax(mode):
    idx = np.array([[2, -1, 9], [-8, 0, 1], [3, 3, 3]])
    np.testing.assert_array_equal(fnp.take_along_axis(A34, idx, 1, mode=mode),
                                  jnp.take_along_axis(A34, idx, 1, mode=mode))
    np.testing.assert_array_equal(funcad.jit(lambda x: fnp.take_along_axis(x, idx, 1, mode=mode))(A34),
                                  jnp.take_along_axis(A34, idx, 1, mode=mode))
    np.testing.assert_array_equal(fnp.take_along_axis(A34, np.array([4, 13]), None, mode=mode),
                                  jnp.take_along_axis(A34, np.array([4, 13]), None, mode=mode))


def test_take_errors():
    with pytest.raises(ValueError, match="'raise'"):
        fnp.take(A5, 1, mode="raise")
    with pytest.raises(ValueError, match="mode"):
        fnp.take(A5, 1, mode="bogus")
    with pytest.raises(ValueError, match="immutable"):
        fnp.take(A5, 1, out=np.zeros(()))
    with pytest.raises(ValueError, match="same number of dimensions"):
        fnp.take_along_axis(A34, np.array([0]), 1)


def test_reshape_ravel_and_flatten_in_fortran_order_match_jax():
    x = np.arange(24.0).reshape(2, 3, 4)
    for s in [(4, 6), (6, -1), 24, (2, 2, 2, 3)]:
        np.testing.assert_array_equal(fnp.reshape(x, s, order="F"), jnp.reshape(x, s, order="F"))
        np.testing.assert_array_equal(funcad.jit(lambda v: v.reshape(s, order="F"))(x), jnp.reshape(x, s, order="F"))
    np.testing.assert_array_equal(fnp.ravel(x, order="F"), jnp.ravel(x, order="F"))
    np.testing.assert_array_equal(fnp.asarray(x).flatten(order="F"), jnp.asarray(x).flatten(order="F"))
    w = np.arange(24.0).reshape(4, 6)
    np.testing.assert_array_equal(funcad.grad(lambda v: (fnp.reshape(v, (4, 6), order="F") * w).sum())(x),
                                  jax.grad(lambda v: (jnp.reshape(v, (4, 6), order="F") * w).sum())(x))
    with pytest.raises(NotImplementedError, match="order=A"):  # as JAX
        fnp.reshape(x, 24, order="A")
    with pytest.raises(funcad.FuncadError, match="order"):
        fnp.reshape(x, 24, order="K")


def test_python_round_of_arrays_as_jax():
    x = np.array([0.5, 1.5, 2.567, -1.25])
    for args in [(), (2,), (0,)]:
        want = round(jnp.asarray(x), *args)
        for got in (round(fnp.asarray(x), *args), round(funcad.device_put(x), *args),
                    funcad.jit(lambda v: round(v, *args))(x)):
            assert got.dtype == want.dtype and isinstance(got, funcad.Array)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("idx", [np.array(True), np.array(False), (0, np.array(True)),
                                 (Ellipsis, np.array(False)), (slice(None), np.array(True), 1)],
                         ids=["true", "false", "int-true", "ellipsis-false", "slice-true-int"])
def test_zero_d_boolean_index_adds_an_axis_as_jax(idx):
    # JAX (and NumPy) read a 0-d boolean index as a new axis of size 1 (True) or 0 (False).
    x = np.arange(6.0).reshape(2, 3)
    want = jnp.asarray(x)[idx]
    for got in (fnp.asarray(x)[idx], funcad.jit(lambda v: v[idx])(x)):
        assert got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_numpy_scalar_boolean_index_as_numpy():
    # NumPy's own code indexes eager arrays with the np.bool_ its ufuncs return for 0-d
    # inputs (numpy.testing.assert_allclose: error[invalids]); JAX's jnp has no rule for it.
    e = abs(fnp.asarray(1.0) - 2.0)
    np.testing.assert_array_equal(e[np.True_], np.asarray(1.0)[np.True_])
    assert e[np.False_].shape == (0,)
    np.testing.assert_allclose(fnp.asarray(1.0), 1.0)
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(fnp.asarray(1.0), 2.0)


def test_lax_full_and_full_like_place_by_sharding_and_return_arrays_as_jax():
    from funcad.sharding import SingleDeviceSharding
    x = np.zeros((2, 3), np.float32)
    dev, jdev = funcad.devices()[0], jax.devices()[0]
    got = funcad.lax.full_like(x, 1.5, sharding=SingleDeviceSharding(dev))
    want = jax.lax.full_like(x, 1.5, sharding=jax.sharding.SingleDeviceSharding(jdev))
    assert got.sharding == SingleDeviceSharding(dev) and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # eager results are funcad Arrays (immutable), as JAX's are jax Arrays
    got = funcad.lax.full((2,), 3.0, sharding=SingleDeviceSharding(dev))
    assert got.sharding == SingleDeviceSharding(dev)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jax.lax.full((2,), 3.0)))
    for v in (funcad.lax.full_like(x, 2.0), funcad.lax.full((2,), 1.0), fnp.positive(np.ones(2))):
        assert isinstance(v, funcad.Array) and not v.flags.writeable
