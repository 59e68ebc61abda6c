"""funcad.image (jax.image): resize and scale_and_translate against JAX 0.12 for every
method, up- and downscaling, antialiasing and dtypes (to a few ulps); gradients with
respect to the image, scale and translation against JAX and finite differences; jit,
vmap; ResizeMethod's names; JAX's errors."""
import numpy as np
import pytest

import funcad
import funcad.image as fimg
import funcad.numpy as fnp
from funcad.core.errors import FuncadValueError
from funcad.test_util import check_grads

METHODS = ["nearest", "linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]
SHAPES = [(9, 4, 3), (3, 13, 3), (2, 2, 3), (11, 7, 3), (1, 7, 3)]


@pytest.fixture(scope="module")
def jx():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _close(got, want, ulps=8):
    """Equal dtype and shape, and values within a few ulps of the largest magnitude."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    scale = max(float(np.abs(want).max(initial=0.0)), 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=ulps * np.finfo(got.dtype).eps * scale)


def _image(shape=(5, 7, 3), dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 200, shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


SLOW = pytest.mark.slow
# The default run checks each method on one dtype and a few cases (JAX compiles each
# one, which is what takes the time); the slow run the whole grid.
QUICK_OR_FULL = pytest.mark.parametrize("full", [False, pytest.param(True, marks=SLOW)], ids=["quick", "full"])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@QUICK_OR_FULL
def test_resize_matches_jax(jx, method, dtype, full):
    x = _image(dtype=dtype)
    quick = (SHAPES[0], SHAPES[1]) if (dtype == np.float64) == (METHODS.index(method) % 2 == 0) else (SHAPES[3],)
    for shape in SHAPES if full else quick:
        for antialias in (True, False):
            _close(fimg.resize(x, shape, method, antialias=antialias),
                   jx.image.resize(x, shape, method, antialias=antialias))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, pytest.param(np.uint8, marks=SLOW),
                                   pytest.param(np.bool_, marks=SLOW)])
def test_resize_of_integer_images_matches_jax(jx, dtype):
    x = _image((4, 6), dtype=np.int32).astype(dtype)
    for method in ("nearest", "linear", "cubic", "area"):
        _close(fimg.resize(x, (7, 3), method), jx.image.resize(x, (7, 3), method))


def test_resize_explicit_values():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert fimg.resize(x, (1, 1), "linear").tolist() == [[2.5]]
    assert fimg.resize(np.array([0.0, 1.0]), (4,), "bilinear").tolist() == [0.0, 0.25, 0.75, 1.0]
    assert fimg.resize(np.array([1, 2, 3]), (6,), "nearest").tolist() == [1, 1, 2, 2, 3, 3]
    assert fimg.resize(np.arange(4.0), (2,), "area").tolist() == [0.5, 2.5]
    # without antialiasing, a downscale samples the input: linear halfway between pixels
    assert fimg.resize(np.arange(4.0), (2,), "linear", antialias=False).tolist() == [0.5, 2.5]
    # unchanged sizes are left alone, whatever the kernel
    x = _image((3, 4))
    assert np.array_equal(fimg.resize(x, (3, 4), "lanczos5"), x)


@pytest.mark.parametrize("method", METHODS[1:])
@QUICK_OR_FULL
def test_scale_and_translate_matches_jax(jx, method, full):
    cases = (([1.7, 0.6], [-0.3, 1.2]), ([0.5, 2.0], [0.0, -3.0]), ([1.0, 1.0], [0.5, 0.25]))
    for dtype in (np.float32, np.float64) if full else (np.float64,):
        x = _image(dtype=dtype, seed=1)
        for scale, translation in cases if full else cases[:1]:
            sc, tr = np.array(scale, dtype), np.array(translation, dtype)
            for antialias in (True, False):
                _close(fimg.scale_and_translate(x, (8, 5, 3), (0, 1), sc, tr, method, antialias=antialias),
                       jx.image.scale_and_translate(x, (8, 5, 3), (0, 1), sc, tr, method, antialias=antialias))
    # spatial dims in any order, negative, a subset
    if not full:
        return
    x = _image(seed=2)
    sc, tr = np.array([1.3, 0.8]), np.array([0.1, 0.4])
    _close(fimg.scale_and_translate(x, (5, 6, 4), (-1, 1), sc, tr, method),
           jx.image.scale_and_translate(x, (5, 6, 4), (-1, 1), sc, tr, method))
    _close(fimg.scale_and_translate(x, (5, 7, 3), (), np.zeros(0), np.zeros(0), method), x)


@SLOW
def test_scale_and_translate_dtypes_match_jax(jx):
    x = _image((4, 6), dtype=np.int32)
    sc32, tr32 = np.array([1.5, 0.7], np.float32), np.array([0.2, 0.1], np.float32)
    # (image, scale, translation, the weights' dtype: it sets the rounding)
    for image, sc, tr, wdt in ((x, sc32, tr32, np.float32), (x.astype(np.float32), sc32.astype(np.float64), tr32, np.float32),
                               (x.astype(np.float64), sc32, tr32, np.float32),
                               (x.astype(np.int64), np.array([2, 1]), np.array([0, 1]), np.float64)):
        got = fimg.scale_and_translate(image, (7, 5), (0, 1), sc, tr, "lanczos3")
        want = jx.image.scale_and_translate(image, (7, 5), (0, 1), sc, tr, "lanczos3")
        assert got.dtype == want.dtype
        _close(np.asarray(got).astype(wdt), np.asarray(want).astype(wdt))


@pytest.mark.parametrize("method", ["linear", "lanczos3", "cubic-pytorch", "area",
                                    pytest.param("lanczos5", marks=SLOW), pytest.param("cubic", marks=SLOW)])
def test_gradients_match_jax(jx, method):
    import jax.numpy as jnp
    x = _image((5, 4), seed=3)
    sc, tr = np.array([1.7, 0.55]), np.array([-0.3, 0.45])
    w = np.random.default_rng(4).normal(size=(8, 3))

    def loss(np_, img):
        return lambda x, s, t: np_.sum(img.scale_and_translate(x, (8, 3), (0, 1), s, t, method) * w)
    got = funcad.grad(loss(fnp, fimg), argnums=(0, 1, 2))(x, sc, tr)
    want = jx.grad(loss(jnp, jx.image), argnums=(0, 1, 2))(x, sc, tr)
    for g, v in zip(got, want):
        _close(g, v, ulps=64)
    w2 = np.random.default_rng(5).normal(size=(3, 7))
    r = lambda lib, img: lambda x: lib.sum(img.resize(x, (3, 7), method) * w2)  # noqa: E731
    _close(funcad.grad(r(fnp, fimg))(x), jx.grad(r(jnp, jx.image))(x), ulps=64)


@pytest.mark.parametrize("method", ["linear", "lanczos3", "cubic", "cubic-pytorch", "area"])
def test_gradients_match_finite_differences(method):
    x = _image((4, 3), seed=5)
    # scale/translation away from the kernels' kinks (where the triangle and area
    # weights are not differentiable)
    sc, tr = np.array([1.37, 0.71]), np.array([0.113, -0.087])
    check_grads(lambda x, s, t: fimg.scale_and_translate(x, (6, 2), (0, 1), s, t, method, antialias=False),
                (x, sc, tr), order=1, modes=("fwd", "rev"))
    check_grads(lambda x: fimg.resize(x, (7, 2), method), (x,), order=1, modes=("rev",))


@pytest.mark.slow
@pytest.mark.parametrize("method", ["lanczos5", "cubic"])
def test_second_order_derivatives(method):
    x = _image((4, 3), seed=6)
    sc, tr = np.array([1.37, 0.71]), np.array([0.113, -0.087])
    check_grads(lambda x, s, t: fimg.scale_and_translate(x, (6, 2), (0, 1), s, t, method),
                (x, sc, tr), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("method", ["nearest", "linear", "lanczos3", "cubic-pytorch", "area"])
def test_jit_matches_eager(method):
    x = _image((5, 7, 3), dtype=np.float32, seed=7)
    for shape, aa in (((9, 4, 3), True), ((3, 13, 3), False)):
        got = funcad.jit(lambda x: fimg.resize(x, shape, method, antialias=aa))(x)
        _close(got, fimg.resize(x, shape, method, antialias=aa))
    if method != "nearest":
        # (away from the area weights' kinks, where eager and jit round onto different sides)
        sc, tr = np.array([1.37, 0.61], np.float32), np.array([0.31, -0.17], np.float32)
        f = lambda x, s, t: fimg.scale_and_translate(x, (6, 4, 3), (0, 1), s, t, method)  # noqa: E731
        _close(funcad.jit(f)(x, sc, tr), f(x, sc, tr))
        g = funcad.grad(lambda s: fnp.sum(f(x, s, tr) ** 2))
        _close(funcad.jit(g)(sc), g(sc), ulps=64)


@pytest.mark.parametrize("method", ["nearest", "linear", "lanczos5", "cubic-pytorch", "area"])
def test_vmap_matches_loop(method):
    xs = _image((3, 5, 7), seed=8)
    got = funcad.vmap(lambda x: fimg.resize(x, (4, 9), method))(xs)
    _close(got, np.stack([fimg.resize(x, (4, 9), method) for x in xs]), ulps=2)
    if method != "nearest":
        scs = np.array([[1.4, 0.6], [0.8, 1.1], [2.0, 0.5]])
        trs = np.array([[0.3, -0.2], [0.0, 0.0], [-1.0, 0.5]])
        f = lambda x, s, t: fimg.scale_and_translate(x, (6, 4), (0, 1), s, t, method)  # noqa: E731
        got = funcad.vmap(f)(xs, scs, trs)
        _close(got, np.stack([f(xs[i], scs[i], trs[i]) for i in range(3)]), ulps=2)
        got = funcad.vmap(f, in_axes=(None, 0, None))(xs[0], scs, trs[0])
        _close(got, np.stack([f(xs[0], s, trs[0]) for s in scs]), ulps=2)


def test_resize_method_names_match_jax(jx):
    import jax.image
    assert [(m.name, m.value) for m in fimg.ResizeMethod] == [(m.name, m.value) for m in jax.image.ResizeMethod]
    names = ["nearest", "linear", "bilinear", "trilinear", "triangle", "lanczos3", "lanczos5", "cubic",
             "bicubic", "tricubic", "cubic-pytorch", "bicubic-pytorch", "area"]
    for n in names:
        assert fimg.ResizeMethod.from_string(n).name == jax.image.ResizeMethod.from_string(n).name
    x = _image((3, 4), seed=9)
    _close(fimg.resize(x, (5, 2), fimg.ResizeMethod.LANCZOS3), jx.image.resize(x, (5, 2), "lanczos3"))
    _close(fimg.resize(x, (5, 2), jax.image.ResizeMethod.CUBIC), jx.image.resize(x, (5, 2), "cubic"))


def test_errors_match_jax(jx):
    x = _image((4, 5))
    cases = [
        (lambda m: m.resize(x, (3,), "linear"),
         r"shape must have length equal to the number of dimensions of x;  \(3,\) vs \(4, 5\)"),
        (lambda m: m.resize(x, (3, 3), "bogus"), 'Unknown resize method "bogus"'),
        (lambda m: m.scale_and_translate(x, (3, 3), (0, 1), np.ones(2), np.zeros(2), "nearest"),
         "Nearest neighbor resampling is not currently supported for scale_and_translate."),
        (lambda m: m.scale_and_translate(x, (3, 3, 1), (0, 1), np.ones(2), np.zeros(2), "linear"),
         "shape must have length equal to the number of dimensions of x"),
    ]
    for call, msg in cases:
        with pytest.raises(ValueError, match=msg):
            call(jx.image)
        with pytest.raises(FuncadValueError, match=msg):
            call(fimg)
    with pytest.raises(FuncadValueError, match="one entry per spatial dimension"):
        fimg.scale_and_translate(x, (3, 3), (0, 1), np.ones(3), np.zeros(2), "linear")
    with pytest.raises(FuncadValueError, match="spatial dimension 2 is out of range"):
        fimg.scale_and_translate(x, (3, 3), (0, 2), np.ones(2), np.zeros(2), "linear")
    with pytest.raises(FuncadValueError, match="method must be a ResizeMethod"):
        fimg.resize(x, (3, 3), 3)
