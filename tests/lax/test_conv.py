"""funcad.lax's convolutions against JAX: values (eager and jit), both operands'
gradients to order 2, vmap along any axis of either operand, the wrappers,
dimension-number and shape helpers, dtype options and errors; funcad.scipy.signal
and funcad.numpy.convolve options."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
import funcad.scipy.signal as fsig
from funcad.core.errors import FuncadTypeError, FuncadValueError

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jlax = jax.lax

# (lhs shape, rhs shape, strides, padding, keyword arguments)
CONFIGS = {
    "valid_2d": ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), "VALID", {}),
    "same_strided": ((2, 3, 7, 6), (4, 3, 3, 3), (2, 3), "SAME", {}),
    "same_lower_dilated": ((1, 2, 7, 6), (3, 2, 2, 3), (1, 2), "SAME_LOWER", {"rhs_dilation": (2, 1)}),
    "lhs_dilation": ((2, 2, 4, 5), (3, 2, 3, 2), (1, 1), [(2, 1), (0, 2)], {"lhs_dilation": (2, 3)}),
    "negative_pad": ((2, 2, 6, 6), (2, 2, 2, 2), (2, 1), [(-1, 1), (1, -2)], {}),
    "feature_groups": ((2, 6, 5, 4), (9, 2, 2, 2), (1, 1), "SAME", {"feature_group_count": 3}),
    "batch_groups": ((6, 2, 5, 4), (6, 2, 3, 2), (1, 1), "VALID", {"batch_group_count": 3}),
    "nhwc": ((2, 6, 5, 3), (3, 2, 3, 4), (1, 2), "SAME", {"dimension_numbers": ("NHWC", "HWIO", "NHWC")}),
    "mixed_layout": ((5, 3, 2, 6), (2, 4, 3, 3), (1, 1), [(1, 0), (0, 1)],
                     {"dimension_numbers": ("HCNW", "WOHI", "WNHC")}),
    "conv1d_groups_dilated": ((3, 4, 9), (6, 2, 3), (2,), [(2, 2)],
                              {"feature_group_count": 2, "rhs_dilation": (2,), "lhs_dilation": (2,)}),
    "conv3d": ((1, 2, 4, 3, 5), (2, 2, 2, 2, 3), (1, 1, 2), "SAME", {}),
    "no_spatial": ((3, 4), (5, 4), (), [], {}),
}


def _args(name, dtype=np.float64, seed=0):
    xs, ks, *_ = CONFIGS[name]
    rng = np.random.default_rng(seed)
    return rng.standard_normal(xs).astype(dtype), rng.standard_normal(ks).astype(dtype)


def _funs(name):
    _, _, strides, padding, kw = CONFIGS[name]
    return (lambda x, k: lax.conv_general_dilated(x, k, strides, padding, **kw),
            lambda x, k: jlax.conv_general_dilated(x, k, strides, padding, **kw))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_values_match_jax_eager_and_jit(name):
    f, g = _funs(name)
    x, k = _args(name)
    ref = np.asarray(g(x, k))
    out = f(x, k)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(funcad.jit(f)(x, k)), ref, rtol=1e-12, atol=1e-12)


# The default run differentiates the configurations that exercise each transpose path
# (groups of both kinds, lhs dilation, negative padding, a permuted layout); -m slow all.
_FAST_GRADS = {"valid_2d", "lhs_dilation", "negative_pad", "feature_groups", "batch_groups", "mixed_layout"}


@pytest.mark.parametrize("name", [n if n in _FAST_GRADS else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(CONFIGS)])
def test_gradients_both_operands_orders_1_and_2(name):
    f, g = _funs(name)
    x, k = _args(name)
    c = np.random.default_rng(1).standard_normal(np.shape(g(x, k)))

    def loss(conv):  # a non-quadratic loss, so the second derivative is not constant
        return lambda x, k: (conv(x, k) * c).sum() + (conv(x, k) ** 3).sum() / 6
    for ours, ref in zip(funcad.grad(loss(f), (0, 1))(x, k), jax.grad(loss(g), (0, 1))(x, k)):
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-10)
    jit_grads = funcad.jit(funcad.grad(loss(f), (0, 1)))(x, k)
    for ours, ref in zip(jit_grads, jax.grad(loss(g), (0, 1))(x, k)):
        np.testing.assert_allclose(np.asarray(ours), ref, rtol=1e-10, atol=1e-10)
    # Order 2: a Hessian-vector product in both operands, forward over reverse.
    tx, tk = _args(name, seed=2)
    ours = funcad.jvp(funcad.grad(loss(f), (0, 1)), (x, k), (tx, tk))[1]
    ref = jax.jvp(jax.grad(loss(g), (0, 1)), (x, k), (tx, tk))[1]
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0), (2, 1)])
def test_vmap_matches_a_loop(name, axes):
    f, _ = _funs(name)
    x, k = _args(name)
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((3,) + x.shape) if axes[0] is not None else x
    ks = rng.standard_normal((3,) + k.shape) if axes[1] is not None else k
    if axes[0] is not None:
        xs = np.moveaxis(xs, 0, min(axes[0], x.ndim))
    if axes[1] is not None:
        ks = np.moveaxis(ks, 0, min(axes[1], k.ndim))
    ax = tuple(None if a is None else min(a, nd) for a, nd in zip(axes, (x.ndim, k.ndim)))
    out = funcad.vmap(f, ax)(xs, ks)
    take = lambda v, a, i: v if a is None else np.take(v, i, a)  # noqa: E731
    loop = np.stack([f(take(xs, ax[0], i), take(ks, ax[1], i)) for i in range(3)])
    np.testing.assert_allclose(out, loop, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(funcad.jit(funcad.vmap(f, ax))(xs, ks)), loop, rtol=1e-12, atol=1e-12)


def test_vmap_of_grad_per_example_kernels():
    f, g = _funs("feature_groups")
    x, k = _args("feature_groups")
    ks = np.stack([k, 2 * k, -k])

    def loss(conv):
        return lambda k, x: (conv(x, k) ** 2).sum()
    ours = funcad.vmap(funcad.grad(loss(f)), (0, None))(ks, x)
    ref = jax.vmap(jax.grad(loss(g)), (0, None))(ks, x)
    np.testing.assert_allclose(ours, ref, rtol=1e-10)


def test_wrappers_match_jax():
    rng = np.random.default_rng(0)
    x, k = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 2))
    np.testing.assert_allclose(lax.conv(x, k, (1, 2), "SAME"), jlax.conv(x, k, (1, 2), "SAME"), rtol=1e-12)
    np.testing.assert_allclose(
        lax.conv_with_general_padding(x, k, (2, 1), [(1, 0), (2, 1)], (1, 2), (2, 1)),
        jlax.conv_with_general_padding(x, k, (2, 1), [(1, 0), (2, 1)], (1, 2), (2, 1)), rtol=1e-12)


@pytest.mark.parametrize("kw", [
    dict(strides=(2, 2), padding="SAME"),
    dict(strides=(2, 1), padding="VALID", rhs_dilation=(1, 2)),
    dict(strides=(3, 2), padding="SAME", transpose_kernel=True),
    dict(strides=(2, 2), padding=[(1, 2), (0, 1)]),
    dict(strides=(2, 2), padding=[(1, 1), (0, 1)], use_consistent_padding=True),
    dict(strides=(2,), padding="SAME", dimension_numbers=("NCH", "OIH", "NCH")),
])
def test_conv_transpose_matches_jax(kw):
    import inspect
    if "use_consistent_padding" in kw and "use_consistent_padding" not in inspect.signature(jlax.conv_transpose).parameters:
        pytest.skip("this jax's conv_transpose has no use_consistent_padding (added after 0.6)")
    rng = np.random.default_rng(0)
    ndim = 3 if kw.get("dimension_numbers") else 4
    x = rng.standard_normal((2, 3, 4, 3)[:ndim])
    k = rng.standard_normal((3, 2, 3, 4)[:ndim] if ndim == 4 else (4, 3, 3))
    if kw.get("transpose_kernel"):
        k = np.swapaxes(k, 2, 3)
    strides, padding = kw.pop("strides"), kw.pop("padding")
    ref = jlax.conv_transpose(x, k, strides, padding, **kw)
    np.testing.assert_allclose(lax.conv_transpose(x, k, strides, padding, **kw), ref, rtol=1e-12)
    gx = funcad.grad(lambda x: (lax.conv_transpose(x, k, strides, padding, **kw) ** 2).sum())(x)
    jx = jax.grad(lambda x: (jlax.conv_transpose(x, k, strides, padding, **kw) ** 2).sum())(x)
    np.testing.assert_allclose(gx, jx, rtol=1e-10)


def test_dimension_numbers_and_shape_helpers_match_jax():
    for dn in [None, ("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("HCNW", "WOHI", "WNHC")]:
        ours = lax.conv_dimension_numbers((5, 3, 2, 6), (2, 4, 3, 3), dn)
        assert tuple(ours) == tuple(jlax.conv_dimension_numbers((5, 3, 2, 6), (2, 4, 3, 3), dn))
    dn = lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), dn) is dn
    args = ((3, 9, 8, 2), (3, 3, 2, 5), (2, 3), "SAME", ("NHWC", "HWIO", "NHWC"))
    assert lax.conv_general_shape_tuple(*args) == tuple(jlax.conv_general_shape_tuple(*args))
    assert lax.conv_transpose_shape_tuple(*args) == tuple(map(int, jlax.conv_transpose_shape_tuple(*args)))
    assert lax.conv_shape_tuple((2, 3, 9), (4, 3, 3), (2,), [(1, 2)]) == jlax.conv_shape_tuple(
        (2, 3, 9), (4, 3, 3), (2,), [(1, 2)])
    for pad in ["SAME", "SAME_LOWER", "VALID"]:
        assert lax.padtype_to_pads((7, 8), (4, 3), (2, 3), pad) == [
            tuple(p) for p in jlax.padtype_to_pads((7, 8), (4, 3), (2, 3), pad)]


@pytest.mark.parametrize("xs,filt,strides,padding,kw", [
    ((2, 3, 6, 5), (2, 3), (1, 2), "SAME", {}),
    ((2, 6, 5, 3), (3, 2), (2, 1), [(1, 0), (0, 2)], {"dimension_numbers": ("NHWC", "OIHW", "NHWC"),
                                                       "rhs_dilation": (1, 2)}),
    ((2, 6, 5, 3), (3, 2), (1, 1), [(0, 0), (1, 1)], {"dimension_numbers": ("NHWC", "HWIO", "NCHW"),
                                                       "lhs_dilation": (2, 1)}),
])
def test_patches_match_jax(xs, filt, strides, padding, kw):
    x = np.random.default_rng(0).standard_normal(xs)
    ref = jlax.conv_general_dilated_patches(x, filt, strides, padding, **kw)
    np.testing.assert_array_equal(lax.conv_general_dilated_patches(x, filt, strides, padding, **kw), ref)
    g = funcad.grad(lambda x: (lax.conv_general_dilated_patches(x, filt, strides, padding, **kw) ** 2).sum())(x)
    jg = jax.grad(lambda x: (jlax.conv_general_dilated_patches(x, filt, strides, padding, **kw) ** 2).sum())(x)
    np.testing.assert_allclose(g, jg, rtol=1e-12)


def test_permutation_and_window_shape_helpers_match_jax():
    for dn in [("NCHW", "OIHW", "NCHW"), ("HCNW", "WOHI", "WNHC"), ("NHC", "HIO", "NCH")]:
        assert lax.conv_general_permutations(dn) == jlax.conv_general_permutations(dn)
    for args in [((4, 7), (2, 3), (2, 2), [(1, 0), (0, 2)], (1, 2), (2, 1)), ((5, 1), (3, 3), (1, 1), [(0, 0)] * 2)]:
        assert lax.reduce_window_shape_tuple(*args) == tuple(jlax.reduce_window_shape_tuple(*args))


def test_preferred_element_type_and_precision():
    rng = np.random.default_rng(0)
    xi, ki = rng.integers(-5, 5, (2, 3, 6)).astype(np.int8), rng.integers(-5, 5, (2, 3, 3)).astype(np.int8)
    for pet in [np.int32, np.float32]:
        out = lax.conv(xi, ki, (1,), "VALID", preferred_element_type=pet)
        ref = jlax.conv(xi, ki, (1,), "VALID", preferred_element_type=pet)
        assert out.dtype == ref.dtype
        np.testing.assert_array_equal(out, ref)
        np.testing.assert_array_equal(np.asarray(funcad.jit(
            lambda a, b: lax.conv(a, b, (1,), "VALID", preferred_element_type=pet))(xi, ki)), ref)
    x, k = rng.standard_normal((2, 3, 6)).astype(np.float32), rng.standard_normal((2, 3, 3)).astype(np.float32)
    assert lax.conv(x, k, (1,), "SAME", preferred_element_type=np.float64).dtype == np.float64
    for prec in [None, "highest", "default", ("high", "highest"), jlax.Precision.HIGHEST]:
        out = funcad.jit(lambda a, b: lax.conv(a, b, (1,), "SAME", precision=prec))(x, k)
        np.testing.assert_allclose(np.asarray(out), jlax.conv(x, k, (1,), "SAME", precision="highest"), rtol=1e-5)
    with pytest.raises(FuncadValueError, match="precision"):
        lax.conv(x, k, (1,), "SAME", precision="best")
    with pytest.raises(FuncadTypeError, match="narrower"):
        lax.conv(x, k, (1,), "SAME", preferred_element_type=np.float16)
    with pytest.raises(FuncadTypeError, match="does not fit"):
        lax.conv(x, k, (1,), "SAME", preferred_element_type=np.int32)


@pytest.mark.parametrize("call,match", [
    (lambda x, k: lax.conv(x, k[:, :2], (1, 1), "VALID"), "features"),
    (lambda x, k: lax.conv(x, k.astype(np.float32), (1, 1), "VALID"), "dtype"),
    (lambda x, k: lax.conv(x, k, (1,), "VALID"), "entries each"),
    (lambda x, k: lax.conv(x, k, (0, 1), "VALID"), "positive"),
    (lambda x, k: lax.conv(x, k, (1, 1), "FULL"), "padding"),
    (lambda x, k: lax.conv(x, k, (1, 1), [(1,), (2,)]), "pairs"),
    (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", lhs_dilation=(2, 1)), "conv_transpose"),
    (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW")), "three"),
    (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHH")),
     "once each"),
    (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHX", "NCHW")),
     "spatial"),
    (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", feature_group_count=2, batch_group_count=2),
     "at most one"),
    (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), "SAME", batch_group_count=3), "divide"),
    (lambda x, k: lax.conv(x[0], k, (1, 1), "VALID"), "rank"),
])
def test_errors_explain(call, match):
    x, k = np.ones((2, 4, 5, 5)), np.ones((4, 4, 3, 3))
    with pytest.raises((FuncadTypeError, FuncadValueError), match=match):
        call(x, k)


def test_empty_output_and_integer_conv_under_jit():
    x, k = np.ones((1, 1, 2)), np.ones((1, 1, 3))
    assert lax.conv(x, k, (1,), "VALID").shape == (1, 1, 0)
    assert funcad.jit(lambda a, b: lax.conv(a, b, (1,), "VALID"))(x, k).shape == (1, 1, 0)
    xi, ki = np.arange(12).reshape(1, 2, 6), np.arange(6).reshape(1, 2, 3)
    ref = np.asarray(jlax.conv(xi, ki, (2,), "SAME"))
    np.testing.assert_array_equal(lax.conv(xi, ki, (2,), "SAME"), ref)
    np.testing.assert_array_equal(np.asarray(funcad.jit(lambda a, b: lax.conv(a, b, (2,), "SAME"))(xi, ki)), ref)


def test_jaxpr_and_to_python():
    f, _ = _funs("mixed_layout")
    x, k = _args("mixed_layout")
    closed = funcad.make_jaxpr(funcad.grad(lambda x, k: (f(x, k) ** 2).sum(), (0, 1)))(x, k)
    assert sum(e.prim.name == "conv_general_dilated" for e in closed.jaxpr.eqns) == 3
    src = funcad.to_python(funcad.make_jaxpr(f)(x, k))
    scope = {}
    exec(src, scope)
    fn = [v for n, v in scope.items() if callable(v) and not n.startswith("_") and n != "np"][-1]
    np.testing.assert_allclose(np.asarray(fn(x, k)).reshape(f(x, k).shape), f(x, k), rtol=1e-12)


# --------------------------------------------------------------- signal ----

def test_signal_modes_methods_and_grads_match_jax():
    import jax.scipy.signal as jsig
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 6)), rng.standard_normal((3, 2))
    for mode in ["full", "same", "valid"]:
        for method in ["auto", "direct", "fft"]:
            np.testing.assert_allclose(fsig.convolve(a, b, mode, method), jsig.convolve(a, b, mode, "direct"),
                                       rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(fsig.correlate(a, b, mode, method), jsig.correlate(a, b, mode, "direct"),
                                       rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fsig.convolve(np.arange(4), np.arange(3)), jsig.convolve(np.arange(4), np.arange(3)))
    g = funcad.grad(lambda b: (fsig.correlate2d(a, b, "same") ** 2).sum())(b)
    np.testing.assert_allclose(g, jax.grad(lambda b: (jsig.correlate2d(a, b, "same") ** 2).sum())(b), rtol=1e-10)
    v = funcad.vmap(lambda a: fsig.convolve2d(a, b))(np.stack([a, -a]))
    np.testing.assert_allclose(v[1], -fsig.convolve2d(a, b), rtol=1e-12)


@pytest.mark.parametrize("call,match", [
    (lambda a, b: fsig.convolve(a, b, "circular"), "mode"),
    (lambda a, b: fsig.convolve(a, b, method="overlap"), "method"),
    (lambda a, b: fsig.convolve2d(a, b, boundary="wrap"), "boundary='fill'"),
    (lambda a, b: fsig.correlate2d(a, b, fillvalue=1.0), "fillvalue=0"),
    (lambda a, b: fsig.convolve2d(a[0], b), "2-d"),
    (lambda a, b: fsig.convolve(a, b.T), "every dimension"),
    (lambda a, b: fsig.convolve(a, b[0]), "same number of dimensions"),
    (lambda a, b: fsig.convolve(a, b[:0]), "zero-size"),
])
def test_signal_errors_explain(call, match):
    with pytest.raises(FuncadValueError, match=match):
        call(np.ones((5, 3)), np.ones((4, 2)))


def test_numpy_convolve_options_match_jax():
    import jax.numpy as jnp
    rng = np.random.default_rng(0)
    a, v = rng.standard_normal(7).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    for mode in ["full", "same", "valid"]:
        out = fnp.convolve(a, v, mode, precision="highest", preferred_element_type=np.float64)
        ref = jnp.convolve(a, v, mode, precision="highest", preferred_element_type=np.float64)
        assert out.dtype == ref.dtype
        np.testing.assert_allclose(out, ref, rtol=1e-6)
        np.testing.assert_allclose(fnp.correlate(v, a, mode), jnp.correlate(v, a, mode), rtol=1e-5)
    with pytest.raises(FuncadValueError, match="1-d"):
        fnp.convolve(np.ones((2, 2)), v)


def test_fftconvolve_matches_jax_with_axes_complex_and_jit():
    import jax.scipy.signal as jsig
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 6, 5))
    ac = a + 1j * rng.standard_normal(a.shape)
    # (kernel, axes): axes not convolved over are matched pairwise, so their sizes agree.
    cases = [(rng.standard_normal((2, 3, 2)), None), (rng.standard_normal((4, 3, 2)), (1, 2)),
             (rng.standard_normal((4, 6, 2)), -1)]
    for mode in ["full", "same", "valid"]:
        for x in [a, ac]:
            for k, axes in cases:
                ref = jsig.fftconvolve(x, k, mode, axes)
                np.testing.assert_allclose(fsig.fftconvolve(x, k, mode, axes), ref, rtol=1e-10, atol=1e-12)
        k = cases[0][0]
        np.testing.assert_allclose(fsig.convolve(a, k, mode, method="fft"), jsig.convolve(a, k, mode), atol=1e-12)
    k = cases[1][0]
    f = funcad.jit(lambda x, y: fsig.fftconvolve(x, y, "same", axes=(1, 2)))
    np.testing.assert_allclose(np.asarray(f(a, k)), jsig.fftconvolve(a, k, "same", (1, 2)), atol=1e-12)
    g = funcad.grad(lambda y: (fsig.fftconvolve(a, y, "valid", axes=(1, 2)) ** 2).sum())(k)
    np.testing.assert_allclose(g, jax.grad(lambda y: (jsig.fftconvolve(a, y, "valid", (1, 2)) ** 2).sum())(k),
                               rtol=1e-9)
    with pytest.raises(FuncadValueError, match="equal sizes"):
        fsig.fftconvolve(a, k[:2], axes=(1, 2))
    with pytest.raises(FuncadValueError, match="every dimension"):
        fsig.fftconvolve(a, np.ones((1, 8, 1)), "valid")


def test_complex_convolutions_match_jax():
    import jax.numpy as jnp
    import jax.scipy.signal as jsig
    rng = np.random.default_rng(0)
    c = lambda *s: rng.standard_normal(s) + 1j * rng.standard_normal(s)  # noqa: E731
    x, k = c(2, 3, 5, 4), c(4, 3, 3, 2)
    f = lambda lx: lambda x, k: lx.conv_general_dilated(x, k, (1, 2), "SAME", rhs_dilation=(2, 1))  # noqa: E731
    np.testing.assert_allclose(f(lax)(x, k), f(jlax)(x, k), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(funcad.jit(f(lax))(x, k)), f(jlax)(x, k), rtol=1e-12)
    loss = lambda lx: lambda x, k: (abs(f(lx)(x, k)) ** 2).sum()  # noqa: E731
    for ours, ref in zip(funcad.grad(loss(lax), (0, 1))(x, k), jax.grad(loss(jlax), (0, 1))(x, k)):
        np.testing.assert_allclose(ours, ref, rtol=1e-10)
    a, v, p, q = c(6), c(3), c(3, 4), c(2, 3)
    for mode in ["full", "same", "valid"]:
        np.testing.assert_allclose(fnp.correlate(a, v, mode), jnp.correlate(a, v, mode), rtol=1e-12)
        np.testing.assert_allclose(fnp.correlate(v, a, mode), jnp.correlate(v, a, mode), rtol=1e-12)
        np.testing.assert_allclose(fsig.correlate2d(p, q, mode), jsig.correlate2d(p, q, mode), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fsig.correlate(q, p, mode), jsig.correlate(q, p, mode), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dn,strides,padding,lhs_d,rhs_d", [
    (None, (1, 1), "VALID", None, None),
    (("NHWC", "HWIO", "NHWC"), (2, 1), "SAME", None, (1, 2)),
    (("NCHW", "OIHW", "NHWC"), (1, 2), [(1, 0), (2, 1)], (2, 1), None),
])
def test_conv_general_dilated_local_layouts_match_jax(dn, strides, padding, lhs_d, rhs_d):
    rng = np.random.default_rng(8)
    fs = (3, 2)
    xshape = (2, 9, 8, 3) if dn and dn[0] == "NHWC" else (2, 3, 9, 8)
    x = rng.normal(size=xshape)
    patches = jlax.conv_general_dilated_patches(x, fs, strides, padding, lhs_d, rhs_d, dimension_numbers=dn)
    _, rhs_spec, out_spec = jlax.conv_dimension_numbers(x.shape, (1, 1) + fs, dn)
    shape = [0] * 4
    shape[rhs_spec[0]], shape[rhs_spec[1]] = 4, patches.shape[out_spec[1]]
    for i, d in enumerate(rhs_spec[2:]):
        shape[d] = patches.shape[out_spec[2 + i]]
    w = rng.normal(size=shape)
    args = (strides, padding, fs, lhs_d, rhs_d, dn)
    got = lax.conv_general_dilated_local(x, w, *args)
    want = jlax.conv_general_dilated_local(x, w, *args)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    g = funcad.grad(lambda x, w: fnp.sum(lax.conv_general_dilated_local(x, w, *args) ** 2), (0, 1))(x, w)
    h = jax.grad(lambda x, w: (jlax.conv_general_dilated_local(x, w, *args) ** 2).sum(), (0, 1))(x, w)
    for a, b in zip(g, h):
        np.testing.assert_allclose(a, b, rtol=1e-11)
    np.testing.assert_allclose(funcad.jit(lambda x, w: lax.conv_general_dilated_local(x, w, *args))(x, w),
                               want, rtol=1e-12)
    x32 = x.astype(np.float32)
    mixed = lax.conv_general_dilated_local(x32, w, *args)
    assert mixed.dtype == np.float64
    np.testing.assert_allclose(mixed, jlax.conv_general_dilated_local(x32, w, *args), rtol=1e-12)
