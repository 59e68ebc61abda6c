"""Jaxpr optimisation passes: each pass alone, the pipeline on every op-table row
and on grad jaxprs (bitwise on the NumPy interpreter), random programs, jit."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
from funcad.core.ir import ClosedJaxpr, Jaxpr, Literal
from funcad.core.trace import typecheck
from funcad.core.trace import eval_jaxpr
from funcad.transforms.passes import count_eqns, cse, dce, fold, inline, optimize, simplify
from funcad.transforms.passes.fold import MAX_CONST_SIZE
from tests.op_table import OPS


def _same(got, want):
    """Bitwise equality of results: dtype, shape, NaN positions and signed zeros."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.dtype.kind in "fc":
            np.testing.assert_array_equal(g, w)  # NaNs in the same places count as equal
            assert np.array_equal(np.signbit(g.real), np.signbit(w.real))
        else:
            assert np.array_equal(g, w)


def _check(closed, *args, fewer=None):
    """optimize(closed) is well typed, keeps the signature and gives the same bits."""
    opt = optimize(closed)
    typecheck(opt.jaxpr)
    assert opt.in_avals == closed.in_avals and opt.out_avals == closed.out_avals
    _same(eval_jaxpr(opt.jaxpr, opt.consts, *args), eval_jaxpr(closed.jaxpr, closed.consts, *args))
    if fewer is not None:
        assert count_eqns(opt) <= fewer
    return opt


def _prims(closed):
    return [e.prim.name for e in closed.jaxpr.eqns]


# ------------------------------------------------------------------- DCE ----

def test_dce_removes_dead_equations_and_constants():
    c = np.arange(3.0)
    j = funcad.make_jaxpr(lambda x: (fnp.sin(x) * c, fnp.cos(x))[1])(np.ones(3))
    assert _prims(j) == ["sin", "mul", "cos"] and len(j.consts) == 1
    d = dce(j)
    assert _prims(d) == ["cos"] and d.consts == [] and d.jaxpr.invars == j.jaxpr.invars
    _same(d(np.ones(3)), j(np.ones(3)))


def test_dce_prunes_outputs_and_inputs_of_calls():
    f = funcad.jit(lambda x, y: (fnp.sin(x), fnp.cos(y)))
    j = funcad.make_jaxpr(lambda x, y: f(x, y)[0])(1.0, 2.0)
    d = dce(j)
    (call,) = d.jaxpr.eqns
    assert len(call.outvars) == 1 and len(call.inputs) == 1
    assert _prims(call.params["jaxpr"]) == ["sin"]
    assert d(1.0, 2.0)[0] == np.sin(1.0)


# ------------------------------------------------------------------- CSE ----

def test_cse_merges_repeats_and_commuted_operands():
    j = funcad.make_jaxpr(lambda x, y: fnp.sin(x) * y + y * fnp.sin(x))(1.0, 2.0)
    c = dce(cse(j))
    assert _prims(c) == ["sin", "mul", "add"]
    _same(c(1.0, 2.0), j(1.0, 2.0))


def test_cse_keeps_apart_what_differs():
    # -0.0 and 0.0 are different literals; different params are different equations.
    j = funcad.make_jaxpr(lambda x: (lax.add(x, -0.0), lax.add(x, 0.0),
                                     lax.integer_pow(x, 2), lax.integer_pow(x, 3)))(1.0)
    assert len(cse(j).eqns) == 4


# ------------------------------------------------------------- folding ----

def test_fold_scalars_become_literals():
    c = np.float64(0.5)
    j = funcad.make_jaxpr(lambda x: x * (lax.exp(lax.broadcast_in_dim(c, (), ())) + c))(np.ones(2))
    f = dce(fold(j))
    (eqn,) = f.jaxpr.eqns
    assert type(eqn.inputs[1]) is Literal and eqn.inputs[1].val == np.exp(0.5) + 0.5
    _same(f(np.arange(2.0)), j(np.arange(2.0)))


def test_fold_does_not_materialise_big_constants():
    ones = lambda: lax.broadcast_in_dim(np.float64(1.0), (300, 400), ())  # staged, not a constant
    j = funcad.make_jaxpr(lambda x: x + ones() * 2.0 + lax.cumsum(ones(), 0))(np.ones(400))
    f = dce(fold(j))
    assert j.consts == [] and all(np.size(c) <= MAX_CONST_SIZE for c in f.consts)
    # The uniform product is a broadcast of the literal 2.0, not a 120000-element constant.
    assert "broadcast_in_dim" in _prims(f) and "mul" not in _prims(f) and "cumsum" in _prims(f)
    _same(f(np.arange(400.0)), j(np.arange(400.0)))


def test_fold_small_arrays_become_constants():
    j = funcad.make_jaxpr(lambda x: x * fnp.cumsum(np.arange(1.0, 4.0)))(np.ones(3))
    f = dce(fold(j))
    assert _prims(f) == ["mul"] and np.array_equal(f.consts[0], [1.0, 3.0, 6.0])


def test_fold_leaves_what_depends_on_a_spread_array_to_run_time():
    # XLA folds through a broadcast of a scalar but not of an array: gamma's per-element
    # `alpha - 1/3` of a constant alpha[3, 1] spread over [3, 4] runs at run time in JAX's
    # program, so funcad's must not fold it (it differed from JAX's in the last bit)
    col = np.array([[0.3], [1.0], [7.0]])
    j = funcad.make_jaxpr(lambda x: x * fnp.sqrt(fnp.broadcast_to(col, (3, 4)) - 1 / 3))(np.ones((3, 4)))
    f = dce(fold(j))
    assert {"broadcast_in_dim", "sub", "sqrt", "mul"} <= set(_prims(f))
    _same(f(np.arange(12.0).reshape(3, 4)), j(np.arange(12.0).reshape(3, 4)))
    # a scalar's broadcast, a uniform array's and a reshape-like one still fold
    for c, shape in ((np.float64(0.3), (3, 4)), (np.full((3, 1), 0.3), (3, 4)), (col[:, 0], (1, 3))):
        j = funcad.make_jaxpr(lambda x: x * fnp.sqrt(fnp.broadcast_to(c, shape) - 1 / 3))(np.ones(shape))
        assert "sqrt" not in _prims(dce(fold(j))), c


def test_jit_gamma_of_a_constant_array_is_jaxs_bit_for_bit():
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        alpha = np.array([[0.3], [1.0], [7.0]])
        got = funcad.jit(lambda k: funcad.random.gamma(k, alpha, (3, 4)))(funcad.random.PRNGKey(42))
        want = jax.jit(lambda k: jax.random.gamma(k, alpha, (3, 4)))(jax.random.PRNGKey(42))
        np.testing.assert_array_equal(got, want)


def test_fold_leaves_traced_constants_alone():
    # Inside jvp the closed-over tangent tracer is a constant of the inner jaxpr.
    def f(t):
        j = funcad.make_jaxpr(lambda x: x + fnp.sin(t))(1.0)
        opt = optimize(j)
        assert "sin" in _prims(opt)
        return eval_jaxpr(opt.jaxpr, opt.consts, 1.0)[0]
    y, ty = funcad.jvp(f, (0.5,), (1.0,))
    assert y == 1.0 + np.sin(0.5) and ty == np.cos(0.5)


# -------------------------------------------------------- simplification ----

SPECIAL = np.array([-0.0, 0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 5e-324])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("fun,left", [
    (lambda x: x * 1.0, []),
    (lambda x: 1.0 * x, []),
    (lambda x: x / 1.0, []),
    (lambda x: x - 0.0, []),
    (lambda x: lax.add(x, -0.0), []),
    (lambda x: lax.add(x, 0.0), ["add"]),          # -0.0 + 0.0 is +0.0
    (lambda x: x * 0.0, ["mul"]),                  # nan * 0 is nan, -1 * 0 is -0
    (lambda x: lax.sub(x, -0.0), ["sub"]),         # -0.0 - (-0.0) is +0.0
    (lambda x: -(-x), []),
    (lambda x: x * fnp.ones(8), []),
    (lambda x: x * fnp.ones((2, 8)), ["broadcast_in_dim"]),  # keeps the broadcast shape
    (lambda x: lax.convert_element_type(x, np.float64), []),
    (lambda x: lax.reduce_sum(x, ()), []),
    (lambda x: lax.integer_pow(x, 1), []),
    (lambda x: lax.select_n(True, x, -x), ["neg"]),
    (lambda x: lax.select_n(np.zeros(8, bool), x, -x), []),
    (lambda x: fnp.where(x > 0, x, x), []),
    (lambda x: lax.rev(lax.rev(x, (0,)), (0,)), []),
    (lambda x: lax.slice(x, (0,), (8,)), []),
    (lambda x: lax.pad(x, 0.0, [(0, 0, 0)]), []),
    (lambda x: x.reshape(2, 4).reshape(8), []),
    (lambda x: fnp.exp(x.reshape(2, 4)).reshape(8), ["exp"]),
    (lambda x: x.reshape(2, 4).T.T.reshape(8), []),
    (lambda x: x * lax.broadcast_in_dim(np.float64(2.0), (8,), ()), ["mul"]),
])
def test_simplify_rules_are_exact(fun, left):
    j = funcad.make_jaxpr(fun)(SPECIAL)
    o = _check(j, SPECIAL)
    assert _prims(o) == left


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_complex_times_one_is_kept():
    # (inf + 0j) * (1 + 0j) is (inf + nanj): not an identity.
    x = np.array([np.inf + 0j, 1 + 2j])
    j = funcad.make_jaxpr(lambda z: z * np.complex128(1.0))(x)
    o = _check(j, x)
    assert _prims(o) == ["mul"]


def test_broadcast_absorbed_into_elementwise_op():
    x = np.arange(6.0).reshape(2, 3)
    j = funcad.make_jaxpr(lambda x, s: x * lax.broadcast_in_dim(s, (2, 3), ()))(x, 2.0)
    o = _check(j, x, 2.0)
    assert _prims(o) == ["mul"]


def test_transpose_chain_composes():
    x = np.arange(24.0).reshape(2, 3, 4)
    j = funcad.make_jaxpr(lambda x: lax.transpose(lax.transpose(x, (1, 2, 0)), (2, 0, 1)))(x)
    assert _prims(_check(j, x)) == []
    j = funcad.make_jaxpr(lambda x: lax.transpose(lax.transpose(x, (1, 2, 0)), (1, 0, 2)))(x)
    assert _prims(_check(j, x)) == ["transpose"]


def test_broadcast_of_unit_reshape_folds_into_one_broadcast():
    x = np.arange(4.0).reshape(4, 1)
    j = funcad.make_jaxpr(lambda x: lax.broadcast_in_dim(x.reshape(4), (4, 6), (0,)))(x)
    o = _check(j, x)
    assert _prims(o) == ["broadcast_in_dim"]
    assert o.jaxpr.eqns[0].params["broadcast_dimensions"] == (0, 1)


def test_integer_sum_of_broadcast_is_a_product():
    j = funcad.make_jaxpr(lambda n: lax.reduce_sum(lax.broadcast_in_dim(n, (5, 3), (1,)), (0,)))(
        np.array([1, -2, 2**62], np.int64))
    o = _check(j, np.array([1, -2, 2**62], np.int64))
    assert _prims(o) == ["mul"]


def test_output_weak_type_is_kept():
    # x is weak; x * float64(1) is not: dropping the mul would change the output type.
    j = funcad.make_jaxpr(lambda x: x * np.float64(1.0))(2.0)
    o = _check(j, 2.0)
    assert o.out_avals[0].weak_type is False


# ------------------------------------------------------------ inlining ----

def test_trivial_calls_are_inlined_and_literals_enter_calls():
    g = funcad.jit(lambda x: x * 2.0)
    h = funcad.jit(lambda x, s, y: (fnp.sin(x) * s + fnp.cos(y), x))
    j = funcad.make_jaxpr(lambda x: h(g(x), 1.0, x))(0.5)
    i = inline(j)
    assert _prims(i) == ["mul", "jit"]
    o = _check(j, 0.5)
    (call,) = [e for e in o.jaxpr.eqns if e.prim.name == "jit"]
    # s = 1.0 went into the body and was simplified away; the forwarded x is read outside.
    assert _prims(call.params["jaxpr"]) == ["sin", "cos", "add"] and len(call.outvars) == 1


def test_nested_jaxprs_are_optimised():
    f = funcad.jit(lambda x: fnp.sin(x) + fnp.sin(x) * 1.0)
    j = funcad.make_jaxpr(lambda x: f(x) * 3.0)(np.ones(2))
    o = _check(j, np.ones(2))
    (call,) = [e for e in o.jaxpr.eqns if e.prim.name == "jit"]
    assert _prims(call.params["jaxpr"]) == ["sin", "add"]


def test_open_jaxpr_keeps_its_signature():
    c = np.arange(3.0)
    closed = funcad.make_jaxpr(lambda x: (x * c) * 1.0 + -(-x))(np.ones(3))
    o = optimize(closed.jaxpr)
    assert isinstance(o, Jaxpr) and len(o.constvars) == 1 and len(o.eqns) == 2
    _same(eval_jaxpr(o, closed.consts, c), closed(c))


# --------------------------------------------------------------- the API ----

def test_public_api():
    f = lambda x: fnp.sum(fnp.sin(x) * fnp.cos(x))
    x = np.linspace(-1, 1, 5)
    j = funcad.make_jaxpr(funcad.grad(f))(x)
    o = funcad.make_jaxpr(funcad.grad(f), optimize=True)(x)
    assert count_eqns(o) == count_eqns(funcad.optimize(j)) == 6 < count_eqns(j) == 13
    _same(o(x), j(x))
    with pytest.raises(TypeError, match="ClosedJaxpr"):
        funcad.optimize(f)


def test_jit_lowers_the_optimised_program():
    f = lambda x: fnp.sum(-(-x) * 1.0)
    text = funcad.jit(funcad.grad(f)).lower(np.ones(3)).as_text()
    assert "negate" not in text and "multiply" not in text
    x = np.linspace(-1, 1, 5)
    g = lambda x: fnp.sum(fnp.tanh(x) ** 2 * fnp.ones(5))
    np.testing.assert_allclose(np.asarray(funcad.jit(funcad.grad(g))(x)), funcad.grad(g)(x), rtol=1e-14)


# ------------------------------------------------------------- op table ----

def _dtype(spec):
    return np.float64 if np.float64 in spec.dtypes else spec.dtypes[-1]


def _outs(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


@pytest.mark.parametrize("spec", OPS, ids=lambda s: s.name)
def test_op_table_optimised_is_bitwise_equal(spec):
    args = spec.args(np.random.default_rng(0), _dtype(spec))
    j = funcad.make_jaxpr(lambda *a: _outs(spec.fun(*a)))(*args)
    _check(j, *args, fewer=count_eqns(j))


DIFF = [s for s in OPS if s.diff and np.float64 in s.dtypes]


@pytest.mark.parametrize("spec", DIFF, ids=lambda s: s.name)
def test_op_table_grad_jaxpr_optimised_is_bitwise_equal(spec):
    rng = np.random.default_rng(1)
    args = spec.args(rng, np.float64)
    floats = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    cts = [rng.normal(size=np.shape(y)) for y in _outs(spec.fun(*args))]

    def loss(*a):
        return sum(fnp.sum(y * c) for y, c in zip(_outs(spec.fun(*a)), cts))

    j = funcad.make_jaxpr(funcad.grad(loss, argnums=floats))(*args)
    o = _check(j, *args, fewer=count_eqns(j))
    assert count_eqns(o) < count_eqns(j) or count_eqns(j) <= 2


# ------------------------------------------------------ random programs ----

_UNARY = [fnp.sin, fnp.exp, fnp.tanh, fnp.abs, lax.neg, lambda x: -(-x), lax.stop_gradient,
          lambda x: lax.convert_element_type(x, np.float64), lambda x: lax.reduce_sum(x, ()),
          lambda x: x.T.T, lambda x: fnp.exp(x.reshape(-1)).reshape(x.shape),
          lambda x: lax.reduce_sum(lax.broadcast_in_dim(x, (2,) + x.shape, tuple(range(1, x.ndim + 1))),
                                   (0,)),
          # a size-1 axis added, broadcast to 2 and reduced: max gives x back, sum over a
          # size-1 axis turns -0.0 into +0.0 and must stay
          lambda x: lax.reduce_max(lax.broadcast_in_dim(lax.expand_dims(x, (x.ndim,)), x.shape + (2,),
                                                        tuple(range(x.ndim + 1))), (x.ndim,)),
          lambda x: lax.reduce_sum(lax.expand_dims(x, (0,)), (0,)),
          lambda x: lax.squeeze(lax.expand_dims(lax.neg(lax.expand_dims(x, (0,))), (2,)), (0, 2)),
          lambda x: lax.convert_element_type(lax.convert_element_type(x, np.float32), np.float64)]
_CONSTS = [1.0, -1.0, 0.0, -0.0, 2.0, np.inf, np.nan]
_BINARY = [lax.add, lax.sub, lax.mul, lax.div, lax.max]


@st.composite
def programs(draw):
    """A list of steps; each reads earlier values by index and appends one value."""
    steps = []
    for k in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["unary", "const", "binary", "select", "ones"]))
        i = draw(st.integers(0, k + 1))
        if kind == "unary":
            steps.append((kind, draw(st.integers(0, len(_UNARY) - 1)), i))
        elif kind in ("const", "ones"):
            steps.append((kind, draw(st.integers(0, len(_BINARY) - 1)), i,
                          draw(st.sampled_from(_CONSTS)), draw(st.booleans())))
        elif kind == "binary":
            steps.append((kind, draw(st.integers(0, len(_BINARY) - 1)), i, draw(st.integers(0, k + 1))))
        else:
            steps.append((kind, draw(st.booleans()), i, draw(st.integers(0, k + 1))))
    return steps


def _run(steps, x, y):
    vals = [x, y]
    for s in steps:
        kind, a = s[0], vals[s[2]]
        if kind == "unary":
            v = _UNARY[s[1]](a)
        elif kind == "const":
            c = np.float64(s[3])
            v = _BINARY[s[1]](c, a) if s[4] else _BINARY[s[1]](a, c)
        elif kind == "ones":  # a broadcast constant with one value, maybe of a bigger shape
            c = fnp.full((2, 3) if s[4] else fnp.shape(a), s[3])
            v = _BINARY[s[1]](a, c)
        elif kind == "binary":
            v = _BINARY[s[1]](a, vals[s[3]])
        else:
            b = vals[s[3]]
            shape = np.broadcast_shapes(fnp.shape(a), fnp.shape(b))
            v = lax.select_n(np.full(shape, s[1]), a, b)
        vals.append(v)
    return vals[2:]


@settings(max_examples=150, deadline=None)
@given(programs(), st.lists(st.sampled_from([-0.0, 0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e300]),
                            min_size=9, max_size=9))
def test_random_programs_are_bitwise_equal(steps, data):
    x, y = np.array(data[:6]).reshape(2, 3), np.array(data[6:])
    with np.errstate(all="ignore"):
        j = funcad.make_jaxpr(lambda x, y: _run(steps, x, y))(x, y)
        _check(j, x, y, fewer=count_eqns(j))
        # The passes compose: optimising again changes nothing more.
        o = optimize(j)
        assert count_eqns(optimize(o)) == count_eqns(o)
        # And so do their reverse-mode derivatives.
        g = funcad.make_jaxpr(funcad.grad(lambda x, y: sum(fnp.sum(v) for v in _run(steps, x, y)),
                                          argnums=(0, 1)))(x, y)
        _check(g, x, y, fewer=count_eqns(g))
