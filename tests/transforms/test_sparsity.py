"""Sparse Jacobians and Hessians: detection, colouring, compressed evaluation.

Every pattern is checked against a dense Jacobian at random inputs: no nonzero
may be missing from it (`check_pattern`'s first count), and where the rule is
exact no pattern entry may be numerically zero either. The problem catalog lives
in bench/bench_sparse.py and is loaded from there.
"""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp

import funcad
import funcad.numpy as fnp
from funcad import lax
from funcad.core.trace import abstract_eval_rules
from funcad.transforms.sparsity import SparseMatrix, check_pattern
from funcad.transforms.sparsity import _interp, api as sparse_api
from funcad.transforms.sparsity.colouring import (column_colouring, row_colouring, seed_matrix,
                                                  star_colouring, star_sources)

_spec = importlib.util.spec_from_file_location(
    "bench_sparse", pathlib.Path(__file__).resolve().parents[2] / "bench" / "bench_sparse.py")
catalog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalog)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _dense(s):
    return s.toarray() if sp.issparse(s) else np.asarray(s.todense())


def _ncolours(c):
    return int(c.max()) + 1


# ----------------------------------------------------------------- catalog ----


@pytest.mark.parametrize("name", sorted(catalog.JACOBIANS))
def test_catalog_jacobians(name):
    f, n = catalog.JACOBIANS[name]
    x = _rng(1).uniform(0.1, 0.9, n)
    dense = funcad.jacfwd(f)(x)
    pattern = funcad.jacobian_sparsity(f)(x)
    assert pattern.shape == (n, n) and pattern.dtype == bool
    assert check_pattern(pattern, dense) == (0, 0)
    for jac in (funcad.sparse_jacfwd, funcad.sparse_jacrev, funcad.sparse_jacobian):
        J = jac(f)(x)
        assert isinstance(J, sp.csr_array) and J.nnz == pattern.nnz
        np.testing.assert_allclose(J.toarray(), dense, rtol=1e-12, atol=1e-12)
    Jj = funcad.jit(funcad.sparse_jacrev(f))(x)
    assert isinstance(Jj, SparseMatrix)
    np.testing.assert_allclose(np.asarray(Jj.todense()), dense, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(catalog.HESSIANS))
def test_catalog_hessians(name):
    f, n = catalog.HESSIANS[name]
    x = _rng(2).uniform(0.1, 0.9, n)
    dense = funcad.hessian(f)(x)
    pattern = funcad.hessian_sparsity(f)(x)
    assert (pattern != pattern.T).nnz == 0
    assert check_pattern(pattern, dense) == (0, 0)
    H = funcad.sparse_hessian(f)(x)
    np.testing.assert_allclose(H.toarray(), dense, rtol=1e-12, atol=1e-10)
    Hj = funcad.jit(funcad.sparse_hessian(f))(x)
    np.testing.assert_allclose(np.asarray(Hj.todense()), dense, rtol=1e-12, atol=1e-10)


def test_rosenbrock_against_jax_and_three_colours():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    x = _rng(3).uniform(-1, 1, 50)
    ref = np.asarray(jax.hessian(lambda x: jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2
                                                   + (1.0 - x[:-1]) ** 2))(jnp.asarray(x)))
    np.testing.assert_allclose(funcad.sparse_hessian(catalog.rosenbrock)(x).toarray(), ref, rtol=1e-12)
    pattern = funcad.hessian_sparsity(catalog.rosenbrock)(x)
    assert _ncolours(star_colouring(pattern)) == 3
    assert _ncolours(column_colouring(pattern)) == 3


def test_arrowhead_star_needs_two_colours_where_columns_need_n():
    x = _rng(4).uniform(0.1, 0.9, 25)
    pattern = funcad.hessian_sparsity(catalog.arrowhead)(x)
    assert _ncolours(star_colouring(pattern)) == 2
    assert _ncolours(column_colouring(pattern)) == 25


def test_bratu2d_five_point_pattern():
    N = 12
    P = funcad.jacobian_sparsity(catalog.bratu2d)(np.zeros(N * N))
    band = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(N, N))
    lap = sp.kronsum(band, band)
    assert (sp.csr_array(lap, dtype=bool) != P).nnz == 0
    assert _ncolours(column_colouring(P)) <= 7


# ------------------------------------------------- rules, checked numerically ----

def _const_banded(n):
    a = np.zeros((n, n))
    i = np.arange(n)
    a[i, i] = 2.0
    a[i[1:], i[:-1]] = -1.0
    return a


_IDX = np.array([4, 0, 0, 3])

# (name, function of one (6,) or (2, 3) input, input shape, exact)
RULE_CASES = [
    ("elementwise", lambda x: fnp.sin(x) * fnp.exp(x) + x ** 3, (6,), True),
    ("broadcast", lambda x: x[:, None] * x[None, :], (4,), True),
    ("mul_const_zero", lambda x: x * np.array([1.0, 0.0, 2.0, 0.0, 1.0, 1.0]), (6,), True),
    ("where_const_mask", lambda x: fnp.where(np.arange(6) % 2 == 0, x, x[::-1] ** 2), (6,), True),
    ("where_traced_mask", lambda x: fnp.where(x > 0, x, 0.0), (6,), False),
    ("sum_axis", lambda x: fnp.sum(x ** 2, axis=1), (2, 3), True),
    ("max_axis", lambda x: fnp.max(x, axis=0), (2, 3), False),
    ("prod", lambda x: fnp.prod(x, axis=1, keepdims=True), (2, 3), True),
    ("cumsum", lambda x: fnp.cumsum(x, axis=1), (2, 3), True),
    ("cumprod_rev", lambda x: lax.cumprod(x, axis=0, reverse=True), (6,), True),
    ("cummax", lambda x: lax.cummax(x, axis=0), (6,), False),
    ("slice_stride", lambda x: x[1::2] * x[::2], (6,), True),
    ("reshape_transpose", lambda x: (x.reshape(3, 2).T * np.arange(1.0, 4.0)).ravel(), (6,), True),
    ("rev_concat", lambda x: fnp.concatenate([x[::-1], x[:2] ** 2]), (6,), True),
    ("pad_interior", lambda x: lax.pad(x, 1.0, [(1, 2, 1)]), (6,), True),
    ("pad_value", lambda x: lax.pad(x[1:], x[0], [(2, -1, 0)]), (6,), True),
    ("gather_known", lambda x: x[_IDX] * x[_IDX[::-1]], (6,), True),
    ("gather_traced", lambda x: x[fnp.argmax(x)] * x, (6,), False),
    ("scatter_known", lambda x: x.at[_IDX].add(x[:4] ** 2), (6,), True),
    ("scatter_traced", lambda x: x.at[fnp.argmin(x)].add(x[0] * 2), (6,), False),
    ("set_known", lambda x: x.at[2].set(x[5] ** 2), (6,), True),
    ("dynamic_slice_known", lambda x: lax.dynamic_slice(x, (2,), (3,)), (6,), True),
    ("dynamic_slice_traced", lambda x: lax.dynamic_slice(x, (fnp.argmax(x),), (3,)), (6,), False),
    ("dus_traced", lambda x: lax.dynamic_update_slice(x, x[:2] * 3, (fnp.argmax(x),)), (6,), False),
    ("matmul_traced", lambda x: x.reshape(2, 3) @ x.reshape(3, 2), (6,), True),
    ("matmul_const_banded", lambda x: _const_banded(6) @ x, (6,), True),
    ("batched_dot", lambda x: fnp.einsum("bij,bj->bi", x.reshape(2, 3, 1) * x.reshape(2, 1, 3),
                                         x.reshape(2, 3)), (6,), True),
    ("sort", lambda x: fnp.sort(x.reshape(2, 3), axis=1).ravel(), (6,), False),
    ("clip", lambda x: fnp.clip(x, -0.5, x[0]), (6,), False),
    ("stop_gradient", lambda x: funcad.stop_gradient(x) * x[0], (6,), True),
    ("floor_zero", lambda x: fnp.floor(x) + x[0], (6,), True),
    ("cond_union", lambda x: lax.cond(x[0] > 0, lambda v: v[::-1], lambda v: v * 2.0, x), (6,), False),
    ("cond_const_index", lambda x: lax.switch(1, [lambda v: v[::-1], lambda v: v * 2.0], x), (6,), True),
    ("fori_known_counter", lambda x: lax.fori_loop(0, 3, lambda i, v: v.at[i].set(v[i + 1] * v[i]), x),
     (6,), True),
    ("scan_ys", lambda x: lax.scan(lambda c, xi: (c * xi, c + xi), 1.0, x)[1], (6,), True),
    ("scan_long_fixed_point", lambda x: lax.scan(lambda c, xi: (c + xi, c * xi), 0.0,
                                                 fnp.tile(x, 1000))[0][None], (6,), True),
    ("while_known", lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * c[1][::-1]),
                                             (0, x))[1], (6,), True),
    ("while_traced", lambda x: lax.while_loop(lambda c: c[1][0] < 10.0, lambda c: (c[0], c[1] * 2.0 + c[0]),
                                              (x[::-1] ** 2, x ** 2 + 1.0))[1], (6,), False),
    ("jit_call", lambda x: funcad.jit(lambda v: v[1:] * v[:-1])(x), (6,), True),
    ("checkpoint", lambda x: funcad.checkpoint(lambda v: fnp.sin(v) * v[::-1])(x), (6,), True),
    ("custom_jvp", lambda x: funcad.nn.relu(x) + funcad.nn.softplus(x[::-1]), (6,), False),
    ("logsumexp", lambda x: funcad.nn.logsumexp(x.reshape(2, 3), axis=1), (6,), True),
    ("integer_outputs", lambda x: x * fnp.argmax(x).astype(float), (6,), True),
]


@pytest.mark.parametrize("name,fun,shape,exact", RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_rule_patterns(name, fun, shape, exact):
    rng = _rng(5)
    missing_total = 0
    pattern = funcad.jacobian_sparsity(fun)(np.zeros(shape))
    for _ in range(3):
        x = rng.uniform(-1.0, 1.0, shape)
        dense = np.asarray(funcad.jacfwd(fun)(x)).reshape(pattern.shape)
        missing, zero = check_pattern(pattern, dense)
        missing_total += missing
        if exact:
            assert zero == 0, f"{name}: {zero} pattern entries are numerically zero"
        J = funcad.sparse_jacobian(fun)(x)
        np.testing.assert_allclose(J.toarray(), dense, rtol=1e-12, atol=1e-12)
    assert missing_total == 0


def test_op_table_patterns_are_sound():
    """Every differentiable row of the op table: no nonzero of the dense Jacobian
    (with respect to each float argument) is missing from the detected pattern."""
    from tests.op_table import OPS
    rng = _rng(6)
    checked = 0
    for spec in OPS:
        if not spec.diff or np.float64 not in spec.dtypes:
            continue
        args = spec.args(rng, np.float64)
        for i, a in enumerate(args):
            if np.asarray(a).dtype != np.float64:
                continue

            def f(xi, i=i, args=args):
                out = spec.fun(*args[:i], xi, *args[i + 1:])
                outs = out if isinstance(out, tuple) else (out,)
                return fnp.concatenate([fnp.ravel(o).astype(float) for o in outs])

            pattern = funcad.jacobian_sparsity(f)(a)
            dense = np.asarray(funcad.jacfwd(f)(a)).reshape(pattern.shape)
            missing, _ = check_pattern(pattern, dense)
            assert missing == 0, f"{spec.name}, argument {i}: {missing} nonzeros missing"
            checked += 1
    assert checked > 150


# --------------------------------------------------------------- colouring ----


def _random_pattern(rng, m, n, density):
    p = sp.random_array((m, n), density=density, rng=rng, format="csr")
    return sp.csr_array(p, dtype=bool)


@pytest.mark.parametrize("seed", range(5))
def test_column_and_row_colourings_are_valid(seed):
    rng = _rng(seed)
    P = _random_pattern(rng, 40, 30, 0.08)
    c = column_colouring(P)
    for colour in range(_ncolours(c)):
        assert P[:, c == colour].sum(axis=1).max(initial=0) <= 1   # no shared row
    r = row_colouring(P)
    for colour in range(_ncolours(r)):
        assert P[r == colour].sum(axis=0).max(initial=0) <= 1


@pytest.mark.parametrize("seed", range(5))
def test_star_colouring_recovers_every_entry(seed):
    rng = _rng(seed)
    A = _random_pattern(rng, 30, 30, 0.07)
    P = sp.csr_array(A + A.T + sp.eye_array(30, dtype=bool), dtype=bool)
    H = P.toarray() * rng.uniform(1.0, 2.0, (30, 30))
    H = H + H.T
    c = star_colouring(P)
    B = H @ seed_matrix(c)
    src_row, src_colour = star_sources(P, c)
    rows = np.repeat(np.arange(30), np.diff(P.indptr))
    np.testing.assert_allclose(B[src_row, src_colour], H[rows, P.indices])
    assert _ncolours(c) < 30


def test_mode_chosen_by_colours():
    x = np.ones(5)
    row_fun = lambda x: fnp.stack([fnp.sum(x ** 2), x[0]])       # noqa: E731  (2 rows, dense columns)
    assert _ncolours(row_colouring(funcad.jacobian_sparsity(row_fun)(x))) == 2
    calls = []
    orig = sparse_api._reverse
    sparse_api._reverse = lambda *a: calls.append("rev") or orig(*a)
    try:
        J = funcad.sparse_jacobian(row_fun)(x)
    finally:
        sparse_api._reverse = orig
    assert calls == ["rev"]
    np.testing.assert_allclose(J.toarray(), np.vstack([2 * x, np.eye(5)[0]]))
    np.testing.assert_allclose(funcad.sparse_jacobian(row_fun, mode="fwd")(x).toarray(), J.toarray())


# ------------------------------------------------------------- composition ----


def test_jit_finds_the_pattern_once_per_shape():
    traces = []

    def f(x):
        traces.append(x.shape)
        return x[1:] * x[:-1]

    jf = funcad.jit(funcad.sparse_jacfwd(f))
    a = jf(np.arange(1.0, 6.0))
    n_first = len(traces)
    b = jf(np.arange(2.0, 7.0))
    assert len(traces) == n_first                      # no retrace, no new detection
    np.testing.assert_allclose(np.asarray(b.todense()), funcad.jacfwd(f)(np.arange(2.0, 7.0)))
    jf(np.arange(1.0, 8.0))
    assert len(traces) > n_first                       # a new shape: a new pattern
    assert a.nnz == 8


def test_vmap_shares_the_pattern():
    X = _rng(7).uniform(0.1, 0.9, (4, 10))
    J = funcad.vmap(funcad.sparse_jacfwd(catalog.bratu1d))(X)
    assert isinstance(J, SparseMatrix) and J.data.shape == (4, J.nnz)
    np.testing.assert_allclose(np.asarray(J.todense()), funcad.vmap(funcad.jacfwd(catalog.bratu1d))(X),
                               rtol=1e-12)
    H = funcad.jit(funcad.vmap(funcad.sparse_hessian(catalog.rosenbrock)))(X)
    np.testing.assert_allclose(np.asarray(H.todense()), funcad.vmap(funcad.hessian(catalog.rosenbrock))(X),
                               rtol=1e-12)


def test_grad_through_sparse_values():
    x = _rng(8).uniform(0.1, 0.9, 8)

    def loss_sparse(x):
        return fnp.sum(funcad.sparse_jacrev(catalog.burgers)(x).data ** 2)

    def loss_dense(x):
        return fnp.sum(funcad.jacfwd(catalog.burgers)(x) ** 2)

    np.testing.assert_allclose(funcad.grad(loss_sparse)(x), funcad.grad(loss_dense)(x), rtol=1e-10)
    np.testing.assert_allclose(funcad.jit(funcad.grad(loss_sparse))(x), funcad.grad(loss_dense)(x),
                               rtol=1e-10)


@funcad.custom_vjp
def _chain_product(x):
    return x[1:] * x[:-1]


_chain_product.defvjp(lambda x: (_chain_product(x), x),
                      lambda r, c: (fnp.concatenate([c * r[1:], fnp.zeros(1)])
                                    + fnp.concatenate([fnp.zeros(1), c * r[:-1]]),))


def test_custom_vjp_and_scalars():
    x = np.arange(1.0, 5.0)
    J = funcad.sparse_jacrev(_chain_product)(x)
    assert J.nnz == 6
    np.testing.assert_allclose(J.toarray(), funcad.jacrev(_chain_product)(x))
    np.testing.assert_allclose(funcad.sparse_jacfwd(lambda s: fnp.sin(s) * 2)(0.5).toarray(), [[2 * np.cos(0.5)]])
    np.testing.assert_allclose(funcad.sparse_hessian(lambda s: s ** 3)(2.0).toarray(), [[12.0]])


def test_other_arguments_and_argnums():
    def f(a, x, scale):
        return scale * x[1:] * a[:-1]

    a, x = np.arange(1.0, 5.0), np.arange(5.0, 9.0)
    J = funcad.sparse_jacfwd(f, argnums=1)(a, x, 2.0)
    np.testing.assert_allclose(J.toarray(), funcad.jacfwd(f, argnums=1)(a, x, 2.0))
    Jr = funcad.jit(funcad.sparse_jacrev(f, argnums=-3))(a, x, 2.0)
    np.testing.assert_allclose(np.asarray(Jr.todense()), funcad.jacrev(f)(a, x, 2.0))


def test_float32_and_matrix_shapes():
    x = _rng(9).uniform(0.1, 0.9, (3, 4)).astype(np.float32)
    f = lambda x: fnp.cumsum(x, axis=1)[:, ::2] ** 2          # noqa: E731
    J = funcad.sparse_jacfwd(f)(x)
    assert J.shape == (6, 12) and J.dtype == np.float32
    np.testing.assert_allclose(J.toarray(), np.asarray(funcad.jacfwd(f)(x)).reshape(6, 12), rtol=1e-6)


def test_constant_and_empty_jacobians():
    J = funcad.sparse_jacfwd(lambda x: fnp.floor(x) + 1.0)(np.ones(3))
    assert J.nnz == 0 and J.shape == (3, 3)
    H = funcad.sparse_hessian(lambda x: fnp.sum(3.0 * x))(np.ones(3))
    assert H.nnz == 0
    Hj = funcad.jit(funcad.sparse_hessian(lambda x: fnp.sum(3.0 * x)))(np.ones(3))
    np.testing.assert_array_equal(np.asarray(Hj.todense() if isinstance(Hj, SparseMatrix) else Hj.toarray()),
                                  np.zeros((3, 3)))


# --------------------------------------------------------------- container ----


def test_sparse_matrix_container():
    J = funcad.jit(funcad.sparse_jacfwd(lambda x: x[1:] - x[:-1] ** 2))(np.array([1.0, 2.0, 3.0]))
    assert repr(J) == "SparseMatrix(shape=(2, 3), nnz=4, data=f64[4])"
    leaves, tree = funcad.tree_util.tree_flatten(J)
    assert len(leaves) == 1
    again = funcad.tree_util.tree_unflatten(tree, [leaves[0] * 2])
    np.testing.assert_allclose(np.asarray(again.todense()), 2 * np.asarray(J.todense()))
    np.testing.assert_allclose(J.to_scipy().toarray(), [[-2.0, 1.0, 0.0], [0.0, -4.0, 1.0]])
    with pytest.raises(ValueError, match="unbatched"):
        SparseMatrix(np.ones((2, 4)), J.rows, J.cols, J.shape).to_scipy()


# ------------------------------------------------------------------ errors ----


def test_missing_rule_names_the_primitive():
    from funcad.primitives._base import new_primitive
    fake = new_primitive("fake_sparsity_op", lambda x: x, lambda x: x)
    try:
        with pytest.raises(funcad.MissingRuleError, match="`fake_sparsity_op` has no sparsity rule"):
            funcad.jacobian_sparsity(lambda x: fake.bind(x))(np.ones(3))
    finally:
        from funcad.core import trace as T
        for table in (T.impl_rules, T.abstract_eval_rules, T.jvp_rules, T.batch_rules,
                      T.lowering_rules, T.python_rules):
            table.pop(fake, None)


def test_bad_arguments_explain():
    x = np.ones(3)
    with pytest.raises(funcad.FuncadTypeError, match="int argnums"):
        funcad.sparse_jacfwd(lambda x, y: x * y, argnums=(0, 1))(x, x)
    with pytest.raises(funcad.FuncadTypeError, match="one array"):
        funcad.sparse_jacrev(lambda d: d["a"])({"a": x})
    with pytest.raises(funcad.FuncadTypeError, match="returning one array"):
        funcad.sparse_jacfwd(lambda x: (x, x))(x)
    with pytest.raises(funcad.FuncadTypeError, match="float inputs"):
        funcad.jacobian_sparsity(lambda x: x)(np.ones(3, int))
    with pytest.raises(funcad.FuncadTypeError, match="mode must be"):
        funcad.sparse_jacobian(lambda x: x, mode="forward")
    with pytest.raises(funcad.FuncadTypeError, match="scalar"):
        funcad.sparse_hessian(lambda x: x * x)(x)


# --------------------------------------------------- table and docstrings ----


# funcad's primitives: each must have a rule (a new primitive joins this list with its rule).
# A primitive added later without one gets the MissingRuleError above (tested there).
PRIMITIVES = """abs acos acosh add and argmax argmin asin asinh atan atan2 atanh bitcast_convert_type
broadcast_in_dim cbrt ceil checkpoint clamp clz concatenate cond convert_element_type cos cosh
cummax cummin cumprod cumsum custom_jvp_call custom_lin custom_vjp_call debug_print digamma
div dot_general dynamic_slice dynamic_update_slice eq erf erf_inv erfc exp exp2 expm1 floor
gather ge gt integer_pow iota is_finite jit le lgamma log log1p logistic lt max min mul ne neg
not optimization_barrier or pad polygamma population_count pow reduce_max reduce_min
reduce_prod reduce_sum rem reshape rev round rsqrt scan scatter_add select_n shift_left
shift_right_arithmetic shift_right_logical sign sin sinh slice sort sqrt squeeze stop_gradient
sub tan tanh threefry2x32 transpose while xor real imag conj complex fft sharding_constraint
cholesky triangular_solve lu qr eigh svd geqrf householder_product conv_general_dilated eig
bessel_i0e bessel_i1e igamma igammac igamma_grad_a random_gamma_grad regularized_incomplete_beta zeta""".split()


def test_every_primitive_has_a_sparsity_rule():
    by_name = {p.name: p for p in abstract_eval_rules}
    assert [name for name in PRIMITIVES if name not in by_name] == []
    assert [name for name in PRIMITIVES if by_name[name] not in _interp.dep_rules] == []


# -------------------------------------------------------------------- slow ----


@pytest.mark.slow
def test_bratu2d_200_end_to_end_under_a_second():
    import time
    x = _rng(10).uniform(0, 0.1, 200 * 200)
    funcad.sparse_jacfwd(catalog.bratu1d)(np.zeros(4))
    t0 = time.perf_counter()
    J = funcad.sparse_jacfwd(catalog.bratu2d)(x)
    assert time.perf_counter() - t0 < 2.0     # ~0.3 s alone; slack for a shared machine
    assert J.nnz == 5 * 40000 - 4 * 200
