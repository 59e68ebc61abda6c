"""funcad.ops (jax.ops): segment_sum/prod/max/min against JAX 0.12 for every mode,
bucketing, dtypes and the empty-segment identities; derivatives against JAX and finite
differences; jit, vmap; JAX's errors; and lazy loading of funcad.ops and funcad.image."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
import funcad.ops as fops
from funcad.core.errors import ConcretizationError, FuncadTypeError, FuncadValueError
from funcad.test_util import check_grads

OPS = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
IDS = np.array([0, 2, 2, -1, 0, 5, 1, 2, 7])  # -1, 5 and 7: out of range for 5 segments
NSEG = 5


@pytest.fixture(scope="module")
def jx():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _data(dtype, shape=(9,), seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-4, 5, shape).astype(dtype)
    return rng.uniform(0.5, 1.5, shape).astype(dtype) * rng.choice([-1, 1], shape)


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(got.dtype).eps, atol=0)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("mode", [None, "drop", "fill", "clip"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_values_match_jax(jx, name, mode, dtype):
    data = _data(dtype, (9, 3))
    got = getattr(fops, name)(data, IDS, NSEG, mode=mode)
    _same(got, getattr(jx.ops, name)(data, IDS, NSEG, mode=mode))


@pytest.mark.parametrize("name", OPS)
def test_keyword_variants_match_jax(jx, name):
    f, g = getattr(fops, name), getattr(jx.ops, name)
    ids = np.array([0, 0, 1, 1, 1, 3, 3])
    data = _data(np.float64, (7,), seed=1)
    _same(f(data, ids), g(data, ids))                                  # num_segments = max + 1
    _same(f(data, ids, 6, indices_are_sorted=True), g(data, ids, 6, indices_are_sorted=True))
    _same(f(data, np.arange(7), 7, unique_indices=True), g(data, np.arange(7), 7, unique_indices=True))
    _same(f(data, ids, np.int64(4), mode="promise_in_bounds"), g(data, ids, np.int64(4), mode="promise_in_bounds"))
    _same(f(data, ids, 4, mode=funcad.lax.GatherScatterMode.CLIP), g(data, ids, 4, mode="clip"))
    for bucket in (1, 2, 3, 10):
        _same(f(data, IDS[:7], NSEG, bucket_size=bucket), g(data, IDS[:7], NSEG, bucket_size=bucket))
    d8 = _data(np.int8, (9, 2))
    _same(f(d8, IDS, NSEG, bucket_size=4), g(d8, IDS, NSEG, bucket_size=4))


def test_empty_segments_hold_the_identity():
    ids = np.array([1, 1])
    f = np.array([2.0, 3.0])
    assert fops.segment_sum(f, ids, 3).tolist() == [0.0, 5.0, 0.0]
    assert fops.segment_prod(f, ids, 3).tolist() == [1.0, 6.0, 1.0]
    assert fops.segment_max(f, ids, 3).tolist() == [-np.inf, 3.0, -np.inf]
    assert fops.segment_min(f, ids, 3).tolist() == [np.inf, 2.0, np.inf]
    i = np.array([2, 3], np.int32)
    big, small = np.iinfo(np.int32).max, np.iinfo(np.int32).min
    assert fops.segment_max(i, ids, 3).tolist() == [small, 3, small]
    assert fops.segment_min(i, ids, 3).tolist() == [big, 2, big]
    assert fops.segment_max(i, ids, 3).dtype == np.int32
    b = np.array([[True, False], [False, False]])
    assert fops.segment_max(b, ids, 3).tolist() == [[False, False], [True, False], [False, False]]
    assert fops.segment_min(b, ids, 3).tolist() == [[True, True], [False, False], [True, True]]
    assert fops.segment_sum(np.zeros((0, 2)), np.zeros(0, int), 2).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert fops.segment_sum(np.arange(3.0), np.zeros(3, int), 0).shape == (0,)
    # data broadcast against the ids, as JAX's indexed update
    assert fops.segment_sum(np.float32(3), np.array([0, 0, 2]), 3).tolist() == [6.0, 0.0, 3.0]


@pytest.mark.parametrize("name", OPS)
def test_grad_matches_jax_and_finite_differences(jx, name):
    import jax.numpy as jnp
    data = _data(np.float64, (9, 2), seed=3)  # distinct values: no ties for max/min
    ids = np.array([0, 2, 2, 4, 0, 1, 1, 2, 3])
    w = np.random.default_rng(4).normal(size=(NSEG, 2))

    def loss(lib, mod):
        return lambda d: lib.sum(getattr(mod, name)(d, ids, NSEG) * w)
    got = funcad.grad(loss(fnp, fops))(data)
    if name == "segment_prod":
        # JAX differentiates scatter_mul only with unique indices; funcad's composition
        # handles repeats. The oracle: JAX's gradient of the products written out.
        def jprod(d, ids, n):
            return jnp.stack([jnp.prod(jnp.where((ids == k)[:, None], d, 1.0), axis=0) for k in range(n)])
        want = jx.grad(lambda d: jnp.sum(jprod(d, ids, NSEG) * w))(data)
        perm = np.array([3, 0, 4, 1, 2])
        uniq = jx.grad(lambda d: jnp.sum(jx.ops.segment_prod(d, perm, NSEG, unique_indices=True) * w))(data[:5])
        np.testing.assert_allclose(funcad.grad(lambda d: fnp.sum(fops.segment_prod(d, perm, NSEG) * w))(data[:5]),
                                   uniq, rtol=1e-14)
    else:
        want = jx.grad(loss(jnp, jx.ops))(data)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    check_grads(lambda d: getattr(fops, name)(d, ids, NSEG), (data,), order=2)
    # bucketed reductions differentiate through the cross-bucket reduction too
    check_grads(lambda d: getattr(fops, name)(d, ids, NSEG, bucket_size=4), (data,), order=1)


@pytest.mark.parametrize("name", ["segment_max", "segment_min"])
def test_tied_extremes_share_the_gradient_as_in_jax(jx, name):
    import jax.numpy as jnp
    cases = [(np.array([1.0, 1.0, 1.0, 2.0, 3.0]), np.array([0, 0, 0, 1, 7]), {}),
             (np.array([1.0, 1.0, 2.0, -np.inf, np.inf, 2.0]), np.array([0, 0, 1, 2, 2, -1]), {"mode": "clip"}),
             (np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]), np.array([0, 0, 0, 1, 1, 1, 1]), {"bucket_size": 2})]
    for data, ids, kw in cases:
        got = funcad.grad(lambda d: fnp.sum(getattr(fops, name)(d, ids, 3, **kw) * np.array([1.0, 2.0, 3.0])))(data)
        want = jx.grad(lambda d: jnp.sum(getattr(jx.ops, name)(d, ids, 3, **kw) * jnp.array([1.0, 2.0, 3.0])))(data)
        np.testing.assert_allclose(got, want, rtol=1e-15)
    data, ids = cases[0][:2]
    g = funcad.grad(lambda d: fnp.sum(getattr(fops, name)(d, ids, 3)))
    np.testing.assert_allclose(funcad.jit(g)(data), g(data), rtol=1e-15)
    np.testing.assert_allclose(funcad.vmap(g)(np.stack([data, data[::-1]])), np.stack([g(data), g(data[::-1])]))


@pytest.mark.parametrize("name", OPS)
def test_jit_matches_eager(name):
    f = getattr(fops, name)
    data = _data(np.float32, (9, 3), seed=5)
    jitted = funcad.jit(lambda d, s: f(d, s, NSEG))
    _same(jitted(data, IDS), f(data, IDS, NSEG))
    jb = funcad.jit(lambda d, s: f(d, s, NSEG, bucket_size=4, mode="clip"))
    _same(jb(data, IDS), f(data, IDS, NSEG, bucket_size=4, mode="clip"))


@pytest.mark.parametrize("name", OPS)
def test_vmap_matches_loop(name):
    f = getattr(fops, name)
    data = _data(np.float64, (4, 9, 2), seed=6)
    ids = np.random.default_rng(7).integers(-1, 6, (4, 9))
    got = funcad.vmap(lambda d, s: f(d, s, NSEG))(data, ids)
    want = np.stack([f(data[b], ids[b], NSEG) for b in range(4)])
    _same(got, want)
    shared = funcad.vmap(lambda d: f(d, IDS, NSEG), in_axes=1, out_axes=1)(data.transpose(1, 0, 2))
    _same(shared, np.stack([f(data[b], IDS, NSEG) for b in range(4)], axis=1))


def test_num_segments_under_jit_is_a_concretization_error():
    f = funcad.jit(lambda d, s: fops.segment_sum(d, s))
    with pytest.raises(ConcretizationError, match=r"segment_sum\(\) `num_segments` argument") as e:
        f(np.arange(5.0), np.array([0, 0, 1, 1, 2]))
    assert isinstance(e.value, funcad.errors.ConcretizationTypeError)
    g = funcad.jit(lambda d, s, n: fops.segment_max(d, s, n))
    with pytest.raises(ConcretizationError, match=r"segment_max\(\) `num_segments` argument"):
        g(np.arange(5.0), np.array([0, 0, 1, 1, 2]), 3)
    # static num_segments works
    h = funcad.jit(lambda d, s, n: fops.segment_max(d, s, n), static_argnums=2)
    assert h(np.arange(5.0), np.array([0, 0, 1, 1, 2]), 3).tolist() == [1.0, 3.0, 4.0]


def test_errors():
    with pytest.raises(FuncadValueError, match="num_segments must be non-negative"):
        fops.segment_sum(np.arange(3.0), np.zeros(3, int), -1)
    with pytest.raises(FuncadTypeError, match="segment_ids must have an integer dtype"):
        fops.segment_sum(np.arange(3.0), np.zeros(3), 2)
    with pytest.raises(FuncadTypeError, match=r"segment_prod requires ndarray or scalar arguments, got "
                                              r"<class 'list'> at position 1"):
        fops.segment_prod(np.arange(3.0), [0, 0, 1])
    with pytest.raises(FuncadTypeError, match="does not accept dtype bool"):
        fops.segment_sum(np.ones(3, bool), np.zeros(3, int), 2)
    with pytest.raises(FuncadTypeError, match="num_segments must be an integer"):
        fops.segment_sum(np.arange(3.0), np.zeros(3, int), 2.0)
    with pytest.raises(FuncadValueError, match="bucket_size must be a positive"):
        fops.segment_sum(np.arange(3.0), np.zeros(3, int), 2, bucket_size=0)
    with pytest.raises(ValueError, match="Unknown gather mode"):
        fops.segment_sum(np.arange(3.0), np.zeros(3, int), 2, mode="nearest")


def test_namespaces_load_lazily():
    root = Path(__file__).resolve().parents[2]
    code = ("import json, sys, funcad; before = [m for m in ('funcad.ops', 'funcad.image') if m in sys.modules]; "
            "listed = all(n in dir(funcad) for n in ('ops', 'image')); "
            "ok = [n for n in funcad.ops.__all__ + funcad.image.__all__ "
            "if not hasattr(funcad.ops, n) and not hasattr(funcad.image, n)]; "
            "from funcad.image import resize; import funcad.ops as o; "
            "print(json.dumps([before, listed, ok, o is funcad.ops]))")
    res = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)})
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.splitlines()[-1]) == [[], True, [], True]
