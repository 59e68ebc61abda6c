"""funcad.experimental.sparse.BCSR against jax.experimental.sparse.BCSR and dense NumPy:
layouts (buffers equal to JAX's), conversions to and from BCOO, products, grads, jit."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import sparse as jsparse

import funcad
from funcad.experimental import sparse

jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(1)


def _x(shape):
    return np.where(rng.random(shape) < 0.5, rng.uniform(-2, 2, shape), 0.0)


@pytest.mark.parametrize("n_batch,n_dense", [(0, 0), (1, 0), (0, 1)])
def test_fromdense_layout_matches_jax(n_batch, n_dense):
    x = _x((2, 3, 4)) if n_batch + n_dense else _x((3, 4))
    a = sparse.BCSR.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    b = jsparse.BCSR.fromdense(jnp.asarray(x), n_batch=n_batch, n_dense=n_dense)
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name)))
    np.testing.assert_array_equal(np.asarray(a.todense()), x)
    np.testing.assert_array_equal(np.asarray(a.to_bcoo().indices), np.asarray(b.to_bcoo().indices))
    assert repr(a) == repr(b)


def test_ops_against_dense():
    x = _x((3, 4))
    m = sparse.BCSR.fromdense(x, nse=8)       # padded entries
    y = rng.normal(size=(4, 2))
    dn = (([1], [0]), ([], []))
    np.testing.assert_allclose(sparse.bcsr_dot_general(m, y, dimension_numbers=dn), x @ y, rtol=1e-12)
    np.testing.assert_allclose(m @ y[:, 0], x @ y[:, 0], rtol=1e-12)
    np.testing.assert_allclose(y.T @ m.todense().T, (m @ y).T, rtol=1e-12)
    np.testing.assert_array_equal(
        sparse.bcsr_extract(m.indices, m.indptr, x + 1.0)[:int(m.indptr[-1])], x[x != 0] + 1.0)
    np.testing.assert_array_equal(sparse.bcsr_concatenate([m, m], dimension=0).todense(), np.vstack([x, x]))
    b = sparse.bcsr_broadcast_in_dim(m, shape=(2, 3, 4), broadcast_dimensions=(1, 2))
    assert b.n_batch == 1
    np.testing.assert_array_equal(b.todense(), np.broadcast_to(x, (2, 3, 4)))
    dup = sparse.BCSR((np.array([1., 2., 3.]), np.array([0, 0, 2]), np.array([0, 2, 3])), shape=(2, 3))
    s = sparse.bcsr_sum_duplicates(dup)
    assert s.nse == 2 and np.array_equal(s.todense(), [[3., 0, 0], [0, 0, 3]])
    assert sparse.BCSR.from_bcoo(sparse.BCOO.fromdense(x)).indptr.tolist() == \
        sparse.BCSR.fromdense(x).indptr.tolist()
    np.testing.assert_array_equal(sparse.eye(3, 4, 1, sparse_format="bcsr").todense(), np.eye(3, 4, 1))


def test_grad_jit_and_errors():
    x = _x((3, 4))
    m = sparse.BCSR.fromdense(x)
    v = rng.normal(size=4)
    f = lambda d: ((sparse.BCSR((d, m.indices, m.indptr), shape=m.shape) @ v) ** 2).sum()
    jm = jsparse.BCSR.fromdense(jnp.asarray(x))
    g = lambda d: ((jsparse.BCSR((d, jm.indices, jm.indptr), shape=jm.shape) @ jnp.asarray(v)) ** 2).sum()
    np.testing.assert_allclose(funcad.grad(f)(m.data), jax.grad(g)(jm.data), rtol=1e-12)
    np.testing.assert_allclose(funcad.jit(lambda m: m @ v)(m), x @ v, rtol=1e-12)
    with pytest.raises(ValueError, match="2 sparse dimensions"):
        sparse.bcsr_fromdense(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="indptr shape"):
        sparse.BCSR((np.ones(2), np.zeros(2, np.int32), np.zeros(2, np.int32)), shape=(3, 3))
    with pytest.raises(NotImplementedError, match="sparse rule for sin with a BCSR operand"):
        sparse.sparsify(funcad.numpy.sin)(m)


@pytest.mark.parametrize("fmt", ["COO", "CSR", "CSC"])
def test_coo_csr_csc(fmt):
    x = _x((4, 5))
    nnz = int((x != 0).sum())
    a = getattr(sparse, fmt).fromdense(x, nse=nnz + 2)            # two padding entries
    b = getattr(jsparse, fmt).fromdense(jnp.asarray(x), nse=nnz + 2)
    for name in ("data", "row", "col", "indices", "indptr"):
        if hasattr(b, name):
            np.testing.assert_array_equal(np.asarray(getattr(a, name)), np.asarray(getattr(b, name)))
    np.testing.assert_array_equal(np.asarray(a.todense()), x)
    v, B = rng.normal(size=5), rng.normal(size=(5, 2))
    np.testing.assert_allclose(a @ v, x @ v, rtol=1e-12)
    np.testing.assert_allclose(a @ B, x @ B, rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(a.T.todense()), x.T)
    np.testing.assert_array_equal(np.asarray(sparse.eye(3, 4, -1, sparse_format=fmt.lower()).todense()),
                                  np.eye(3, 4, -1))


def test_coo_csr_functions_grads_errors():
    x = _x((4, 5))
    u, v = rng.normal(size=4), rng.normal(size=5)
    c, r = sparse.coo_fromdense(x), sparse.csr_fromdense(x)
    np.testing.assert_allclose(sparse.coo_matvec(c, u, transpose=True), x.T @ u, rtol=1e-12)
    np.testing.assert_allclose(sparse.csr_matvec(r, v), x @ v, rtol=1e-12)
    np.testing.assert_allclose(sparse.coo_matmat(c, np.ones((5, 2))), x @ np.ones((5, 2)), rtol=1e-12)
    np.testing.assert_allclose(sparse.csr_matmat(r, np.ones((4, 2)), transpose=True), x.T @ np.ones((4, 2)),
                               rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(sparse.coo_todense(c)), x)
    np.testing.assert_array_equal(np.asarray(sparse.csr_todense(r)), x)
    f = lambda d: (sparse.CSR((d, r.indices, r.indptr), shape=r.shape) @ v).sum()
    np.testing.assert_allclose(funcad.grad(f)(r.data), v[np.nonzero(x)[1]], rtol=1e-12)
    np.testing.assert_allclose(funcad.jit(lambda m: m @ v)(c), x @ v, rtol=1e-12)
    with pytest.raises(ValueError, match="2-d"):
        sparse.coo_fromdense(np.ones(3))
    with pytest.raises(NotImplementedError, match="two sparse"):
        c @ c
