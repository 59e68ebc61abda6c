"""Automatic differentiation: the op table against finite differences and JAX,
the API's semantics (symbolic zeros, float0, argnums, has_aux, holomorphic,
control flow), transposition of every linear primitive, and error messages."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
from funcad.core.avals import float0
from funcad.core.errors import ConcretizationError, FuncadError, FuncadTypeError, MissingRuleError
from funcad.test_util import check_grads
from tests.op_table import OPS

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

DIFF_ROWS = [s for s in OPS if s.diff and any(np.dtype(d).kind == "f" for d in s.dtypes)]

# Rows compared with JAX in the default run: every lax primitive row plus the
# numpy-level rows whose derivatives go through other paths (indexing,
# reductions with ties conventions, contractions, compositions). The full
# table runs with `-m slow`; each JAX comparison costs one XLA compilation.
_FAST_JAX = {
    "tan", "arccosh", "abs", "cbrt", "reciprocal", "sinc", "divide", "power", "hypot",
    "logaddexp", "remainder", "copysign", "float_power", "pow_half", "rpow_scalar",
    "mixed_f32_f64", "astype_f32", "where_broadcast", "clip", "clip_arrays", "prod", "prod_all",
    "max", "min_keepdims", "var_axis_ddof", "std", "logsumexp_axis", "cumprod", "norm",
    "norm_inf", "norm_p3", "matmul_batched", "dot_nd", "tensordot", "einsum_three",
    "einsum_trace", "getitem_adv_2d", "getitem_bool_mask", "getitem_mixed",
    "getitem_tracer_index", "at_set", "at_multiply", "take_along_axis", "sort_axis0",
    "softmax", "mlp_layer", "methods_chain",
}


def _float_dtype(spec):
    return np.float64 if np.float64 in spec.dtypes else next(d for d in spec.dtypes if np.dtype(d).kind == "f")


def _row(spec):
    """(float inputs, funcad function of them, JAX function of them); other inputs are fixed."""
    args = spec.args(np.random.default_rng(0), _float_dtype(spec))
    fpos = [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]

    def merge(xs):
        full = list(args)
        for i, x in zip(fpos, xs):
            full[i] = x
        return full

    f = lambda *xs: spec.fun(*merge(xs))  # noqa: E731
    jf = (lambda *xs: spec.jax_fun(*merge(xs))) if spec.jax_fun else None  # noqa: E731
    xs = [args[i] for i in fpos]
    return xs, f, jf, f(*xs)


def _leaves(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _uses_f32(xs, out):
    return any(np.asarray(v).dtype == np.float32 for v in list(xs) + _leaves(out))


@pytest.mark.parametrize("spec", DIFF_ROWS, ids=lambda s: s.name)
def test_check_grads_order2(spec):
    xs, f, _, out = _row(spec)
    if _uses_f32(xs, out):
        # A float32 value inside: finite differences need a bigger step.
        check_grads(f, xs, order=2, atol=5e-3, rtol=5e-3, eps=1e-3)
    else:
        check_grads(f, xs, order=2)


def _jax_oracle(jf, xs, ts, ws):
    """JAX's gradient, jvp tangent and Hessian of the weighted sum of outputs, in one jit."""
    an = tuple(range(len(xs)))

    def scalar(ws, *a):
        return sum(jnp.sum(o * w) for o, w in zip(_leaves(jf(*a)), ws))

    def all_derivs(xs, ts, ws):
        return (jax.grad(scalar, tuple(i + 1 for i in an))(ws, *xs),
                jax.jvp(jf, tuple(xs), tuple(ts))[1],
                jax.hessian(scalar, tuple(i + 1 for i in an))(ws, *xs))

    return jax.jit(all_derivs)(xs, ts, ws)


def _compare_with_jax(spec):
    xs, f, jf, out = _row(spec)
    assert jf is not None, f"{spec.name} has no JAX oracle"
    rng = np.random.default_rng(1)
    ws = [rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype) for o in _leaves(out)]
    ts = [rng.standard_normal(np.shape(x)).astype(x.dtype) for x in xs]
    an = tuple(range(len(xs)))
    rtol = 1e-5 if _uses_f32(xs, out) else 1e-9
    rtol = max(rtol, spec.rtol or 0.0)
    close = lambda a, b, what: np.testing.assert_allclose(  # noqa: E731
        np.asarray(a), np.asarray(b), rtol=rtol, atol=rtol * 1e-3, err_msg=f"{spec.name}: {what}")

    def scalar(*a):
        return sum(fnp.sum(o * w) for o, w in zip(_leaves(f(*a)), ws))

    j_grad, j_tan, j_hess = _jax_oracle(jf, xs, ts, ws)
    for g, jg in zip(funcad.grad(scalar, an)(*xs), j_grad):
        close(g, jg, "grad")
    _, tan = funcad.jvp(f, xs, ts)
    for t, jt in zip(_leaves(tan), _leaves(j_tan)):
        close(t, jt, "jvp")
    # Hessian rows by reverse-over-reverse: H[i][:, k] = grad(<grad_i s, e_k>).
    for i, x in enumerate(xs):
        for k in range(x.size):
            e = np.zeros(x.size, x.dtype)
            e[k] = 1
            e = e.reshape(x.shape)
            row = funcad.grad(lambda *a: fnp.sum(funcad.grad(scalar, i)(*a) * e), an)(*xs)
            for j, r in enumerate(row):
                want = np.asarray(j_hess[i][j]).reshape(x.shape + xs[j].shape)[np.unravel_index(k, x.shape)]
                close(r, want, f"hessian block ({i}, {j}) row {k}")


JAX_ROWS = [s for s in DIFF_ROWS if s.jax_fun is not None]


@pytest.mark.parametrize("spec", [s for s in JAX_ROWS if s.name.startswith("lax_") or s.name in _FAST_JAX],
                         ids=lambda s: s.name)
def test_matches_jax(spec):
    _compare_with_jax(spec)


@pytest.mark.slow
@pytest.mark.parametrize("spec", [s for s in JAX_ROWS if not (s.name.startswith("lax_") or s.name in _FAST_JAX)],
                         ids=lambda s: s.name)
def test_matches_jax_full_table(spec):
    _compare_with_jax(spec)


# --------------------------------------------------------------- semantics ----

def test_jvp_symbolic_zero_and_float0_tangents():
    # An output that does not depend on the input gets a zero tangent of its dtype.
    y, t = funcad.jvp(lambda x: (x * 0 + 1.0, fnp.ones(3)), (2.0,), (1.0,))
    assert t[0] == 0.0 and np.array_equal(t[1], np.zeros(3))
    # Non-differentiable outputs: zeros for float outputs, float0 for int/bool outputs.
    _, (t_floor, t_cmp, t_arg) = funcad.jvp(
        lambda x: (fnp.floor(x), x > 0, fnp.argmax(x)), (np.array([0.5, 1.5]),), (np.ones(2),))
    assert np.array_equal(t_floor, np.zeros(2))
    assert t_cmp.dtype == float0 and t_cmp.shape == (2,)
    assert t_arg.dtype == float0 and t_arg.shape == ()
    # Integer inputs take float0 tangents and contribute nothing.
    y, t = funcad.jvp(lambda x, n: x * n, (1.5, np.int64(3)), (2.0, np.zeros((), float0)))
    assert (y, t) == (4.5, 6.0)


def test_jvp_output_tangent_dtype_follows_primal():
    x = np.array([1.0, 2.0], np.float32)
    y, t = funcad.jvp(lambda x: fnp.sin(x) * 2, (x,), (np.ones(2, np.float32),))
    assert y.dtype == np.float32 and t.dtype == np.float32
    np.testing.assert_allclose(t, 2 * np.cos(x), rtol=1e-6)


def test_linearize_matches_jvp_and_is_reusable():
    f = lambda x: fnp.sin(x) * fnp.exp(x)  # noqa: E731
    x = np.array([0.1, 0.7, -0.3])
    y, f_jvp = funcad.linearize(f, x)
    np.testing.assert_allclose(y, np.sin(x) * np.exp(x))
    for t in (np.ones(3), np.array([1.0, -2.0, 0.5])):
        np.testing.assert_allclose(f_jvp(t), funcad.jvp(f, (x,), (t,))[1], rtol=1e-14)
    # The linear map holds only tangent operations; the primal work was done once.
    names = {e.prim.name for e in f_jvp.jaxpr.eqns}
    assert names <= {"mul", "add"}, names


def test_vjp_pytrees_and_int_inputs():
    def f(p, n):
        return {"out": p["w"] * p["b"][0] * n, "aux": p["b"][1]}
    p = {"w": np.array([1.0, 2.0]), "b": (3.0, 4.0)}
    y, pullback = funcad.vjp(f, p, np.int64(2))
    ct_p, ct_n = pullback({"out": np.array([1.0, 1.0]), "aux": 1.0})
    np.testing.assert_allclose(ct_p["w"], [6.0, 6.0])
    assert ct_p["b"][0] == 6.0 and ct_p["b"][1] == 1.0
    assert ct_n.dtype == float0


def test_linear_transpose_of_a_linear_function():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    f = lambda x: a @ x + 2.0 * x[::-1][:2]  # noqa: E731
    f_t = funcad.linear_transpose(f, np.zeros(3))
    ct = np.array([1.0, -1.0])
    m = np.stack([f(e) for e in np.eye(3)], axis=1)  # the matrix of f
    np.testing.assert_allclose(f_t(ct)[0], m.T @ ct)


def test_grad_argnums_has_aux_value_and_grad():
    f = lambda x, y, z: (x * y ** 2 + z, {"y": y})  # noqa: E731
    g, aux = funcad.grad(f, argnums=(0, 2), has_aux=True)(2.0, 3.0, 1.0)
    assert g == (9.0, 1.0) and aux == {"y": 3.0}
    assert funcad.grad(lambda x, y: x * y ** 2, argnums=1)(2.0, 3.0) == 12.0
    assert funcad.grad(lambda x, y: x * y ** 2, argnums=-1)(2.0, 3.0) == 12.0
    (v, aux), g = funcad.value_and_grad(f, argnums=1, has_aux=True)(2.0, 3.0, 1.0)
    assert (v, aux, g) == (19.0, {"y": 3.0}, 12.0)
    v, g = funcad.value_and_grad(lambda d: d["a"] * d["b"])({"a": 2.0, "b": 5.0})
    assert v == 10.0 and g == {"a": 5.0, "b": 2.0}


def test_grad_holomorphic_and_allow_int():
    z = np.complex128(1.0 + 2.0j)
    g = funcad.grad(lambda z: fnp.sin(z) * z, holomorphic=True)(z)
    np.testing.assert_allclose(g, np.cos(z) * z + np.sin(z), rtol=1e-14)
    gx, gn = funcad.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, np.int64(3))
    assert gx == 3.0 and gn.dtype == float0
    with pytest.raises(FuncadTypeError, match="holomorphic=True"):
        funcad.grad(lambda z: z * z)(z)
    with pytest.raises(FuncadTypeError, match="complex inputs"):
        funcad.grad(lambda x: x * x, holomorphic=True)(1.0)


def test_python_control_flow_under_eager_differentiation():
    def f(x):
        y = x
        while y < 10.0:      # concrete under grad/jvp, as the primal is known
            y = y * 2.0
        if y > 15.0:
            return fnp.sin(y)
        return y * y
    # At x=3: y = 4x = 12, f = 16x²; at x=4: y = 4x = 16, f = sin(4x).
    assert funcad.grad(f)(3.0) == pytest.approx(96.0)
    assert funcad.grad(f)(4.0) == pytest.approx(4 * np.cos(16.0))
    assert funcad.jvp(f, (3.0,), (1.0,))[1] == pytest.approx(96.0)
    assert funcad.grad(funcad.grad(f))(3.0) == pytest.approx(32.0)
    with pytest.raises(ConcretizationError, match="cond"):
        funcad.make_jaxpr(funcad.grad(f))(3.0)


def test_stop_gradient():
    f = lambda x: x * funcad.stop_gradient(x) + funcad.stop_gradient(x ** 3)  # noqa: E731
    assert funcad.grad(f)(3.0) == 3.0
    assert funcad.grad(funcad.grad(f))(3.0) == 0.0
    assert funcad.jvp(f, (3.0,), (1.0,)) == (36.0, 3.0)
    y, pullback = funcad.vjp(lambda x: funcad.stop_gradient(x) * 2.0, np.ones(2))
    np.testing.assert_array_equal(pullback(np.ones(2))[0], np.zeros(2))


def test_stop_gradient_of_a_pytree_matches_jax():
    # diffrax passes a tuple (a flag and an array) to lax.stop_gradient
    tree = {"a": 2.0, "b": (np.array([True]), None)}
    got = funcad.lax.stop_gradient(tree)
    want = jax.lax.stop_gradient(tree)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    f = lambda m, lax: lambda x: lax.stop_gradient({"a": x, "b": (x > 0, None)})["a"] * x  # noqa: E731
    assert funcad.grad(f(funcad, funcad.lax))(3.0) == jax.grad(f(jax, jax.lax))(3.0) == 3.0
    assert funcad.jit(funcad.grad(f(funcad, funcad.lax)))(3.0) == 3.0


def test_grad_of_closure_over_outer_tracer():
    # The inner function closes over x, a value traced by the outer grad.
    f = lambda x: funcad.grad(lambda y: fnp.sin(x * y))(1.0)  # noqa: E731
    x = 0.7
    np.testing.assert_allclose(funcad.grad(f)(x), np.cos(x) - x * np.sin(x), rtol=1e-14)


def test_grad_jaxpr_has_no_primal_recomputation():
    # Under make_jaxpr, grad stages the primal once and then the linear part.
    jaxpr = funcad.make_jaxpr(funcad.grad(lambda x: fnp.sin(fnp.sin(x))))(1.0)
    names = [e.prim.name for e in jaxpr.eqns]
    assert names.count("sin") == 2 and names.count("cos") == 2


_X_TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
_Y_TIES = np.array([[1.0, 0.0, 3.0], [5.0, 2.0, 1.0]])
# At kinks, ties and zeros the derivative is a convention; these follow JAX's.
_KINKS = {
    "max_axis_ties": lambda np_: lambda x, y: np_.sum(np_.max(x, axis=1) * np.array([1.0, 2.0])),
    "min_all_ties": lambda np_: lambda x, y: np_.min(x),
    "maximum_ties": lambda np_: lambda x, y: np_.sum(np_.maximum(x, y)),
    "minimum_ties": lambda np_: lambda x, y: np_.sum(np_.minimum(x, y) * y),
    "abs_at_0": lambda np_: lambda x, y: np_.sum(np_.abs(x - 2.0)),
    "clip_at_bounds": lambda np_: lambda x, y: np_.sum(np_.clip(x, 2.0, 3.0)),
    "square_at_0": lambda np_: lambda x, y: np_.sum((x - 1.0) ** 2.0),
    "pow_of_0": lambda np_: lambda x, y: np_.sum(np_.power(x - 1.0, y)),
    "norm_of_0": lambda np_: lambda x, y: np_.linalg.norm(x * 0.0),
    "sort_ties": lambda np_: lambda x, y: np_.sum(np_.sort(x, axis=1) * np.arange(3.0)),
    "prod_with_0": lambda np_: lambda x, y: np_.prod(x - 2.0),
    "where_unsafe_branch": lambda np_: lambda x, y: np_.sum(np_.where(x > 1.5, np_.sqrt(x - 1.5), 0.0)),
}


def test_nonsmooth_points_follow_jax_conventions():
    want = jax.jit(lambda x, y: {k: jax.grad(f(jnp), (0, 1))(x, y) for k, f in _KINKS.items()})(_X_TIES, _Y_TIES)
    for name, f in _KINKS.items():
        with np.errstate(divide="ignore", invalid="ignore"):
            got = funcad.grad(f(fnp), (0, 1))(_X_TIES, _Y_TIES)
        for g, w in zip(got, want[name]):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-14, err_msg=name)


# ------------------------------------------------ linear primitives' transposes ----

def _dot(x, y):
    # Re Σ x·y: funcad's transposes, like JAX's, never conjugate, so with complex values this
    # real part of the bilinear pairing is the identity that holds.
    return sum(float(np.real(np.sum(np.asarray(a) * np.asarray(b)))) for a, b in zip(x, y))


def _normal(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


_X23 = np.arange(6.0).reshape(2, 3) / 3 - 1
_LINEAR = {
    "neg": (lax.neg, [_X23]),
    "add": (lambda x, y: lax.add(x, y), [_X23, np.ones((2, 1))]),
    "sub": (lambda x, y: lax.sub(x, y), [_X23, np.ones(3)]),
    "mul": (lambda y: lax.mul(_X23, y), [np.ones(3)]),
    "div": (lambda x: lax.div(x, _X23 + 2.0), [_X23]),
    "convert_element_type": (lambda x: lax.convert_element_type(x, np.float32), [_X23]),
    "reduce_sum": (lambda x: lax.reduce_sum(x, (0,)), [_X23]),
    "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)), [np.ones((2, 1))]),
    "reshape": (lambda x: lax.reshape(x, (3, 2)), [_X23]),
    "transpose": (lambda x: lax.transpose(x, (1, 0)), [_X23]),
    "squeeze": (lambda x: lax.squeeze(x, (1,)), [np.ones((2, 1, 3))]),
    "rev": (lambda x: lax.rev(x, (0, 1)), [_X23]),
    "slice": (lambda x: lax.slice(x, (0, 1), (2, 3), (1, 2)), [_X23]),
    "pad": (lambda x, v: lax.pad(x, v, ((1, -1, 1), (0, 2, 0))), [_X23, np.array(0.5)]),
    "concatenate": (lambda x, y: lax.concatenate([x, y, x], 1), [_X23, np.ones((2, 2))]),
    "cumsum": (lambda x: lax.cumsum(x, 1, reverse=True), [_X23]),
    "dot_general": (lambda x: lax.dot_general(x, np.ones((3, 2)), (((1,), (0,)), ((), ()))), [_X23]),
    "dot_general/rhs": (lambda y: lax.dot_general(np.ones((2, 2, 4)), y, (((0, 1), (1, 0)), ((), ()))),
                        [np.ones((2, 2, 3))]),
    "dot_general/batch": (lambda y: lax.dot_general(np.ones((2, 4, 3)), y, (((2,), (1,)), ((0,), (0,)))),
                          [np.ones((2, 3, 5))]),
    "mul/lhs": (lambda x: lax.mul(x, _X23), [np.ones((2, 1))]),
    "dynamic_slice": (lambda x: lax.dynamic_slice(x, (np.int64(1), np.int64(1)), (1, 2)), [_X23]),
    "dynamic_update_slice": (lambda x, u: lax.dynamic_update_slice(x, u, (np.int64(0), np.int64(1))),
                             [_X23, np.ones((2, 1))]),
    "gather": (lambda x: lax.gather(x, np.array([[1], [0], [1]])), [_X23]),
    "scatter_add": (lambda x, u: lax.scatter_add(x, np.array([[1], [1], [5], [-1]]), u), [_X23, np.ones((4, 3))]),
    "gather/clamped": (lambda x: lax.gather(x, np.array([[[1, 7]], [[-2, 0]]])), [_X23]),
    "select_n": (lambda x, y: lax.select_n(_X23 > 0, x, y), [_X23, np.ones(3)]),
    "real": (lax.real, [_X23 * 1j]),
    "imag": (lax.imag, [_X23 * 1j]),
    "conj": (lax.conj, [_X23 * 1j]),
    "conj/of-real": (lax.conj, [_X23]),
    "complex": (lax.complex, [_X23, _X23]),
    "conv_general_dilated": (lambda x: lax.conv_general_dilated(x, _K1, (2,), [(1, 2)], (1,), (2,),
                                                                feature_group_count=2),
                             [np.ones((2, 4, 6))]),
    "conv_general_dilated/rhs": (lambda k: lax.conv_general_dilated(_X1, k, (2,), [(1, 2)], (1,), (2,),
                                                                    feature_group_count=2),
                                 [np.ones((4, 2, 2))]),
    "conv_general_dilated/batch_groups": (
        lambda x: lax.conv_general_dilated(x, _K2, (1, 2), [(0, 1), (-1, 2)], (2, 1), None,
                                           ("NHWC", "OHWI", "CNWH"), batch_group_count=2),
        [np.ones((4, 3, 5, 2))]),
    "conv_general_dilated/batch_groups_rhs": (
        lambda k: lax.conv_general_dilated(_X2, k, (1, 2), [(0, 1), (-1, 2)], (2, 1), None,
                                           ("NHWC", "OHWI", "CNWH"), batch_group_count=2),
        [np.ones((4, 2, 2, 2))]),
}


_K1, _X1 = (np.random.default_rng(1).standard_normal(s) for s in [(4, 2, 2), (2, 4, 6)])
_K2, _X2 = (np.random.default_rng(2).standard_normal(s) for s in [(4, 2, 2, 2), (4, 3, 5, 2)])


@pytest.mark.parametrize("name", sorted(_LINEAR))
def test_transpose_rule(name):
    """<f(x), c> = <x, fᵀ(c)> for random x, c, with fᵀ from funcad.linear_transpose.

    (mul and div are linear in the operand taken here; the bilinear primitives'
    other operands are covered by the op-table gradient checks.)
    """
    fun, args = _LINEAR[name]
    rng = np.random.default_rng(0)
    xs = [_normal(rng, np.shape(a), np.asarray(a).dtype) for a in args]
    y = fun(*xs)
    c = _normal(rng, np.shape(y), np.asarray(y).dtype)
    cts = funcad.linear_transpose(fun, *args)(c)
    assert [np.shape(t) for t in cts] == [np.shape(x) for x in xs]
    np.testing.assert_allclose(_dot([y], [c]), _dot(xs, cts), rtol=1e-6 if y.dtype == np.float32 else 1e-12)


def test_every_primitive_transpose_rule_is_tested():
    from funcad.core.trace import transpose_rules
    from funcad.primitives import convolution, elementwise, indexing, linalg, reductions, structural
    ours = {getattr(m, n).name for m in (elementwise, structural, reductions, linalg, indexing, convolution)
            for n in dir(m) if n.endswith("_p")}
    with_rule = {p.name for p in transpose_rules if p.name in ours}
    tested = {k.split("/")[0] for k in _LINEAR}
    assert with_rule <= tested, with_rule - tested


# ------------------------------------------------------------------ errors ----

def test_grad_of_non_scalar_output_explains():
    with pytest.raises(FuncadTypeError) as e:
        funcad.grad(lambda x: x * 2)(np.ones((2, 3)))
    msg = str(e.value)
    assert "f64[2,3]" in msg and ".sum()" in msg and "jacrev" in msg


def test_grad_of_integer_input_explains():
    with pytest.raises(FuncadTypeError) as e:
        funcad.grad(lambda x: x * 2.0)(3)
    msg = str(e.value)
    assert "i64[]" in msg and "float" in msg and "allow_int" in msg


def test_missing_rules_name_primitive_and_transform():
    from funcad.primitives._base import new_primitive
    from funcad.core.trace import jvp_rules
    nojvp_p = new_primitive("my_nojvp", lambda x: x, lambda x: x)
    with pytest.raises(MissingRuleError, match=r"my_nojvp.*jvp"):
        funcad.grad(lambda x: nojvp_p.bind(x))(1.0)
    lin_p = new_primitive("my_notranspose", lambda x: x, lambda x: x)
    jvp_rules[lin_p] = lambda p, t: (lin_p.bind(*p), lin_p.bind(*t))
    assert funcad.jvp(lambda x: lin_p.bind(x), (1.0,), (2.0,)) == (1.0, 2.0)
    with pytest.raises(MissingRuleError, match=r"my_notranspose.*transpose"):
        funcad.grad(lambda x: lin_p.bind(x))(1.0)


def test_jvp_tangent_mismatch_errors():
    f = lambda x, y: x * y  # noqa: E731
    with pytest.raises(FuncadError, match="tree"):
        funcad.jvp(f, (1.0, 2.0), (1.0,))
    with pytest.raises(FuncadTypeError, match=r"f64\[3\].*f64\[2\]"):
        funcad.jvp(fnp.sin, (np.ones(3),), (np.ones(2),))
    with pytest.raises(FuncadTypeError, match=r"f64\[3\].*f32\[3\]"):
        funcad.jvp(fnp.sin, (np.ones(3),), (np.ones(3, np.float32),))
    with pytest.raises(FuncadTypeError, match="float0"):
        funcad.jvp(lambda n: n * 2, (np.int64(3),), (1.0,))
    with pytest.raises(FuncadTypeError, match="tuples or lists"):
        funcad.jvp(fnp.sin, 1.0, 1.0)


def test_vjp_cotangent_shape_error():
    _, pullback = funcad.vjp(fnp.sin, np.ones(3))
    with pytest.raises(FuncadTypeError, match=r"f64\[3\].*f64\[2\]"):
        pullback(np.ones(2))


def test_div_denominator_tangent_rounds_as_jaxs():
    # JAX's rule is -t * x * y**-2; (x / y) / y differs in the last bit, which an MCMC
    # chain started from that gradient (numpyro's NUTS init) turns into other samples.
    x = np.linspace(-3.0, 5.0, 41).astype(np.float32)
    y = np.linspace(0.3, 7.0, 41).astype(np.float32)
    f = lambda m: lambda y: m.sum(x / y)
    with jax.enable_x64(False), funcad.enable_x64(False):
        want = np.asarray(jax.grad(f(jnp))(y))
        for got in (funcad.grad(f(fnp))(y), funcad.jit(funcad.grad(f(fnp)))(y)):
            np.testing.assert_array_equal(np.asarray(got), want)
        np.testing.assert_array_equal(np.asarray(funcad.jvp(lambda y: x / y, (y,), (np.ones_like(y),))[1]),
                                      np.asarray(jax.jvp(lambda y: x / y, (y,), (jnp.ones_like(y),))[1]))
