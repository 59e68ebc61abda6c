"""funcad.numpy's keyword variants against jax.numpy: unique, set operations, searchsorted,
quantile, histograms, pad, index tricks and more, size= under jit/vmap, the errors and edge
cases; and small realistic programs that run unchanged on both through an import switch."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.lax as flax
import funcad.numpy as fnp
from funcad.core.errors import ConcretizationError, FuncadValueError

jax.config.update("jax_enable_x64", True)


def same(a, b, rtol=1e-10):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x.shape, y.shape)
        np.testing.assert_allclose(x.astype(float), y.astype(float), rtol=rtol, atol=1e-12, equal_nan=True)


INTS = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])


@pytest.mark.parametrize("kw", [dict(), dict(return_index=True), dict(return_inverse=True),
                                dict(return_counts=True),
                                dict(return_index=True, return_inverse=True, return_counts=True)])
@pytest.mark.parametrize("size", [None, 5, 10, 12])
def test_unique_flags_and_size_match_jax(kw, size):
    for fill in ([None, -1] if size else [None]):
        same(fnp.unique(INTS, size=size, fill_value=fill, **kw), jnp.unique(INTS, size=size, fill_value=fill, **kw))


def test_unique_under_jit_and_vmap_with_size():
    f = lambda m: lambda x: m.unique(x, size=6, fill_value=0, return_counts=True)  # noqa: E731
    same(funcad.jit(f(fnp))(INTS), jax.jit(f(jnp))(INTS))
    batch = np.stack([INTS, INTS[::-1] * 2])
    same(funcad.vmap(f(fnp))(batch), jax.vmap(f(jnp))(batch))


def test_unique_axis_and_nan():
    rows = np.array([[1, 2], [0, 1], [1, 2], [0, 1]])
    same(fnp.unique(rows, axis=0, return_inverse=True, return_counts=True),
         jnp.unique(rows, axis=0, return_inverse=True, return_counts=True))
    x = np.array([1.0, np.nan, 2.0, np.nan])
    same(fnp.unique(x), jnp.unique(x))
    same(fnp.unique(x, equal_nan=False), jnp.unique(x, equal_nan=False))


@pytest.mark.parametrize("name", ["unique", "nonzero", "argwhere", "flatnonzero"])
def test_data_dependent_shape_without_size_raises_under_jit(name):
    with pytest.raises(ConcretizationError, match="size="):
        funcad.jit(getattr(fnp, name))(np.array([0.0, 1.0, 1.0]))
    with pytest.raises(ConcretizationError, match="size="):
        funcad.jit(lambda x: fnp.where(x > 0))(np.array([0.0, 1.0]))


def test_data_dependent_shapes_work_eagerly_and_under_eager_grad():
    x = np.array([[0.0, 2.0], [3.0, 0.0]])
    same(fnp.nonzero(x), jnp.nonzero(x))
    same(fnp.argwhere(x), jnp.argwhere(x))
    same(fnp.where(x > 1), jnp.where(x > 1))
    g = funcad.grad(lambda v: fnp.sum(v[fnp.nonzero(v > 1.0)] ** 2))(x)
    same(g, np.where(x > 1.0, 2 * x, 0.0))


@pytest.mark.parametrize("fill", [None, -1, (7, 8)])
def test_nonzero_argwhere_size_fill_match_jax(fill):
    x = np.array([[0, 1, 2], [3, 0, 0]])
    same(funcad.jit(lambda a: fnp.nonzero(a, size=5, fill_value=fill))(x), jnp.nonzero(x, size=5, fill_value=fill))
    same(fnp.nonzero(x, size=2), jnp.nonzero(x, size=2))
    if not isinstance(fill, tuple):
        same(fnp.argwhere(x, size=4, fill_value=fill), jnp.argwhere(x, size=4, fill_value=fill))
        same(fnp.flatnonzero(x, size=4, fill_value=fill), jnp.flatnonzero(x, size=4, fill_value=fill))
    same(funcad.vmap(lambda a: fnp.where(a > 0, size=2, fill_value=-1))(x),
         jax.vmap(lambda a: jnp.where(a > 0, size=2, fill_value=-1))(x))


@pytest.mark.parametrize("fn", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
@pytest.mark.parametrize("size", [None, 3, 9])
def test_set_operations_match_jax(fn, size):
    a, b = INTS, np.array([9, 7, 1, 1, 8])
    same(getattr(fnp, fn)(a, b, size=size), getattr(jnp, fn)(a, b, size=size))
    if size is not None:
        same(funcad.jit(lambda x, y: getattr(fnp, fn)(x, y, size=size, fill_value=-5))(a, b),
             getattr(jnp, fn)(a, b, size=size, fill_value=-5))


def test_intersect1d_return_indices_and_isin():
    a, b = INTS, np.array([9, 7, 1, 1, 8])
    same(fnp.intersect1d(a, b, return_indices=True), jnp.intersect1d(a, b, return_indices=True))
    same(fnp.isin(a, b, invert=True), jnp.isin(a, b, invert=True))


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("method", ["scan", "sort", "compare_all"])
def test_searchsorted_sides_methods_sorter_nan(side, method):
    a = np.array([1.0, 2.0, 2.0, 3.0, np.nan])
    v = np.array([[2.0, 0.0], [np.nan, 3.5]])
    same(fnp.searchsorted(a, v, side, method=method), jnp.searchsorted(a, v, side, method=method))
    perm = np.array([3, 0, 2, 1])
    same(fnp.searchsorted(a[:4][perm], v, side, sorter=np.argsort(a[:4][perm])),
         jnp.searchsorted(a[:4][perm], v, side, sorter=np.argsort(a[:4][perm])))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"])
def test_quantile_methods_axes_keepdims(method):
    x = np.random.default_rng(1).normal(size=(3, 4, 5))
    q = np.array([0.0, 0.3, 1.0])
    for axis in (None, 1, (0, 2)):
        for kd in (False, True):
            same(fnp.quantile(x, q, axis=axis, method=method, keepdims=kd),
                 jnp.quantile(x, q, axis=axis, method=method, keepdims=kd))
    xn = np.where(x > 1.0, np.nan, x)
    same(fnp.nanquantile(xn, 0.4, axis=2, method=method), jnp.nanquantile(xn, 0.4, axis=2, method=method))
    same(fnp.quantile(xn, 0.4, axis=2, method=method), jnp.quantile(xn, 0.4, axis=2, method=method))


def test_quantile_weights_and_errors():
    x, w = np.arange(6.0), np.array([1.0, 0.0, 2.0, 1.0, 3.0, 1.0])
    same(fnp.quantile(x, 0.5, method="inverted_cdf", weights=w), jnp.quantile(x, 0.5, method="inverted_cdf", weights=w))
    with pytest.raises(FuncadValueError, match="weights"):
        fnp.quantile(x, 0.5, weights=w)
    with pytest.raises(FuncadValueError, match="method"):
        fnp.quantile(x, 0.5, method="cubic")


def test_histograms_and_bincount_match_jax():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=50), rng.normal(size=50)
    same(fnp.histogram(x, bins=7, range=(-2, 2), weights=np.abs(y), density=True),
         jnp.histogram(x, bins=7, range=(-2, 2), weights=np.abs(y), density=True))
    same(fnp.histogram2d(x, y, bins=(3, 4)), jnp.histogram2d(x, y, bins=(3, 4)))
    same(fnp.histogramdd(np.stack([x, y], 1), bins=3), jnp.histogramdd(np.stack([x, y], 1), bins=3))
    same(funcad.jit(lambda v: fnp.histogram(v, bins=5))(x), jnp.histogram(x, bins=5))
    same(funcad.jit(lambda i: fnp.bincount(i, length=4))(INTS), jnp.bincount(INTS, length=4))
    with pytest.raises(ConcretizationError, match="size="):
        funcad.jit(fnp.bincount)(INTS)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp",
                                  "maximum", "minimum", "mean", "median"])
def test_pad_modes_match_jax(mode):
    x = np.arange(12.0).reshape(3, 4) ** 1.5
    for pw in (2, (1, 3), ((0, 2), (3, 1))):
        same(fnp.pad(x, pw, mode=mode), jnp.pad(x, pw, mode=mode))
    same(funcad.jit(lambda a: fnp.pad(a, (1, 5), mode=mode))(x), jnp.pad(x, (1, 5), mode=mode))


def test_pad_keywords_and_errors():
    x = np.arange(5)
    same(fnp.pad(x, 3, mode="reflect", reflect_type="odd"), jnp.pad(x, 3, mode="reflect", reflect_type="odd"))
    same(fnp.pad(x, (2, 1), mode="maximum", stat_length=2), jnp.pad(x, (2, 1), mode="maximum", stat_length=2))
    same(fnp.pad(x, 2, constant_values=(-1, 7)), jnp.pad(x, 2, constant_values=(-1, 7)))
    with pytest.raises(FuncadValueError, match="mode"):
        fnp.pad(x, 1, mode="bogus")
    with pytest.raises(FuncadValueError, match="keyword"):
        fnp.pad(x, 1, mode="edge", constant_values=1)


def test_call_forms():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    same(fnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]))
    same(fnp.einsum(a, [Ellipsis, 1], [Ellipsis]), jnp.einsum(a, [Ellipsis, 1], [Ellipsis]))
    same(fnp.array_split(np.arange(10), [3, 5]), jnp.array_split(np.arange(10), [3, 5]))
    same(fnp.split(np.arange(10), [2, 7]), jnp.split(np.arange(10), [2, 7]))
    same(fnp.clip(a, a_min=1, a_max=4), np.clip(a, a_min=1, a_max=4))
    same(fnp.clip(a, min=1), jnp.clip(a, min=1))
    same(fnp.clip(a, max=2.5), jnp.clip(a, max=2.5))
    same(funcad.jit(lambda x: x.clip(0.5, 2))(a), jnp.clip(a, 0.5, 2))
    seen = []
    funcad.grad(lambda x: (seen.append(isinstance(x, fnp.ndarray)), x.sum())[1])(a)
    funcad.jit(lambda x: (seen.append(isinstance(x, fnp.ndarray)), x)[1])(a)
    seen += [isinstance(a, fnp.ndarray), isinstance(funcad.jit(lambda x: x)(a), fnp.ndarray)]
    assert seen == [True] * 4
    assert not isinstance(1.0, fnp.ndarray) and not isinstance([1.0], fnp.ndarray)


def test_functional_updates_need_inplace_false():
    x = np.zeros((2, 3))
    with pytest.raises(FuncadValueError, match="inplace=False"):
        fnp.put_along_axis(x, np.array([[1], [0]]), 1.0, axis=1)
    same(fnp.put_along_axis(x, np.array([[1], [0]]), np.array([[5.0], [6.0]]), axis=1, inplace=False),
         jnp.put_along_axis(x, np.array([[1], [0]]), np.array([[5.0], [6.0]]), axis=1, inplace=False))
    want = np.zeros((7, 3))
    np.fill_diagonal(want, 2.0, wrap=True)  # JAX has no wrap=True; NumPy is the reference
    same(fnp.fill_diagonal(np.zeros((7, 3)), 2.0, wrap=True, inplace=False), want)
    same(fnp.fill_diagonal(np.zeros((3, 3, 3)), 2.0, inplace=False),
         jnp.fill_diagonal(np.zeros((3, 3, 3)), 2.0, inplace=False))
    same(fnp.put(x, np.array([1, 7]), np.array([3.0, 4.0]), mode="wrap", inplace=False),
         jnp.put(x, np.array([1, 7]), np.array([3.0, 4.0]), mode="wrap", inplace=False))


def test_index_tricks_and_creation():
    same(fnp.r_[np.array([1, 2]), 0, 3:6], jnp.r_[np.array([1, 2]), 0, 3:6])
    same(fnp.r_["0,2", np.array([1, 2]), np.array([3, 4])], jnp.r_["0,2", np.array([1, 2]), np.array([3, 4])])
    same(fnp.c_[np.array([1, 2]), np.array([3, 4])], jnp.c_[np.array([1, 2]), np.array([3, 4])])
    same(fnp.mgrid[0:2, 0:1:3j], jnp.mgrid[0:2, 0:1:3j])
    same(fnp.ogrid[0:2, 0:3], jnp.ogrid[0:2, 0:3])
    assert fnp.s_[1:3, ::2] == np.s_[1:3, ::2] and fnp.index_exp[2] == (2,)
    same(fnp.triu_indices(4, 1), jnp.triu_indices(4, 1))
    same(fnp.meshgrid(np.arange(2.0), np.arange(3.0), sparse=True), jnp.meshgrid(np.arange(2.0), np.arange(3.0), sparse=True))
    same(fnp.geomspace(1.0, 1000.0, 4), jnp.geomspace(1.0, 1000.0, 4))
    same(funcad.jit(lambda s: fnp.logspace(s, 2.0, 5))(0.5), jnp.logspace(0.5, 2.0, 5))
    same([fnp.hamming(7), fnp.hanning(7), fnp.blackman(7), fnp.bartlett(7)],
         [jnp.hamming(7), jnp.hanning(7), jnp.blackman(7), jnp.bartlett(7)])


def test_shifts_gcd_and_dtype_helpers():
    x = np.array([1, -3, 5, -128], np.int32)
    s = np.array([2, 31, 33, 1])
    same(fnp.left_shift(x, s), jnp.left_shift(x, s))
    same(fnp.right_shift(x, s), jnp.right_shift(x, s))
    same(fnp.right_shift(np.array([255, 17], np.uint8), np.array([3, 8])),
         jnp.right_shift(np.array([255, 17], np.uint8), np.array([3, 8])))
    same(funcad.jit(fnp.gcd)(np.array([12, -18, 0]), np.array([18, 24, 5])), jnp.gcd(np.array([12, -18, 0]), np.array([18, 24, 5])))
    same(fnp.lcm(np.array([4, 6, 0]), np.array([6, 4, 3])), jnp.lcm(np.array([4, 6, 0]), np.array([6, 4, 3])))
    assert fnp.promote_types(np.int8, np.uint8) == jnp.promote_types(np.int8, np.uint8)
    assert fnp.isdtype(np.float32, "real floating") and not fnp.isdtype(np.int8, ("bool", "unsigned integer"))
    assert fnp.can_cast(np.float32, np.float64) and not fnp.can_cast(np.float64, np.int32)


def test_partition_top_k_layout_matches_jax():
    v = np.array([5.0, 1.0, 4.0, 2.0, 3.0, 0.5])
    same(fnp.partition(v, 2), jnp.partition(v, 2))
    same(fnp.argpartition(v, 2), jnp.argpartition(v, 2))
    same(fnp.top_k(v, 3), jnp.top_k(v, 3))
    same(flax.top_k(np.array([1.0, 3.0, 3.0, 2.0]), 2), jax.lax.top_k(np.array([1.0, 3.0, 3.0, 2.0]), 2))


# ---------------------------------------------------------- realistic programs ----
# Each takes the numpy module and lax module as its only switch: written once, run on both.

def program_vocab(np_, lax_):
    """A data pipeline: map tokens to ids by a sorted vocabulary, count them, bucket them."""
    tokens = np_.array([17, 3, 42, 3, 99, 17, 17, 8, 42, 1000])
    vocab, counts = np_.unique(tokens, return_counts=True, size=8, fill_value=-1)
    ids = np_.searchsorted(vocab[:6], tokens)
    known = np_.isin(tokens, vocab[:6])
    freq = np_.bincount(np_.where(known, ids, 0), length=6)
    buckets = np_.digitize(tokens, np_.array([10, 50]))
    return vocab, counts, ids, freq, buckets


def program_stats(np_, lax_):
    """Summary statistics of noisy measurements with outliers marked as NaN."""
    x = np_.linspace(0.0, 1.0, 40)
    y = np_.sin(6 * x) + 0.1 * np_.cos(40 * x)
    y = np_.where(y > 0.9, np_.nan, y)
    q = np_.nanquantile(y, np_.array([0.1, 0.5, 0.9]))
    counts, edges = np_.histogram(np_.nan_to_num(y), bins=5, range=(-1.0, 1.0))
    c = np_.corrcoef(np_.stack([x, np_.nan_to_num(y), x ** 2]))
    return q, np_.nanmedian(y), np_.nanstd(y), counts, edges, c, np_.average(x, weights=np_.abs(np_.nan_to_num(y)))


def program_simulation(np_, lax_):
    """A 1-d heat equation with reflecting boundaries, resampled on a finer grid."""
    x = np_.linspace(0.0, 1.0, 21)
    u0 = np_.exp(-50.0 * (x - 0.3) ** 2)

    def step(u, _):
        up = np_.pad(u, 1, mode="reflect")
        lap = np_.diff(up, n=2) / (x[1] - x[0]) ** 2
        return u + 1e-4 * lap, np_.trapezoid(u, x)
    u, mass = lax_.scan(step, u0, None, length=50)
    fine = np_.linspace(0.0, 1.0, 57)
    return u, mass, np_.interp(fine, x, u), np_.gradient(u, x)


def program_signal(np_, lax_):
    """Smoothing, peak finding and windowed pooling of a signal."""
    t = np_.arange(64.0)
    s = np_.sin(t / 5.0) + 0.3 * np_.sin(t * 1.3)
    smooth = np_.convolve(s, np_.hanning(7) / np_.hanning(7).sum(), mode="same")
    vals, idx = lax_.top_k(smooth, 3)
    peaks = np_.argwhere(np_.diff(np_.sign(np_.diff(smooth))) < 0, size=8, fill_value=-1)
    pooled = lax_.reduce_window(smooth, -np_.inf, lax_.max, (4,), (4,), "VALID")
    return smooth, vals, idx, peaks, pooled, lax_.cumlogsumexp(s[:10])


def program_loss_grad(np_, lax_, grad):
    """A robust regression loss with a median-centred target, differentiated."""
    xs = np_.linspace(-1.0, 1.0, 9)
    ys = 2.0 * xs + 0.3 * np_.sin(5 * xs)

    def loss(w):
        r = ys - (w[0] * xs + w[1])
        r = r - np_.median(r)
        return np_.mean(np_.clip(r, -0.2, 0.2) ** 2) + 0.01 * np_.sum(np_.diff(w) ** 2)
    return grad(loss)(np_.array([1.5, 0.1]))


@pytest.mark.parametrize("program", [program_vocab, program_stats, program_simulation, program_signal])
def test_program_runs_unchanged_on_jax_and_funcad(program):
    same(program(fnp, flax), program(jnp, jax.lax), rtol=1e-9)
    same(funcad.jit(lambda: program(fnp, flax))(), jax.jit(lambda: program(jnp, jax.lax))(), rtol=1e-9)


def test_program_with_gradients_agrees():
    same(program_loss_grad(fnp, flax, funcad.grad), program_loss_grad(jnp, jax.lax, jax.grad), rtol=1e-9)
    same(funcad.jit(lambda: program_loss_grad(fnp, flax, funcad.grad))(),
         program_loss_grad(jnp, jax.lax, jax.grad), rtol=1e-9)


LINSPACES = [((-1.0, 1.0, 20), {}), ((0.3, -2.7, 37), {}), ((0, 10, 8), dict(endpoint=False)),
             ((np.array([0.0, 5.0]), np.array([5.0, 10.0]), 5), {}), ((1, 4, 7), dict(dtype=np.int32)),
             ((2.0, 3.0, 1), {}), ((np.zeros((2, 3)), 1.0, 4), dict(axis=-1)), ((0.0, 1.0, 6), dict(retstep=True))]


@pytest.mark.parametrize("x64", [False, True])
def test_linspace_gives_jaxs_bits(x64):
    # JAX's linspace is jitted: XLA multiplies by 1/div and fuses a multiply-add, so
    # e.g. linspace(-1, 1, 20)[9] is -0.052631594 in float32, where op-by-op it is -0.05263158.
    with jax.enable_x64(x64), funcad.enable_x64(x64):
        for args, kw in LINSPACES:
            for got, want in zip(jax.tree_util.tree_leaves(fnp.linspace(*args, **kw)),
                                 jax.tree_util.tree_leaves(jnp.linspace(*args, **kw))):
                assert got.dtype == want.dtype and got.shape == want.shape, args
                np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=str(args))
        f = lambda a, lin: lin(a, 2.0, 7) * 3.0
        np.testing.assert_array_equal(np.asarray(funcad.jit(lambda a: f(a, fnp.linspace))(0.1)),
                                      np.asarray(jax.jit(lambda a: f(a, jnp.linspace))(0.1)))
        np.testing.assert_allclose(np.asarray(funcad.grad(lambda a: f(a, fnp.linspace).sum())(0.1)),
                                   np.asarray(jax.grad(lambda a: f(a, jnp.linspace).sum())(0.1)), rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(funcad.vmap(lambda a: fnp.linspace(a, 2.0, 5))(np.arange(3.0))),
                                      np.asarray(jax.vmap(lambda a: jnp.linspace(a, 2.0, 5))(jnp.arange(3.0))))


def test_nanargmin_nanargmax_against_jax():
    # They passed keepdims where argmin/argmax take out=, so every call raised.
    x = np.array([[np.nan, 2.0, 1.0], [np.nan, np.nan, np.nan], [3.0, np.nan, 5.0]])
    for name in ("nanargmin", "nanargmax"):
        for kw in ({}, {"axis": 1}, {"axis": 0, "keepdims": True}):
            want = getattr(jnp, name)(x, **kw)
            got = getattr(fnp, name)(x, **kw)
            np.testing.assert_array_equal(got, want, err_msg=f"{name}{kw}")
            np.testing.assert_array_equal(funcad.jit(lambda a: getattr(fnp, name)(a, **kw))(x), want)


def test_reshape_size_mismatch_says_what_jax_says():
    for f in (lambda m: m.reshape(m.arange(2), (3,)), lambda m: m.arange(6).reshape(4, 2)):
        with pytest.raises(TypeError) as want:
            f(jnp)
        with pytest.raises(TypeError) as got:
            f(fnp)
        assert str(got.value) == str(want.value)


def test_bool_to_an_int_power_with_x64_off_as_jax():
    # blackjax's thinning: `(x ** 2).mean() ** 0.5` over a bool leaf of an info tuple
    b = np.array([True, False, True, True])
    with jax.enable_x64(False), funcad.enable_x64(False):
        for f in (lambda m, v: v ** 2, lambda m, v: m.power(v, 3), lambda m, v: (v ** 2).mean() ** 0.5):
            got, want = funcad.jit(lambda v: f(fnp, v))(b), jax.jit(lambda v: f(jnp, v))(b)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_typeof_and_kaiser():
    a = funcad.typeof(np.ones((2, 3), np.float32))
    assert a.shape == (2, 3) and a.dtype == np.float32
    assert funcad.typeof(1.0).weak_type
    np.testing.assert_allclose(fnp.kaiser(9, 4.5), jnp.kaiser(9, 4.5), rtol=1e-12)
    np.testing.assert_allclose(fnp.kaiser(9, 4.5), np.kaiser(9, 4.5), rtol=1e-12)
    np.testing.assert_allclose(funcad.grad(lambda b: fnp.kaiser(6, b).sum())(2.0),
                               jax.grad(lambda b: jnp.kaiser(6, b).sum())(2.0), rtol=1e-10)
    assert fnp.kaiser(1, 3.0).tolist() == [1.0] and fnp.kaiser(0, 3.0).shape == (0,)
