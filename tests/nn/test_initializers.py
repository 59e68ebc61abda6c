"""funcad.nn.initializers against jax.nn.initializers: equal values for the same key."""
import warnings

import numpy as np
import pytest

import funcad
import funcad.random as fr
from funcad.core.errors import FuncadValueError
from funcad.nn import initializers as I


@pytest.fixture(scope="module")
def J():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.nn.initializers as J
    return J


def _keys():
    import jax
    return fr.PRNGKey(7), jax.random.PRNGKey(7)


PRESETS = ["glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal", "lecun_uniform",
           "lecun_normal", "he_uniform", "he_normal", "kaiming_uniform", "kaiming_normal"]


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_presets_equal_jax(J, name, dtype):
    k, jk = _keys()
    ours = np.asarray(getattr(I, name)()(k, (3, 4, 5), dtype))
    theirs = np.asarray(getattr(J, name)()(jk, (3, 4, 5), dtype))
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name,arg", [("normal", 0.3), ("uniform", 2.0), ("truncated_normal", 0.7)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scaled_initializers_equal_jax(J, name, arg, dtype):
    k, jk = _keys()
    ours = np.asarray(getattr(I, name)(arg)(k, (6, 2), dtype))
    theirs = np.asarray(getattr(J, name)(arg)(jk, (6, 2), dtype))
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-7)


def test_variance_scaling_modes_axes_and_jit(J):
    k, jk = _keys()
    for mode in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        for dist in ("truncated_normal", "normal", "uniform"):
            ours = I.variance_scaling(1.5, mode, dist, in_axis=(0, 1), out_axis=-1, batch_axis=())
            theirs = J.variance_scaling(1.5, mode, dist, in_axis=(0, 1), out_axis=-1)
            np.testing.assert_allclose(np.asarray(ours(k, (2, 3, 4))), theirs(jk, (2, 3, 4), "float64"),
                                       rtol=1e-12, atol=1e-14)
    jitted = funcad.jit(lambda key: I.he_normal()(key, (5, 4)))(k)
    np.testing.assert_allclose(jitted, J.he_normal()(jk, (5, 4), "float64"), rtol=1e-12)


def test_dtype_default_zeros_ones_constant(J):
    k, jk = _keys()
    assert I.zeros(k, (2, 3)).dtype == np.float64  # NumPy's default float, as funcad.random
    assert I.ones(k, 3, "float32").tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_array_equal(I.constant(-0.25, "float32")(k, (2, 2)), J.constant(-0.25, "float32")(jk, (2, 2)))
    assert I.glorot_uniform(dtype="float32")(k, (3, 3)).dtype == np.float32
    assert isinstance(I.normal(), I.Initializer)


def test_errors_name_the_problem():
    k = fr.PRNGKey(0)
    with pytest.raises(FuncadValueError, match="1-dimensional weights tensor with default in_axis"):
        I.glorot_uniform()(k, (5,))
    with pytest.raises(FuncadValueError, match="invalid mode .*'fan'.*fan_in"):
        I.variance_scaling(1.0, "fan", "normal")
    with pytest.raises(FuncadValueError, match="invalid distribution .*'gaussian'"):
        I.variance_scaling(1.0, "fan_in", "gaussian")


@pytest.mark.parametrize("shape,column_axis", [((3, 3), -1), ((5, 3), -1), ((3, 5), -1), ((2, 3, 4), -1),
                                               ((4, 2, 3), 0), ((2, 3, 4), 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_orthogonal_equals_jax(J, shape, column_axis, dtype):
    k, jk = _keys()
    ours = np.asarray(I.orthogonal(1.3, column_axis)(k, shape, dtype))
    theirs = np.asarray(J.orthogonal(1.3, column_axis)(jk, shape, dtype))
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)
    flat = np.moveaxis(ours, column_axis, -1).reshape(-1, shape[column_axis]) / 1.3
    small = min(flat.shape)
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)


@pytest.mark.parametrize("shape", [(3, 2, 4), (3, 3, 2, 4), (3, 2, 3, 2, 2)])
def test_delta_orthogonal_equals_jax_eager_and_jit(J, shape):
    k, jk = _keys()
    want = J.delta_orthogonal()(jk, shape, "float64")
    np.testing.assert_allclose(I.delta_orthogonal()(k, shape), want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(funcad.jit(lambda key: I.delta_orthogonal()(key, shape))(k), want,
                               rtol=1e-12, atol=1e-15)


def test_orthogonal_errors_and_empty_shapes():
    k = fr.PRNGKey(0)
    assert I.orthogonal()(k, (0, 3)).shape == (0, 3)
    with pytest.raises(FuncadValueError, match="at least a 2D shape"):
        I.orthogonal()(k, (4,))
    with pytest.raises(FuncadValueError, match="3D, 4D or 5D"):
        I.delta_orthogonal()(k, (3, 3))
    with pytest.raises(FuncadValueError, match="fan_in. must be less or equal than .fan_out"):
        I.delta_orthogonal()(k, (3, 3, 4, 2))


def test_initializers_default_dtype_is_silent_with_x64_off():
    key = funcad.random.PRNGKey(0)
    with funcad.enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("error")
        for init in (funcad.nn.initializers.glorot_normal(), funcad.nn.initializers.normal(),
                     funcad.nn.initializers.zeros):
            assert init(key, (3, 2)).dtype == np.float32
    assert funcad.nn.initializers.glorot_normal()(key, (3, 2)).dtype == np.float64
