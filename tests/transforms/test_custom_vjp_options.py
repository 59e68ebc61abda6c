"""custom_vjp's `defvjp(..., symbolic_zeros=True)` and custom_jvp's symbolic zeros and
`defjvps`, checked against JAX on a corpus: what the rules are told (which inputs are
perturbed, which cotangents and tangents are symbolic zeros) and the numbers they give,
eagerly, under jit (grad of jit traces the staged rules per pattern), vmap, has_aux,
nesting, integer inputs and closed-over values."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core.errors import FuncadValueError
import funcad.custom_derivatives as fcd

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
import jax.custom_derivatives as jcd  # noqa: E402

LIBS = {"funcad": (funcad, fnp, fcd), "jax": (jax, jnp, jcd)}


def _kind(v, cd):
    return "Z" if isinstance(v, cd.SymbolicZero) else "a"


def _vjp_defs(lib, log):
    """f(x, y, n) -> (x*y, x+y) with a logging symbolic_zeros custom_vjp; n is an int."""
    m, np_, cd = LIBS[lib]

    @m.custom_vjp
    def f(x, y, n):
        return x * y, x + y

    def fwd(x, y, n):
        assert all(type(v) is cd.CustomVJPPrimal for v in (x, y, n))
        log.append(("fwd", x.perturbed, y.perturbed, n.perturbed))
        xv, yv, nv = cd.custom_vjp_primal_tree_values((x, y, n))
        return f(xv, yv, nv), (xv, yv)

    def bwd(res, g):
        log.append(("bwd",) + tuple(_kind(v, cd) for v in g))
        x, y = res
        g0, g1 = (0.0 if isinstance(v, cd.SymbolicZero) else v for v in g)
        # a SymbolicZero cotangent for the int input, None being the other spelling
        return (2.0 * g0 * y + g1, g0 * x + 3.0 * g1, cd.SymbolicZero.from_primal_value(4))

    f.defvjp(fwd, bwd, symbolic_zeros=True)

    @m.custom_vjp
    def outer(x, y):  # its fwd calls f: a custom_vjp nested in a symbolic_zeros fwd
        return f(x, y, 1)[0]

    def outer_fwd(x, y):
        log.append(("outer_fwd", x.perturbed, y.perturbed))
        return f(x.value, y.value, 1)[0], (x.value, y.value)

    outer.defvjp(outer_fwd, lambda r, g: (g * r[1], None), symbolic_zeros=True)
    return m, np_, f, outer


def _vjp_case(name):
    def run(lib):
        log: list = []
        m, np_, f, outer = _vjp_defs(lib, log)
        x, y, n = 2.0, 3.0, 4
        v = np_.array([1.0, 2.0, 3.0])
        out = {
            "grad0": lambda: m.grad(lambda x, y: f(x, y, n)[0])(x, y),
            "grad1": lambda: m.grad(lambda x, y: f(x, y, n)[0], 1)(x, y),
            "grad01_out1": lambda: m.grad(lambda x, y: f(x, y, n)[1], (0, 1))(x, y),
            "jit_grad": lambda: m.jit(m.grad(lambda x, y: f(x, y, n)[0]))(x, y),
            # one jitted function, differentiated at two patterns: traced per pattern
            "grad_jit_both": lambda: (lambda g: (m.grad(g)(x, y), m.grad(g, 1)(x, y)))(
                m.jit(lambda x, y: f(x, y, n)[0])),
            "vjp_explicit_zero_ct": lambda: m.vjp(lambda x, y: f(x, y, n), x, y)[1]((1.0, 0.0)),
            "vjp_has_aux": lambda: m.vjp(lambda x, y: (f(x, y, n)[0], f(x, y, n)[1]), x, y,
                                         has_aux=True)[1](1.0),
            "vmap_grad": lambda: m.vmap(m.grad(lambda x, y: f(x, y, n)[0]))(v, v + 1.0),
            "grad_vmap": lambda: m.grad(lambda x, y: m.vmap(lambda a: f(a, y, n)[0])(x).sum())(v, 2.0),
            "closed_over": lambda: m.grad(lambda x: f(x, 3.0, n)[0] * f(2.0, x, n)[1])(x),
            "int_input": lambda: m.vjp(lambda x, n: f(x, 1.0, n)[0], x, n)[1](1.0)[0],
            "nested": lambda: m.grad(lambda x, y: outer(x, y) * f(x, y, n)[1], 1)(x, y),
            "second_order": lambda: m.grad(m.grad(lambda x, y: f(x, y, n)[0] ** 2))(x, y),
            "undifferentiated": lambda: f(x, y, n),
        }[name]()
        return log, out
    return run


VJP_CASES = ["grad0", "grad1", "grad01_out1", "jit_grad", "grad_jit_both", "vjp_explicit_zero_ct",
             "vjp_has_aux", "vmap_grad", "grad_vmap", "closed_over", "int_input", "nested",
             "second_order", "undifferentiated"]


def _close(a, b):
    fa, ta = funcad.tree_util.tree_flatten(a)
    fb, tb = jax.tree_util.tree_flatten(b)
    assert len(fa) == len(fb), (a, b)
    for u, w in zip(fa, fb):
        np.testing.assert_allclose(np.asarray(u), np.asarray(w), rtol=1e-12)


@pytest.mark.parametrize("case", VJP_CASES)
def test_custom_vjp_symbolic_zeros_matches_jax(case):
    f_log, f_out = _vjp_case(case)("funcad")
    j_log, j_out = _vjp_case(case)("jax")
    assert f_log == j_log
    _close(f_out, j_out)


def test_symbolic_zeros_rules_see_the_pattern():
    log: list = []
    _, _, f, _ = _vjp_defs("funcad", log)
    g = funcad.grad(lambda x, y: f(x, y, 4)[0], 1)(2.0, 3.0)
    # fwd told only y is perturbed; bwd told the second output's cotangent is zero
    assert log == [("fwd", False, True, False), ("bwd", "a", "Z")]
    assert float(g) == 2.0


def test_bwd_symbolic_zero_of_wrong_type_is_an_error():
    f = funcad.custom_vjp(lambda x: 2.0 * x)
    f.defvjp(lambda x: (2.0 * x.value, None),
             lambda r, g: (fcd.SymbolicZero.from_primal_value(fnp.ones(3)),), symbolic_zeros=True)
    with pytest.raises(FuncadValueError, match="SymbolicZero of type f64\\[3\\].*tangent type is f64\\[\\]"):
        funcad.grad(f)(1.0)


def test_bwd_symbolic_zero_is_a_zero_cotangent():
    f = funcad.custom_vjp(lambda x, y: x * y)
    f.defvjp(lambda x, y: (x.value * y.value, y.value),
             lambda r, g: (g * r, fcd.SymbolicZero.from_primal_value(1.0)), symbolic_zeros=True)
    assert funcad.grad(f, (0, 1))(2.0, 3.0) == (3.0, 0.0)


def test_custom_vjp_primal_tree_values():
    P = fcd.CustomVJPPrimal
    tree = {"a": P(1.0, True), "b": [P(2, False)]}
    assert fcd.custom_vjp_primal_tree_values(tree) == {"a": 1.0, "b": [2]}
    with pytest.raises(TypeError, match="unexpected leaf type"):
        fcd.custom_vjp_primal_tree_values((P(1.0, True), 2.0))


def test_pytree_inputs_get_one_primal_record_per_leaf():
    seen = []

    @funcad.custom_vjp
    def f(p):
        return p["a"] * p["b"][0]

    def fwd(p):
        seen.append(funcad.tree_util.tree_map(lambda v: v.perturbed, p))
        p = fcd.custom_vjp_primal_tree_values(p)
        return f(p), p

    f.defvjp(fwd, lambda p, g: ({"a": g * p["b"][0], "b": [g * p["a"]]},), symbolic_zeros=True)
    g = funcad.grad(lambda a, b: f({"a": a, "b": [b]}))(2.0, 5.0)
    assert seen == [{"a": True, "b": [False]}] and float(g) == 5.0


def test_nondiff_argnames():
    @funcad.custom_vjp
    def f(scale, x):
        return scale * x

    f2 = funcad.custom_vjp(f.fun, nondiff_argnames=("scale",))
    assert f2.nondiff_argnums == (0,)
    f2.defvjp(lambda s, x: (s * x, None), lambda s, r, g: (10.0 * s * g,))
    assert float(funcad.grad(f2, 1)(2.0, 1.0)) == 20.0
    h = funcad.custom_jvp(lambda x, k: x * k, nondiff_argnames="k")
    h.defjvp(lambda k, p, t: (h(p[0], k), 7.0 * t[0]))
    assert h.nondiff_argnums == (1,) and float(funcad.grad(h)(1.0, 3)) == 7.0


# --------------------------------------------------------------- custom_jvp ----

def _jvp_case(lib, name):
    m, np_, cd = LIBS[lib]
    log: list = []

    @m.custom_jvp
    def f(x, y, n):
        return x * y, x + y

    def f_jvp(p, t):
        x, y, n = p
        log.append(tuple(_kind(v, cd) for v in t))
        tx, ty = (0.0 if isinstance(v, cd.SymbolicZero) else v for v in t[:2])
        return f(x, y, n), (2.0 * tx * y + x * ty, tx + ty)

    f.defjvp(f_jvp, symbolic_zeros=True)
    g = m.custom_jvp(lambda x, y: x * y)
    g.defjvps(lambda t, ans, x, y: (log.append("g0"), 3.0 * t * y)[1], None)
    x, y, n = 2.0, 3.0, 4
    v = np_.array([1.0, 2.0])
    f0 = np.zeros((), jax.dtypes.float0)
    out = {
        "grad0": lambda: m.grad(lambda x, y: f(x, y, n)[0])(x, y),
        "grad1": lambda: m.grad(lambda x, y: f(x, y, n)[0], 1)(x, y),
        "jvp": lambda: m.jvp(lambda x, y: f(x, y, n), (x, y), (1.0, 0.0)),
        "jvp_int": lambda: m.jvp(lambda x, n: f(x, 1.0, n), (x, n), (1.0, f0)),
        "grad_jit1": lambda: m.grad(m.jit(lambda x, y: f(x, y, n)[0]), 1)(x, y),
        "jit_grad1": lambda: m.jit(m.grad(lambda x, y: f(x, y, n)[0], 1))(x, y),
        "vmap_grad": lambda: m.vmap(m.grad(lambda x, y: f(x, y, n)[0]))(v, v),
        "hessian": lambda: m.hessian(lambda x, y: f(x, y, n)[0])(x, y),
        "closed_over": lambda: m.grad(lambda x: f(x, 3.0, n)[0] * f(2.0, x, n)[1])(x),
        "defjvps_grad0": lambda: m.grad(g)(x, y),
        "defjvps_grad1": lambda: m.grad(g, 1)(x, y),
        "defjvps_jvp": lambda: m.jvp(g, (x, y), (1.0, 1.0)),
        "defjvps_jit": lambda: m.grad(m.jit(g))(x, y),
    }[name]()
    return log, out


JVP_CASES = ["grad0", "grad1", "jvp", "jvp_int", "grad_jit1", "jit_grad1", "vmap_grad", "hessian",
             "closed_over", "defjvps_grad0", "defjvps_grad1", "defjvps_jvp", "defjvps_jit"]


@pytest.mark.parametrize("case", JVP_CASES)
def test_custom_jvp_symbolic_zeros_matches_jax(case):
    f_log, f_out = _jvp_case("funcad", case)
    j_log, j_out = _jvp_case("jax", case)
    assert f_log == j_log
    _close(f_out, j_out)
