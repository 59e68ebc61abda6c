"""funcad.experimental.sparse (BCOO, sparsify, sparse grads) against jax.experimental.sparse.

Each operation runs on the same stored entries in funcad and in JAX (several n_batch /
n_dense layouts, duplicate indices, padding entries); results are compared densely, and
buffer by buffer where the layout is JAX's. Derivatives with respect to `data` and dense
operands are compared with JAX's; jit and vmap with eager.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import sparse as jsparse

import funcad
import funcad.lax as flax
import funcad.numpy as fnp
from funcad.core.errors import ConcretizationError
from funcad.experimental import sparse

jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(0)


def _sparse_array(shape, density=0.5):
    x = rng.uniform(-2, 2, shape)
    return np.where(rng.random(shape) < density, x, 0.0)


def _pair(x, **kw):
    return sparse.BCOO.fromdense(x, **kw), jsparse.BCOO.fromdense(jnp.asarray(x), **kw)


def _dense(m):
    return np.asarray(m.todense() if hasattr(m, "todense") else m)


def _same(a, b, layout=True, rtol=1e-12):
    np.testing.assert_allclose(_dense(a), _dense(b), rtol=rtol, atol=1e-12)
    if layout and hasattr(b, "indices"):
        assert (a.n_batch, a.n_dense, a.nse) == (b.n_batch, b.n_dense, b.nse)
        np.testing.assert_allclose(np.asarray(a.data), np.asarray(b.data), rtol=rtol, atol=1e-12)
        np.testing.assert_array_equal(np.asarray(a.indices), np.asarray(b.indices))


LAYOUTS = [(0, 0), (1, 0), (0, 1), (1, 1)]


# ------------------------------------------------------------ conversions ----

@pytest.mark.parametrize("n_batch,n_dense", LAYOUTS + [(2, 0), (0, 3)])
def test_fromdense_todense_layouts(n_batch, n_dense):
    x = _sparse_array((3, 4, 2))
    a, b = _pair(x, n_batch=n_batch, n_dense=n_dense)
    _same(a, b)
    np.testing.assert_array_equal(_dense(a), x)
    assert a.indices.dtype == np.int32 and repr(a) == repr(b).replace("float64", "float64")


def test_fromdense_padding_and_index_dtype():
    x = _sparse_array((4, 3))
    a, b = _pair(x, nse=10, index_dtype=np.int64)
    _same(a, b)
    assert a.indices.dtype == np.int64
    a, b = _pair(x, nse=2, n_batch=1)   # fewer slots than nonzeros: entries are dropped
    _same(a, b)


def test_todense_duplicates_and_padding():
    data = np.array([1., 2., 3., 4.])
    idx = np.array([[0, 1], [0, 1], [2, 0], [3, 2]])   # a duplicate and an out-of-bounds row
    a = sparse.BCOO((data, idx), shape=(3, 2))
    b = jsparse.BCOO((jnp.asarray(data), jnp.asarray(idx)), shape=(3, 2))
    _same(a, b)
    _same(sparse.bcoo_sum_duplicates(a), jsparse.bcoo_sum_duplicates(b))
    _same(sparse.bcoo_sum_duplicates(a, nse=5), jsparse.bcoo_sum_duplicates(b, nse=5))
    _same(sparse.bcoo_sort_indices(a), jsparse.bcoo_sort_indices(b))
    _same(a.sum_duplicates(), b.sum_duplicates())


@pytest.mark.parametrize("n_batch,n_dense", LAYOUTS)
def test_sum_duplicates_batched(n_batch, n_dense):
    x = _sparse_array((2, 3, 2))
    a, b = _pair(x, n_batch=n_batch, n_dense=n_dense)
    a2 = sparse.bcoo_concatenate([a, a], dimension=n_batch) if n_dense < 2 else a
    b2 = jsparse.bcoo_concatenate([b, b], dimension=n_batch) if n_dense < 2 else b
    # doubling along a sparse axis, then folding back with reshape gives duplicates
    _same(a2, b2, layout=False)
    _same(sparse.bcoo_sum_duplicates(a), jsparse.bcoo_sum_duplicates(b))


def test_extract_and_dot_general_sampled():
    x = _sparse_array((3, 4))
    a, b = _pair(x)
    y = rng.normal(size=(3, 4))
    _same(sparse.bcoo_extract(a, y), jsparse.bcoo_extract(b, jnp.asarray(y)))
    dup = sparse.BCOO((np.ones(3), np.array([[0, 0], [0, 0], [1, 1]])), shape=(2, 2))
    jdup = jsparse.BCOO((jnp.ones(3), jnp.array([[0, 0], [0, 0], [1, 1]])), shape=(2, 2))
    z = np.arange(4.).reshape(2, 2) + 1
    _same(sparse.bcoo_extract(dup, z), jsparse.bcoo_extract(jdup, jnp.asarray(z)))
    A, B = rng.normal(size=(3, 5)), rng.normal(size=(5, 4))
    dn = (([1], [0]), ([], []))
    np.testing.assert_allclose(
        sparse.bcoo_dot_general_sampled(A, B, a.indices, dimension_numbers=dn),
        jsparse.bcoo_dot_general_sampled(jnp.asarray(A), jnp.asarray(B), b.indices,
                                         dimension_numbers=dn), rtol=1e-12)


@pytest.mark.parametrize("src,dst", [((0, 0), (1, 0)), ((1, 0), (0, 0)), ((0, 0), (0, 1)),
                                     ((0, 1), (0, 0)), ((2, 0), (0, 1))])
def test_update_layout(src, dst):
    x = _sparse_array((2, 3, 2))
    a, b = _pair(x, n_batch=src[0], n_dense=src[1])
    kw = dict(n_batch=dst[0], n_dense=dst[1], on_inefficient=None)
    _same(sparse.bcoo_update_layout(a, **kw), jsparse.bcoo_update_layout(b, **kw))


def test_empty_eye():
    for kw in [{}, {"n_batch": 1}, {"n_dense": 1}]:
        _same(sparse.empty((3, 4), **kw), jsparse.empty((3, 4), dtype=jnp.float64, **kw))
        for k in (-1, 0, 2, 5):
            _same(sparse.eye(3, 4, k, **kw), jsparse.eye(3, 4, k, dtype=jnp.float64, **kw))


# ------------------------------------------------------------- products ----

DOTS = [  # (sparse shape, layout, dense shape, dimension numbers)
    ((3, 4), (0, 0), (4, 2), (([1], [0]), ([], []))),
    ((3, 4), (1, 0), (4,), (([1], [0]), ([], []))),
    ((3, 4), (0, 1), (2, 4), (([1], [1]), ([], []))),
    ((2, 3, 4), (1, 0), (2, 4, 5), (([2], [1]), ([0], [0]))),
    ((2, 3, 4), (1, 1), (2, 4), (([2], [1]), ([0], [0]))),
    ((3, 4), (0, 0), (3, 4), (([0, 1], [0, 1]), ([], []))),
]


@pytest.mark.parametrize("case", range(len(DOTS)))
def test_dot_general_sparse_dense(case):
    """Against dense lax.dot_general (funcad also contracts dense dimensions, which JAX's
    BCOO does not) and against JAX's BCOO where it supports the case."""
    shape, (nb, nd), rshape, dn = DOTS[case]
    x = _sparse_array(shape)
    a, b = _pair(x, n_batch=nb, n_dense=nd)
    y = rng.normal(size=rshape)
    (lc, rc), (lb, rb) = dn
    swapped = ((rc, lc), (rb, lb))
    for lhs, rhs, jl, jr, d in [(a, y, b, jnp.asarray(y), dn), (y, a, jnp.asarray(y), b, swapped)]:
        ours = sparse.bcoo_dot_general(lhs, rhs, dimension_numbers=d)
        ref = jax.lax.dot_general(jnp.asarray(_dense(jl)), jnp.asarray(_dense(jr)), d)
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)
        try:
            theirs = jsparse.bcoo_dot_general(jl, jr, dimension_numbers=d)
        except NotImplementedError:
            continue
        _same(ours, theirs)


def test_dot_general_sparse_sparse():
    x, y = _sparse_array((2, 3, 4)), _sparse_array((2, 4, 3))
    a = sparse.BCOO.fromdense(x, n_batch=1)
    c = sparse.BCOO.fromdense(y, n_batch=1)
    out = sparse.bcoo_dot_general(a, c, dimension_numbers=(([2], [1]), ([0], [0])))
    assert isinstance(out, sparse.BCOO) and out.n_batch == 1
    np.testing.assert_allclose(_dense(out), np.einsum("bij,bjk->bik", x, y), rtol=1e-12, atol=1e-12)
    a0, c0 = sparse.BCOO.fromdense(x[0]), sparse.BCOO.fromdense(y[0])
    np.testing.assert_allclose(_dense(a0 @ c0), x[0] @ y[0], rtol=1e-12, atol=1e-12)
    with pytest.raises(NotImplementedError, match="dense dimensions"):
        sparse.bcoo_dot_general(sparse.BCOO.fromdense(x, n_dense=1), c0,
                                dimension_numbers=(([2], [0]), ([], [])))


@pytest.mark.parametrize("lay", [(0, 0), (1, 1)])
def test_dot_general_sparse_sparse_vs_jax(lay):
    x, y = _sparse_array((2, 3, 4)), _sparse_array((2, 4, 3))
    a, b = _pair(x, n_batch=lay[0])
    c, d = _pair(y, n_batch=lay[1])
    dn = (([2], [1]), ([0], [0])) if lay == (1, 1) else (([2], [1]), ([], []))
    _same(sparse.bcoo_dot_general(a, c, dimension_numbers=dn),
          jsparse.bcoo_dot_general(b, d, dimension_numbers=dn))


def test_multiply():
    x, y = _sparse_array((3, 4)), _sparse_array((3, 4))
    a, b = _pair(x, n_batch=1)
    c, d = _pair(y, n_batch=1)
    _same(sparse.bcoo_multiply_sparse(a, c), jsparse.bcoo_multiply_sparse(b, d))
    v = rng.normal(size=(4,))
    np.testing.assert_allclose(sparse.bcoo_multiply_dense(a, v),
                               jsparse.bcoo_multiply_dense(b, jnp.asarray(v)), rtol=1e-12)


# ------------------------------------------------------------ structural ----

@pytest.mark.parametrize("n_batch,n_dense", LAYOUTS)
def test_structural(n_batch, n_dense):
    """Against the same operation on the dense array (NumPy)."""
    x = _sparse_array((2, 3, 4))
    a = sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    eq = lambda m, ref: np.testing.assert_array_equal(_dense(m), ref)
    perm = {(0, 0): (2, 0, 1), (1, 0): (0, 2, 1), (0, 1): (1, 0, 2), (1, 1): (0, 1, 2)}[(n_batch, n_dense)]
    eq(sparse.bcoo_transpose(a, permutation=perm), x.transpose(perm))
    for axes in [(0,), (1,), (2,), (0, 2)]:
        np.testing.assert_allclose(_dense(sparse.bcoo_reduce_sum(a, axes=axes)), x.sum(axes), rtol=1e-12)
    eq(sparse.bcoo_rev(a, (0, 1, 2)), x[::-1, ::-1, ::-1])
    eq(sparse.bcoo_slice(a, start_indices=(0, 1, 1), limit_indices=(2, 3, 4), strides=(1, 1, 2)),
       x[0:2, 1:3, 1:4:2])
    eq(sparse.bcoo_dynamic_slice(a, [np.int32(1), np.int32(2), np.int32(-1)], (1, 2, 2)), x[1:2, 1:3, 2:4])
    b = sparse.bcoo_broadcast_in_dim(a, shape=(5, 2, 3, 4), broadcast_dimensions=(1, 2, 3))
    eq(b, np.broadcast_to(x, (5, 2, 3, 4)))
    assert b.n_batch == n_batch + 1
    if n_dense == 0:
        eq(sparse.bcoo_concatenate([a, a], dimension=1), np.concatenate([x, x], 1))
    new = (2, 12) if n_dense == 0 else (2, 3, 4)
    eq(sparse.bcoo_reshape(a, new_sizes=new), x.reshape(new))
    s1 = sparse.BCOO.fromdense(x[:, :1], n_batch=n_batch, n_dense=n_dense)
    eq(sparse.bcoo_squeeze(s1, dimensions=(1,)), x[:, 0])


def test_structural_layouts_vs_jax():
    x = _sparse_array((2, 3, 4))
    a, b = _pair(x, n_batch=1)
    _same(sparse.bcoo_transpose(a, permutation=(0, 2, 1)), jsparse.bcoo_transpose(b, permutation=(0, 2, 1)))
    _same(sparse.bcoo_reduce_sum(a, axes=(0, 2)), jsparse.bcoo_reduce_sum(b, axes=(0, 2)))
    kw = dict(shape=(5, 2, 3, 4), broadcast_dimensions=(1, 2, 3))
    _same(sparse.bcoo_broadcast_in_dim(a, **kw), jsparse.bcoo_broadcast_in_dim(b, **kw))
    _same(sparse.bcoo_squeeze(a[:, :1], dimensions=(1,)), jsparse.bcoo_squeeze(b[:, :1], dimensions=(1,)),
          layout=False)


def test_gather_and_indexing():
    x = _sparse_array((4, 3))
    a = sparse.BCOO.fromdense(x)
    dn = flax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    idx = np.array([[2], [0], [3]])
    np.testing.assert_array_equal(_dense(sparse.bcoo_gather(a, idx, dn, (1, 3))), x[idx[:, 0]])
    for key in [1, (slice(1, 3), 2), (Ellipsis, slice(None, None, -1)), (None, 0), -1]:
        np.testing.assert_array_equal(_dense(a[key]), x[key], err_msg=str(key))
    rows = list(a)
    assert len(rows) == 4 and np.array_equal(_dense(rows[2]), x[2])


# ----------------------------------------------------- operators, sparsify ----

def test_operators():
    x, v = _sparse_array((3, 4)), rng.normal(size=4)
    a = sparse.BCOO.fromdense(x)
    for f in [lambda m, v: m @ v, lambda m, v: (m * 2).T, lambda m, v: m * v, lambda m, v: -m,
              lambda m, v: m.sum(0), lambda m, v: m.sum(), lambda m, v: m + m, lambda m, v: m * m,
              lambda m, v: m.reshape(4, 3), lambda m, v: m / 2.0, lambda m, v: abs(m) ** 2,
              lambda m, v: m.astype(np.float32), lambda m, v: v[:3] @ m, lambda m, v: m - m,
              lambda m, v: m + np.ones((3, 4))]:
        np.testing.assert_allclose(_dense(f(a, v)), f(x, v), rtol=1e-12)
    assert isinstance(a * v, sparse.BCOO) and (a * v).nse == a.nse
    assert (a.astype(np.float32)).dtype == np.float32


def test_sparsify_values_jit_and_errors():
    x, v = _sparse_array((3, 4)), rng.normal(size=4)
    a, b = _pair(x, n_batch=1)

    def f(L, N):
        return lambda m, v: L.sum(L.sin(m) * v, axis=1) + (m * 3.0).sum(1)

    _same(sparse.sparsify(f(fnp, None))(a, v), jsparse.sparsify(f(jnp, None))(b, jnp.asarray(v)))
    _same(funcad.jit(sparse.sparsify(f(fnp, None)))(a, v), f(np, None)(x, v), layout=False)
    cond = sparse.sparsify(lambda p, m: flax.cond(p, lambda m: m * 2.0, lambda m: -m, m))
    assert isinstance(cond(True, a), sparse.BCOO)
    np.testing.assert_allclose(_dense(cond(False, a)), -x)
    loop = sparse.sparsify(lambda m: flax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0),
                                                     (0, m))[1])
    np.testing.assert_allclose(_dense(funcad.jit(loop)(a)), 8 * x)
    with pytest.raises(TypeError):   # one branch sparse, the other dense
        sparse.sparsify(lambda p, m: flax.cond(p, lambda m: m, lambda m: m @ np.eye(4), m))(True, a)
    with pytest.raises(NotImplementedError, match="sparse rule for cos .*dense output"):
        sparse.sparsify(fnp.cos)(a)
    with pytest.raises(NotImplementedError, match="sparse rule for cumsum"):
        sparse.sparsify(lambda m: fnp.cumsum(m, axis=0))(a)


# ------------------------------------------------------ derivatives, jit, vmap ----

@pytest.mark.parametrize("n_batch,n_dense", [(0, 0), (1, 0)])
def test_grads_match_jax(n_batch, n_dense):
    # JAX's BCOO has no derivative in the dense operand when n_dense > 0 (its transpose
    # would contract a dense dimension): there only d/d data is compared.
    argnums = (0, 1) if n_dense == 0 else (0,)
    x = _sparse_array((2, 3, 4))
    a, b = _pair(x, n_batch=n_batch, n_dense=n_dense)
    y = rng.normal(size=(3, 5))
    dn = (([1], [0]), ([], []))   # a sparse dimension: JAX's BCOO contracts no dense one

    def loss(S, dot, tanh):
        return lambda d, y: tanh(dot(S((d, a.indices if S is sparse.BCOO else b.indices),
                                       shape=x.shape), y, dimension_numbers=dn)).sum()

    f = loss(sparse.BCOO, sparse.bcoo_dot_general, fnp.tanh)
    g = loss(jsparse.BCOO, jsparse.bcoo_dot_general, jnp.tanh)
    ga = funcad.grad(f, argnums=argnums)(a.data, y)
    gb = jax.grad(g, argnums=argnums)(b.data, jnp.asarray(y))
    for p, q in zip(ga, gb):
        np.testing.assert_allclose(np.asarray(p), np.asarray(q), rtol=1e-10)
    t = rng.normal(size=a.data.shape)
    _, ja = funcad.jvp(lambda d: f(d, y), (a.data,), (t,))
    _, jb = jax.jvp(lambda d: g(d, jnp.asarray(y)), (b.data,), (jnp.asarray(t),))
    np.testing.assert_allclose(float(ja), float(jb), rtol=1e-10)
    np.testing.assert_allclose(funcad.jit(funcad.grad(f))(a.data, y), gb[0], rtol=1e-10)


def test_fromdense_todense_grads():
    x = _sparse_array((3, 4))
    w = rng.normal(size=(3, 4))
    f = lambda m: (sparse.bcoo_fromdense(m, nse=8).data ** 2).sum() + (sparse.bcoo_todense(
        sparse.BCOO.fromdense(m, nse=8)) * w).sum()
    g = lambda m: (jsparse.bcoo_fromdense(m, nse=8).data ** 2).sum() + (jsparse.bcoo_todense(
        jsparse.BCOO.fromdense(m, nse=8)) * w).sum()
    np.testing.assert_allclose(funcad.grad(f)(x), jax.grad(g)(jnp.asarray(x)), rtol=1e-12)


def test_pytree_jit_vmap():
    x = _sparse_array((3, 4, 2))
    a, _ = _pair(x, n_batch=1)
    out = funcad.jit(lambda m, v: sparse.bcoo_dot_general(m, v, dimension_numbers=(([2], [0]), ([0], [1]))))(
        a, np.ones((2, 3)))
    np.testing.assert_allclose(out, np.einsum("bij,jb->bi", x, np.ones((2, 3))), rtol=1e-12)
    per = funcad.vmap(lambda m: (m @ np.ones(2)))(a)    # vmap over the batch dimension
    np.testing.assert_allclose(per, x.sum(-1), rtol=1e-12)
    back = funcad.vmap(lambda m: m.T, in_axes=0, out_axes=0)(a)
    assert back.shape == (3, 2, 4) and back.n_batch == 1
    np.testing.assert_array_equal(back.todense(), x.transpose(0, 2, 1))
    leaves = funcad.tree_util.tree_leaves(a)
    assert len(leaves) == 2 and a.block_until_ready() is a


def test_sparse_grad_api():
    x, y = _sparse_array((3, 4)), rng.normal(size=4)
    a, b = _pair(x)
    f = lambda L: (lambda M, y: L.sum((M @ y) ** 2))
    ga = sparse.grad(f(fnp))(a, y)
    gb = jsparse.grad(f(jnp))(b, jnp.asarray(y))
    assert isinstance(ga, sparse.BCOO)
    _same(ga, gb)
    (va, (ga0, ga1)) = sparse.value_and_grad(f(fnp), argnums=(0, 1))(a, y)
    (vb, (gb0, gb1)) = jsparse.value_and_grad(f(jnp), argnums=(0, 1))(b, jnp.asarray(y))
    np.testing.assert_allclose(float(va), float(vb), rtol=1e-12)
    _same(ga0, gb0)
    np.testing.assert_allclose(ga1, gb1, rtol=1e-12)
    h = lambda M: M @ y
    for ours, theirs in [(sparse.jacfwd, jsparse.jacfwd), (sparse.jacrev, jsparse.jacrev)]:
        _same(ours(h)(a), theirs(lambda M: M @ jnp.asarray(y))(b))


# -------------------------------------------------------------- errors ----

def test_errors():
    x = _sparse_array((3, 4))
    a, _ = _pair(x)
    with pytest.raises(sparse.SparseEfficiencyError, match="n_batch"):
        sparse.bcoo_update_layout(a, n_batch=1)
    with pytest.warns(sparse.SparseEfficiencyWarning):
        sparse.bcoo_update_layout(a, n_dense=1, on_inefficient="warn")
    with pytest.raises(ConcretizationError, match="nse="):
        funcad.jit(lambda m: sparse.BCOO.fromdense(m).data)(x)
    with pytest.raises(ValueError, match="data.shape"):
        sparse.BCOO((np.ones(3), np.zeros((2, 2), np.int32)), shape=(3, 4))
    with pytest.raises(TypeError, match="integers"):
        sparse.BCOO((np.ones(2), np.zeros((2, 2))), shape=(3, 4))
    with pytest.raises(ValueError, match="shape mismatch"):
        sparse.bcoo_extract(a, np.ones((4, 3)))
    with pytest.raises(ValueError, match="mix batch, sparse and dense"):
        sparse.bcoo_transpose(sparse.BCOO.fromdense(x, n_batch=1), permutation=(1, 0))
    with pytest.raises(ValueError, match="sparse_format"):
        sparse.empty((2, 2), sparse_format="coo_matrix")


def test_random_bcoo():
    key = funcad.random.key(1)
    m = sparse.random_bcoo(key, (3, 5, 2), nse=0.4, n_batch=1, n_dense=1)
    assert (m.shape, m.n_batch, m.n_dense, m.nse) == ((3, 5, 2), 1, 1, 2)
    idx = np.asarray(m.indices)
    assert all(len(set(idx[b, :, 0])) == 2 for b in range(3)) and idx.max() < 5
    s = sparse.random_bcoo(key, (6, 6), nse=5, sorted_indices=True)
    assert s.indices_sorted and np.all(np.diff(np.asarray(s.indices)[:, 0]) >= 0)


def test_sparsify_evaluates_a_closed_call_through_its_body():
    from funcad.core.avals import aval_of
    from funcad.core.staging import trace_to_jaxpr
    from funcad.transforms.closed_call import closed_call_p

    def f(m):
        closed = trace_to_jaxpr(lambda a: [a * 2.0], [aval_of(m)], name="cc")
        return closed_call_p.bind(m, call_jaxpr=closed)[0]
    dense = np.array([[0.0, 2.0], [3.0, 0.0]])
    out = sparse.sparsify(f)(sparse.BCOO.fromdense(dense))
    want = jsparse.sparsify(lambda m: m * 2.0)(jsparse.BCOO.fromdense(jnp.asarray(dense)))
    assert isinstance(out, sparse.BCOO)
    np.testing.assert_allclose(out.todense(), want.todense())
