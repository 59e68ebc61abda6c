"""Primitives defined by a library through the extension API (funcad.extend,
funcad.interpreters): the same source runs on JAX's modules and on funcad's, and
the two agree eagerly and under jit, grad, vmap and their compositions."""
from types import SimpleNamespace

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
import jax
import jax.numpy as jnp
from funcad.core.errors import UnsupportedError

import funcad.extend.core as f_core
import funcad.interpreters.ad as f_ad
import funcad.interpreters.batching as f_batching
import funcad.interpreters.mlir as f_mlir
import jax.extend.core as j_core
import jax.interpreters.ad as j_ad
import jax.interpreters.batching as j_batching
import jax.interpreters.mlir as j_mlir

FUNCAD = SimpleNamespace(api=funcad, np=fnp, core=f_core, ad=f_ad, batching=f_batching, mlir=f_mlir,
                         ShapedArray=funcad.core.ShapedArray)
JAX = SimpleNamespace(api=jax, np=jnp, core=j_core, ad=j_ad, batching=j_batching, mlir=j_mlir,
                      ShapedArray=jax.core.ShapedArray)


def define_multiply_add(m):
    """JAX's "How primitives work" tutorial, written once against either library."""
    p = m.core.Primitive("multiply_add")

    def prim(x, y, z):
        return p.bind(x, y, z)

    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    p.def_abstract_eval(lambda xs, ys, zs: m.ShapedArray(xs.shape, xs.dtype))
    m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x, y, z: x * y + z, multiple_results=False))

    def jvp(arg_values, arg_tangents):
        x, y, z = arg_values
        xt, yt, zt = arg_tangents

        def make_zero(t):
            return m.np.zeros_like(x) if type(t) is m.ad.Zero else t
        return prim(x, y, z), prim(make_zero(xt), y, prim(x, make_zero(yt), make_zero(zt)))
    m.ad.primitive_jvps[p] = jvp

    def transpose(ct, x, y, z):
        if not m.ad.is_undefined_primal(x):
            assert m.ad.is_undefined_primal(y)
            ct_y = m.ad.Zero(y.aval) if type(ct) is m.ad.Zero else prim(x, ct, m.np.zeros_like(x))
            return None, ct_y, ct
        ct_x = m.ad.Zero(x.aval) if type(ct) is m.ad.Zero else prim(ct, y, m.np.zeros_like(y))
        return ct_x, None, ct
    m.ad.primitive_transposes[p] = transpose

    def batch(args, dims):
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        return prim(*[m.batching.bdim_at_front(a, d, size) for a, d in zip(args, dims)]), 0
    m.batching.primitive_batchers[p] = batch
    return prim


def define_sincos(m):
    """A primitive with two results whose rules use defjvp-style helpers."""
    p = m.core.Primitive("sincos")
    p.multiple_results = True
    p.def_impl(lambda x: [np.sin(x), np.cos(x)])
    p.def_abstract_eval(lambda a: [m.ShapedArray(a.shape, a.dtype)] * 2)
    m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x: [m.np.sin(x), m.np.cos(x)],
                                                 multiple_results=True))

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        s, c = p.bind(x)
        if type(t) is m.ad.Zero:
            return [s, c], [m.ad.Zero.from_primal_value(s), m.ad.Zero.from_primal_value(c)]
        return [s, c], [c * t, -s * t]
    m.ad.primitive_jvps[p] = jvp
    m.batching.primitive_batchers[p] = lambda args, dims: (p.bind(*args), [dims[0]] * 2)
    return lambda x: p.bind(x)


def define_scale(m):
    """A linear primitive: deflinear2 and a broadcasting batcher."""
    p = m.core.Primitive("scale_add")
    p.def_impl(lambda x, y, *, k: k * x + y)
    p.def_abstract_eval(lambda x, y, *, k: m.ShapedArray(x.shape, x.dtype))
    m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x, y, *, k: k * x + y, multiple_results=False))
    m.ad.deflinear2(p, lambda ct, x, y, *, k: [k * ct if m.ad.is_undefined_primal(x) else None,
                                               ct if m.ad.is_undefined_primal(y) else None])
    m.batching.defbroadcasting(p)
    return lambda x, y, k=3.0: p.bind(x, y, k=k)


def define_square(m):
    """defjvp with a rule per input."""
    p = m.core.Primitive("my_square")
    p.def_impl(lambda x: x * x)
    p.def_abstract_eval(lambda x: m.ShapedArray(x.shape, x.dtype))
    m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x: x * x, multiple_results=False))
    m.ad.defjvp(p, lambda g, x: 2 * x * g)
    m.batching.defvectorized(p)
    return lambda x: p.bind(x)


MODS = {"funcad": FUNCAD, "jax": JAX}
DEFS = {lib: {name: d(m) for name, d in [("multiply_add", define_multiply_add), ("sincos", define_sincos),
                                          ("scale", define_scale), ("square", define_square)]}
        for lib, m in MODS.items()}

X = np.array([0.5, -1.25, 2.0], np.float32)
Y = np.array([1.5, 0.25, -0.75], np.float32)


# programs over the library primitives: (name, f(m, prims, x, y) -> scalar-or-array)
PROGRAMS = {
    "multiply_add": lambda m, p, x, y: p["multiply_add"](x, x, y),
    "sincos": lambda m, p, x, y: p["sincos"](x)[0] * p["sincos"](y)[1],
    "scale": lambda m, p, x, y: p["scale"](x, y) * x,
    "square": lambda m, p, x, y: p["square"](p["multiply_add"](x, x, y)),
}


def _run(lib: str, program: str, how: str):
    m, prims = MODS[lib], DEFS[lib]
    f = lambda x, y: PROGRAMS[program](m, prims, x, y)
    api = m.api
    if how == "eager":
        return f(X, Y)
    if how == "jit":
        return api.jit(f)(X, Y)
    if how == "grad":
        return api.grad(lambda x, y: f(x, y).sum(), argnums=(0, 1))(X, Y)
    if how == "jit_grad":
        return api.jit(api.grad(lambda x, y: f(x, y).sum()))(X, Y)
    if how == "vmap":
        return api.vmap(f)(np.stack([X, Y]), np.stack([Y, X]))
    if how == "vmap_in_axes":
        return api.vmap(f, in_axes=(1, None))(np.stack([X, Y], 1), Y)
    if how == "jit_grad_vmap":
        return api.jit(api.grad(lambda x: api.vmap(f, in_axes=(0, None))(x, Y).sum()))(np.stack([X, Y]))
    if how == "jvp":
        return api.jvp(f, (X, Y), (Y, X))
    raise ValueError(how)


HOWS = ["eager", "jit", "grad", "jit_grad", "vmap", "vmap_in_axes", "jit_grad_vmap", "jvp"]


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_library_primitive_matches_jax(program, how):
    got, want = _run("funcad", program, how), _run("jax", program, how)
    g_leaves, g_tree = funcad.tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert len(g_leaves) == len(w_leaves)
    for g, w in zip(g_leaves, w_leaves):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def test_library_primitive_shows_in_jaxpr_and_registers_in_funcads_tables():
    from funcad.core import trace
    jaxpr = funcad.make_jaxpr(DEFS["funcad"]["multiply_add"])(X, X, Y)
    assert [e.primitive.name for e in jaxpr.eqns] == ["multiply_add"]
    p = jaxpr.eqns[0].primitive
    assert isinstance(p, trace.Primitive)
    for table in (trace.impl_rules, trace.abstract_eval_rules, trace.jvp_rules, trace.transpose_rules,
                  trace.batch_rules, trace.lowering_rules):
        assert p in table
    # the tables hand back the rule as registered
    assert f_ad.primitive_jvps[p].__name__ == "jvp"
    assert f_batching.primitive_batchers[p].__name__ == "batch"


def test_second_order_through_library_primitive():
    def h(lib):
        m, sq = MODS[lib].api, DEFS[lib]["sincos"]
        return m.grad(m.grad(lambda x: sq(x)[0] * sq(x)[1]))(np.float32(0.3))
    np.testing.assert_allclose(h("funcad"), h("jax"), rtol=1e-6)


def test_funcads_own_rules_in_jax_conventions():
    """Reading a table for one of funcad's primitives gives a JAX-convention rule."""
    sin_p = f_core.primitives.sin_p
    x = np.float32(0.5)
    out, t = f_ad.primitive_jvps[sin_p]((x,), (np.float32(2.0),), accuracy=None)
    j_out, j_t = j_ad.primitive_jvps[j_core.primitives.sin_p]((x,), (np.float32(2.0),), accuracy=None)
    np.testing.assert_allclose([out, t], [j_out, j_t], rtol=1e-6)
    _, zero = f_ad.primitive_jvps[sin_p]((x,), (f_ad.Zero.from_primal_value(x),), accuracy=None)
    assert type(zero) is f_ad.Zero and zero.aval.shape == ()
    out, d = f_batching.primitive_batchers[sin_p]((np.ones((2, 3), np.float32),), (1,), accuracy=None)
    np.testing.assert_allclose(np.moveaxis(np.asarray(out), d, 0), np.sin(np.ones((3, 2))), rtol=1e-6)
    neg = f_ad.get_primitive_transpose(f_core.primitives.neg_p)
    (ct,) = neg(np.float32(2.0), f_ad.UndefinedPrimal(funcad.core.ShapedArray((), np.float32)))
    assert float(ct) == -2.0


def test_defbilinear_matches_jax():
    def define(m):
        p = m.core.Primitive("outer_mul")
        p.def_impl(lambda x, y: x * y)
        p.def_abstract_eval(lambda x, y: m.ShapedArray(x.shape, x.dtype))
        m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x, y: x * y, multiple_results=False))
        m.ad.defbilinear(p, lambda ct, x, y: ct * y, lambda ct, x, y: x * ct)
        m.batching.defbroadcasting(p)
        return m.api.jit(m.api.vmap(m.api.grad(lambda a, b: (p.bind(a, b) * a).sum(), argnums=(0, 1))))
    xs, ys = np.stack([X, Y]), np.stack([Y, X])
    for g, w in zip(define(FUNCAD)(xs, ys), define(JAX)(xs, ys)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_lowering_rule_with_mlir_builders_is_refused_when_lowered():
    # Registering is accepted (libraries do it at import); eager calls use the impl,
    # and only lowering the primitive with that rule is refused.
    p = f_core.Primitive("builder_rule")
    p.def_impl(lambda x: x + 1)
    p.def_abstract_eval(lambda x: x)

    def builder_rule(ctx, x):
        return [x]
    assert f_mlir.register_lowering(p, builder_rule) is builder_rule
    assert float(p.bind(np.float32(1))) == 2.0
    with pytest.raises(UnsupportedError, match="`builder_rule`.*lower_fun"):
        funcad.jit(p.bind)(np.float32(1))
    with pytest.raises(AttributeError, match="no MLIR builder API"):
        f_mlir.ir


def test_jvp_rule_never_sees_a_float0_tangent():
    # equinox's rules assert that a tangent's dtype is its primal's: an integer value's
    # float0 tangent is zero, so (as in JAX) it reaches no rule, also under jit.
    def define(m):
        p = m.core.Primitive("keep_first")
        p.def_impl(lambda x, y: x)
        p.def_abstract_eval(lambda x, y: x)
        m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x, y: x, multiple_results=False))

        def jvp(primals, tangents):
            (x, _), (tx, _) = primals, tangents
            assert type(tx) is m.ad.Zero or x.dtype == tx.dtype
            return p.bind(*primals), tx
        m.ad.primitive_jvps[p] = jvp
        return p
    fp, jp = define(FUNCAD), define(JAX)
    f0 = np.zeros(2, jax.dtypes.float0)
    xi, xf = np.array([1, 2], np.int32), np.array([1.5, 2.5], np.float32)
    for api, p in ((funcad, fp), (jax, jp)):
        # a staged custom_jvp with an integer output, evaluated under jvp (equinox's
        # filter_closure_convert does this): the output's float0 tangent is zero
        @api.custom_jvp
        def split(x):
            return x * 2, (x > 2).astype(np.int32)
        split.defjvp(lambda ps, ts: (split(*ps), (ts[0] * 2, np.zeros(2, jax.dtypes.float0))))
        closed = api.make_jaxpr(split)(xf)
        def g(x):
            y, k = api.core.eval_jaxpr(closed.jaxpr, closed.consts, x)
            return p.bind(y, y), p.bind(k, k)
        np.testing.assert_array_equal(api.jvp(g, (xf,), (xf,))[1][0], 2 * xf)
        np.testing.assert_array_equal(api.jvp(lambda x: p.bind(x, x), (xf,), (xf,))[1], xf)
        np.testing.assert_array_equal(api.jvp(api.jit(lambda x: p.bind(x, x) * 3), (xf,), (xf,))[1], 3 * xf)
        for f in (lambda x, i: (p.bind(x, x), p.bind(i, i)),
                  api.jit(lambda x, i: (p.bind(x, x), p.bind(i + 1, i)))):
            out, t = f(xf, xi), api.jvp(f, (xf, xi), (xf, f0))[1]
            np.testing.assert_array_equal(t[0], xf)
            assert t[1].dtype == jax.dtypes.float0 and out[1].dtype == np.int32


def test_platform_specific_lowering():
    p = f_core.Primitive("per_platform")
    p.def_impl(lambda x: x + 1)
    p.def_abstract_eval(lambda x: x)
    other = "cuda" if funcad.default_backend() == "cpu" else "cpu"
    f_mlir.register_lowering(p, f_mlir.lower_fun(lambda x: x + 100, multiple_results=False), platform=other)
    with pytest.raises(UnsupportedError, match="only for the platforms"):
        funcad.jit(p.bind)(np.float32(1))
    f_mlir.register_lowering(p, f_mlir.lower_fun(lambda x: x + 1, multiple_results=False))
    assert float(funcad.jit(p.bind)(np.float32(1))) == 2.0
    with pytest.raises(ValueError, match="unknown platform"):
        f_mlir.register_lowering(p, f_mlir.lower_fun(lambda x: x), platform="ipu")


def test_effectful_abstract_eval():
    for m in (FUNCAD, JAX):
        p = m.core.Primitive("effect_free")
        p.def_impl(lambda x: 2 * x)
        p.def_effectful_abstract_eval(lambda x: (x, m.core.no_effects))
        assert float(p.bind(np.float32(2))) == 4.0
        assert m.api.eval_shape(p.bind, np.ones(3, np.float32)).shape == (3,)
    p = f_core.Primitive("effectful")
    p.def_effectful_abstract_eval(lambda x: (x, {f_core.Effect()}))
    with pytest.raises(UnsupportedError, match="no effect system"):
        funcad.make_jaxpr(p.bind)(1.0)


def test_missing_rule_says_where_to_register_it():
    from funcad.core.errors import MissingRuleError
    p = f_core.Primitive("bare")
    with pytest.raises(MissingRuleError, match=r"`bare` has no NumPy implementation; .*def_impl"):
        p.bind(1.0)
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(MissingRuleError, match=r"`bare` has no jvp .*ad.primitive_jvps\[p\]"):
        funcad.grad(p.bind)(1.0)
    with pytest.raises(MissingRuleError, match=r"`bare` has no vmap .*batching.primitive_batchers"):
        funcad.vmap(p.bind)(np.ones(2))
    with pytest.raises(MissingRuleError, match=r"`bare` has no lowering rule.*mlir.lower_fun"):
        funcad.jit(p.bind)(1.0)
    f_ad.defjvp(p, lambda g, x: p.bind(g))  # the identity: linear, but no transpose rule given
    f_batching.defvectorized(p)
    with pytest.raises(MissingRuleError, match=r"`bare` has no transpose .*primitive_transposes"):
        funcad.grad(lambda x: p.bind(x) * 1.0)(1.0)


def _closed_call_program(m):
    """A closed_call bound directly, as libraries that rewrite jaxprs do."""
    prims = m.core.primitives
    body = m.api.make_jaxpr(lambda x, y: [m.np.sin(x) * y, x + y])(X, Y)
    f = lambda x, y: prims.closed_call_p.bind(x, y, call_jaxpr=body)[0].sum()
    called = prims.call_p.bind(m.lu.wrap_init(lambda x: [x * 2], debug_info=None), X) \
        if m is FUNCAD else [X * 2]
    return [f(X, Y), m.api.jit(f)(X, Y), *m.api.grad(f, argnums=(0, 1))(X, Y),
            m.api.vmap(m.api.grad(f))(np.stack([X, Y]), np.stack([Y, X])), called[0]]


def test_closed_call_matches_jax():
    import funcad.extend.linear_util as f_lu
    import jax.extend.linear_util as j_lu
    FUNCAD.lu, JAX.lu = f_lu, j_lu
    for g, w in zip(_closed_call_program(FUNCAD), _closed_call_program(JAX)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def _provenance(m):
    """numpyro's provenance tracking: walk a jaxpr, entering calls through their params."""
    def deps(jaxpr, ins):
        env = {}
        read = lambda v: frozenset() if isinstance(v, m.core.Literal) else env.get(v, frozenset())
        for v, p in zip(jaxpr.invars, ins):
            env[v] = p
        for eqn in jaxpr.eqns:
            p_in = [read(v) for v in eqn.invars]
            subs = list(m.core.jaxprs_in_params(eqn.params))
            if eqn.primitive in (m.core.primitives.jit_p, m.core.primitives.closed_call_p) and subs:
                outs = deps(subs[0], p_in)
            else:
                outs = [frozenset().union(*p_in)] * len(eqn.outvars)
            for v, p in zip(eqn.outvars, outs):
                env[v] = p
        return [read(v) for v in jaxpr.outvars]
    inner = m.api.jit(lambda a, b: (a * 2, b + 1))
    closed = m.api.make_jaxpr(lambda a, b, c: (inner(a, b)[0] + 1.0, c * 3, inner(a, c)[1]))(1.0, 2.0, 3.0)
    return deps(closed.jaxpr, [frozenset("a"), frozenset("b"), frozenset("c")])


def test_numpyro_style_provenance_matches_jax():
    assert _provenance(FUNCAD) == _provenance(JAX) == [frozenset("a"), frozenset("c"), frozenset("c")]


def _equinox_vprim(m):
    """equinox's create_vprim: a multiple-results primitive whose batching rule takes
    the axis size and name (axis_primitive_batchers), lowered with lower_fun."""
    p = m.core.Primitive("vprim_sum")
    p.multiple_results = True
    seen = []
    p.def_impl(lambda x, y: [x + y, x * y])
    p.def_abstract_eval(lambda x, y: [m.ShapedArray(x.shape, x.dtype)] * 2)

    def jvp(primals, tangents):
        (x, y), (tx, ty) = primals, [m.ad.instantiate_zeros(t) for t in tangents]
        return p.bind(x, y), [tx + ty, tx * y + x * ty]
    m.ad.primitive_jvps[p] = jvp

    def batch_rule(axis_size, axis_name, trace_type, inputs, batch_axes, **params):
        seen.append((axis_size, axis_name))
        xs = [m.batching.bdim_at_front(a, d, axis_size) for a, d in zip(inputs, batch_axes)]
        return p.bind(*xs), [0, 0]
    m.batching.axis_primitive_batchers[p] = batch_rule
    m.mlir.register_lowering(p, m.mlir.lower_fun(lambda x, y: [x + y, x * y], multiple_results=True))
    f = lambda x, y: p.bind(x, y)[1].sum()
    xs = np.stack([X, Y])
    out = [m.api.vmap(f, in_axes=(0, None), axis_name="i")(xs, Y),
           m.api.jit(m.api.vmap(m.api.grad(f), in_axes=(0, None)))(xs, Y)]
    return out, seen


def test_equinox_vprim_matches_jax():
    (got, g_seen), (want, w_seen) = _equinox_vprim(FUNCAD), _equinox_vprim(JAX)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    # an unnamed vmap's axis name is None in funcad, a private sentinel object in JAX
    named = lambda seen: [(n, a if isinstance(a, str) else None) for n, a in seen]
    assert named(g_seen) == named(w_seen) == [(2, "i"), (2, None)]


# JAX's "How primitives work" tutorial as a script, unchanged but for np.float32 data
TUTORIAL = """import numpy as np
import jax
import jax.numpy as jnp
from jax.extend import core
from jax.interpreters import ad, batching, mlir
import jax.monitoring

multiply_add_p = core.Primitive("multiply_add")

def multiply_add_prim(x, y, z):
    return multiply_add_p.bind(x, y, z)

@multiply_add_p.def_impl
def multiply_add_impl(x, y, z):
    return np.add(np.multiply(x, y), z)

@multiply_add_p.def_abstract_eval
def multiply_add_abstract_eval(xs, ys, zs):
    assert xs.shape == ys.shape == zs.shape
    return jax.core.ShapedArray(xs.shape, xs.dtype)

mlir.register_lowering(multiply_add_p, mlir.lower_fun(lambda x, y, z: x * y + z, multiple_results=False))

def multiply_add_value_and_jvp(arg_values, arg_tangents):
    x, y, z = arg_values
    xt, yt, zt = arg_tangents
    primal_out = multiply_add_prim(x, y, z)
    def make_zero(tan):
        return jnp.zeros_like(x) if type(tan) is ad.Zero else tan
    output_tangent = multiply_add_prim(make_zero(xt), y, multiply_add_prim(x, make_zero(yt), make_zero(zt)))
    return (primal_out, output_tangent)
ad.primitive_jvps[multiply_add_p] = multiply_add_value_and_jvp

def multiply_add_transpose(ct, x, y, z):
    if not ad.is_undefined_primal(x):
        assert ad.is_undefined_primal(y)
        ct_y = ad.Zero(y.aval) if type(ct) is ad.Zero else multiply_add_prim(x, ct, jnp.zeros_like(x))
        res = None, ct_y, ct
    else:
        ct_x = ad.Zero(x.aval) if type(ct) is ad.Zero else multiply_add_prim(ct, y, jnp.zeros_like(y))
        res = ct_x, None, ct
    return res
ad.primitive_transposes[multiply_add_p] = multiply_add_transpose

def multiply_add_batch(vector_arg_values, batch_axes):
    assert batch_axes[0] == batch_axes[1]
    assert batch_axes[0] == batch_axes[2]
    res = multiply_add_prim(*vector_arg_values)
    return res, batch_axes[0]
batching.primitive_batchers[multiply_add_p] = multiply_add_batch

def square_add_prim(a, b):
    return multiply_add_prim(a, a, b)

x = np.array([2.0, 3.0], np.float32)
print("eager", np.asarray(square_add_prim(x, x)).tolist())
print("jit", np.asarray(jax.jit(square_add_prim)(x, x)).tolist())
print("grad", float(jax.grad(lambda a: square_add_prim(a, 10.0))(2.0)))
print("jit_grad", float(jax.jit(jax.grad(lambda a: square_add_prim(a, 10.0)))(2.0)))
print("vmap", np.asarray(jax.vmap(square_add_prim, in_axes=0, out_axes=0)(np.array([2., 3.]), np.array([10., 20.]))).tolist())
"""


@pytest.mark.slow
def test_tutorial_script_runs_unchanged_under_the_drop_in(tmp_path):
    """`import jax` means funcad (funcad.as_jax): the tutorial's primitive, with its
    rules registered through jax.interpreters, prints what it prints under JAX."""
    import os
    import pathlib
    import subprocess
    import sys
    script = tmp_path / "tutorial.py"
    script.write_text(TUTORIAL)
    env = {**os.environ, "PYTHONPATH": str(pathlib.Path(funcad.__file__).parents[1])}  # this checkout's funcad
    run = lambda *cmd: subprocess.run([sys.executable, *cmd, str(script)], capture_output=True,
                                      text=True, timeout=300, cwd=str(tmp_path), env=env)
    want, got = run(), run("-m", "funcad.as_jax")
    assert want.returncode == 0, want.stderr
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout and len(want.stdout.splitlines()) == 5


def test_closed_call_under_jet_and_sparsify():
    from funcad.experimental import sparse
    from funcad.experimental.jet import jet
    prims = f_core.primitives
    body = funcad.make_jaxpr(lambda x: [fnp.sin(x) * 2.0])(np.float32(0.5))
    f = lambda x: prims.closed_call_p.bind(x, call_jaxpr=body)[0]
    x0, series = np.float32(0.5), [np.float32(1.0), np.float32(0.0)]
    got = jet(f, (x0,), (series,))
    want = jet(lambda x: fnp.sin(x) * 2.0, (x0,), (series,))
    np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-6)
    body = funcad.make_jaxpr(lambda m: [m * 3.0])(np.zeros((2, 2), np.float32))
    dense = np.array([[0, 1], [2, 0]], np.float32)
    out = sparse.sparsify(lambda m: prims.closed_call_p.bind(m, call_jaxpr=body)[0])(sparse.BCOO.fromdense(dense))
    np.testing.assert_allclose(np.asarray(out.todense()), dense * 3.0)


def test_tangent_aval_and_array_aval_match_jax():
    # equinox reads `aval.to_tangent_aval()` and `jax.Array.aval`
    for dt in (np.float32, np.int32, np.bool_):
        got = funcad.core.ShapedArray((2, 3), dt, weak_type=True).to_tangent_aval()
        want = jax.core.ShapedArray((2, 3), dt, weak_type=True).to_tangent_aval()
        assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype, want.weak_type)
    got, want = fnp.ones((2,), np.int32).aval, jnp.ones((2,), np.int32).aval
    assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype, want.weak_type)
