"""Op-table rows of the eigen, singular value and QR decompositions and what is
built on them (funcad.numpy.linalg, funcad.lax.linalg).

Inputs are well conditioned with well separated eigen/singular values (gaps
>= 0.5), so derivatives are smooth and finite differences meaningful. Outputs
that carry a gauge (the sign of an eigenvector, of a pair of singular
vectors) are given as gauge-invariant functions, as JAX's tests do:
`v * v[..., :1, :]` (each column times its first entry) and `u @ vh`.
"""
import numpy as np

import funcad.lax.linalg as lla
import funcad.numpy as fnp
from tests.op_table import op


def _jnp():
    import jax.numpy as jnp
    return jnp


def _orth(rng, n):
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def SPECTRAL(m, n, lo=0.6, gap=0.6):
    """An m x n matrix u diag(s) vh with random orthogonal u, v and singular values
    lo, lo + gap, ... in random order of size."""
    def gen(rng, dtype):
        k = min(m, n)
        s = lo + gap * rng.permutation(k) + rng.uniform(0, 0.1, k)
        x = _orth(rng, m)[:, :k] @ np.diag(s) @ _orth(rng, n)[:k, :]
        return (x.astype(dtype),)
    return gen


def SYMMETRIC(n, gap=0.6):
    """A symmetric n x n matrix with eigenvalues gap apart (both signs)."""
    def gen(rng, dtype):
        w = gap * (np.arange(n) - n / 2) + rng.uniform(0, 0.1, n)
        v = _orth(rng, n)
        return ((v * w) @ v.T).astype(dtype),
    return gen


def _gauge_free(v):
    """Each column times its first entry: unchanged by flipping a column's sign."""
    return v * v[..., :1, :]


def _sym(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


# --- eigh ---------------------------------------------------------------------

def _eigh(a):
    w, v = fnp.linalg.eigh(a)
    return w, _gauge_free(v)


def _np_eigh(a):
    w, v = np.linalg.eigh(_sym(a))
    return w, _gauge_free(v)


def _jax_eigh(a):
    w, v = _jnp().linalg.eigh(a)
    return w, _gauge_free(v)


op("linalg_eigh", _eigh, _np_eigh, SYMMETRIC(4), _jax_eigh, rtol=1e-5)
op("linalg_eigvalsh", fnp.linalg.eigvalsh, lambda a: np.linalg.eigvalsh(_sym(a)), SYMMETRIC(3),
   lambda a: _jnp().linalg.eigvalsh(a))
def _jax_upper_eigh(a):
    jnp = _jnp()
    w, v = jnp.linalg.eigh(jnp.triu(a) + jnp.triu(a, 1).T)
    return _gauge_free(v), w


# Only the upper triangle is read, so the derivative is with respect to it alone.
op("linalg_lax_eigh_upper",
   lambda a: (lambda v, w: (_gauge_free(v), w))(*lla.eigh(a, lower=False, symmetrize_input=False)),
   lambda a: (lambda w, v: (_gauge_free(v), w))(*np.linalg.eigh(a, UPLO="U")),
   SYMMETRIC(3),
   _jax_upper_eigh, rtol=1e-5)

# --- svd ----------------------------------------------------------------------


def _svd_row(shape, full):
    def fun(a):
        u, s, vh = fnp.linalg.svd(a, full_matrices=full)
        k = min(shape)
        return s, u[..., :k] @ vh[..., :k, :], _gauge_free(u), _gauge_free(fnp.matrix_transpose(vh))

    def ref(a):
        u, s, vh = np.linalg.svd(a, full_matrices=full)
        k = min(shape)
        return s, u[..., :k] @ vh[..., :k, :], _gauge_free(u), _gauge_free(np.swapaxes(vh, -1, -2))

    def jax_fun(a):
        u, s, vh = _jnp().linalg.svd(a, full_matrices=full)
        k = min(shape)
        return s, u[..., :k] @ vh[..., :k, :], _gauge_free(u), _gauge_free(vh.mT)
    return fun, ref, jax_fun


for _shape, _full, _name in [((4, 3), False, "linalg_svd_tall"), ((3, 4), False, "linalg_svd_wide"),
                             ((3, 3), True, "linalg_svd_square_full")]:
    _f, _r, _j = _svd_row(_shape, _full)
    op(_name, _f, _r, SPECTRAL(*_shape), _j, rtol=1e-5)

op("linalg_svdvals", fnp.linalg.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), SPECTRAL(4, 3),
   lambda a: _jnp().linalg.svdvals(a))
op("linalg_svd_hermitian",
   lambda a: (lambda u, s, vh: (s, u @ vh))(*fnp.linalg.svd(a, hermitian=True)),
   lambda a: (lambda u, s, vh: (s, u @ vh))(*np.linalg.svd(_sym(a), hermitian=True)),
   SYMMETRIC(3), lambda a: (lambda u, s, vh: (s, u @ vh))(*_jnp().linalg.svd(a, hermitian=True)), rtol=1e-5)

# --- qr -----------------------------------------------------------------------

for _shape, _mode in [((4, 3), "reduced"), ((3, 3), "reduced"), ((3, 4), "reduced"), ((4, 3), "complete")]:
    op(f"linalg_qr_{_mode}_{_shape[0]}x{_shape[1]}",
       (lambda mode: lambda a: tuple(fnp.linalg.qr(a, mode)))(_mode),
       (lambda mode: lambda a: tuple(np.linalg.qr(a, mode)))(_mode),
       SPECTRAL(*_shape), (lambda mode: lambda a: tuple(_jnp().linalg.qr(a, mode)))(_mode), rtol=1e-5)
op("linalg_qr_r", lambda a: fnp.linalg.qr(a, "r"), lambda a: np.linalg.qr(a, "r"), SPECTRAL(4, 3),
   lambda a: _jnp().linalg.qr(a, "r"), rtol=1e-5)
op("linalg_qr_raw", lambda a: tuple(fnp.linalg.qr(a, "raw")), lambda a: tuple(np.linalg.qr(a, "raw")),
   SPECTRAL(4, 3), lambda a: tuple(_jnp().linalg.qr(a, "raw")), diff=False, rtol=1e-5)

# --- built on them ------------------------------------------------------------

op("linalg_pinv_tall", fnp.linalg.pinv, np.linalg.pinv, SPECTRAL(4, 3), lambda a: _jnp().linalg.pinv(a),
   rtol=1e-5)
op("linalg_pinv_wide", fnp.linalg.pinv, np.linalg.pinv, SPECTRAL(2, 3), lambda a: _jnp().linalg.pinv(a),
   rtol=1e-5)
op("linalg_lstsq", lambda a, b: fnp.linalg.lstsq(a, b)[:2],
   lambda a, b: tuple(np.linalg.lstsq(a, b)[:2]),
   lambda rng, dtype: SPECTRAL(4, 3)(rng, dtype) + (rng.standard_normal((4, 2)).astype(dtype),),
   lambda a, b: _jnp().linalg.lstsq(a, b)[:2], rtol=1e-5)
op("linalg_matrix_rank", fnp.linalg.matrix_rank, np.linalg.matrix_rank,
   lambda rng, dtype: (np.outer(rng.standard_normal(4), rng.standard_normal(3)).astype(dtype),),
   lambda a: _jnp().linalg.matrix_rank(a), diff=False)
for _ord in ("nuc", 2, -2):
    op(f"linalg_norm_{_ord}", (lambda o: lambda a: fnp.linalg.norm(a, o))(_ord),
       (lambda o: lambda a: np.linalg.norm(a, o))(_ord), SPECTRAL(4, 3),
       (lambda o: lambda a: _jnp().linalg.norm(a, o))(_ord), rtol=1e-5)
op("linalg_matrix_norm_nuc_stack", lambda a: fnp.linalg.matrix_norm(a, ord="nuc"),
   lambda a: np.linalg.matrix_norm(a, ord="nuc"),
   lambda rng, dtype: (np.stack([SPECTRAL(3, 2)(rng, dtype)[0] for _ in range(2)]),),
   lambda a: _jnp().linalg.matrix_norm(a, ord="nuc"), rtol=1e-5)
op("linalg_vector_norm_p3", lambda x: fnp.linalg.vector_norm(x, ord=3, axis=-1),
   lambda x: np.linalg.vector_norm(x, ord=3, axis=-1),
   lambda rng, dtype: ((rng.uniform(0.3, 2, (2, 3)) * rng.choice([-1, 1], (2, 3))).astype(dtype),),
   lambda x: _jnp().linalg.vector_norm(x, ord=3, axis=-1))
op("linalg_cond", fnp.linalg.cond, np.linalg.cond, SPECTRAL(3, 3), lambda a: _jnp().linalg.cond(a),
   rtol=1e-5)
