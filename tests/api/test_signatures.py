"""Every parameter JAX's public callables take, funcad's take too.

For each namespace funcad shares with the installed jax, the signatures of the
callables both have are compared: a JAX parameter funcad lacks fails the test, as
does one funcad takes only positionally where JAX allows a keyword. The counts are
printed (`pytest -s`). Behaviour tests of those parameters follow, against JAX.
"""
import importlib
import inspect
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp

jax.config.update("jax_enable_x64", True)  # funcad's default: compare at float64

NAMESPACES = ["", "numpy", "numpy.linalg", "numpy.fft", "lax", "random", "nn", "nn.initializers",
              "scipy.special", "scipy.linalg", "scipy.stats", "tree_util", "tree"]

# JAX parameters funcad refuses on purpose, each with a clear error: {(namespace, name): {param: why}}.
REFUSED: dict = {
    ("", "Ref"): {
        "aval": "jax.Ref(aval, refs) is the constructor of JAX's internal ref type; users make refs "
                "with new_ref/empty_ref, and funcad's Ref is built from a value and its trace",
        "refs": "as for aval"},
    ("", "Shard"): {
        "sharding": "jax.Shard(device, sharding, global_shape, data) is built by JAX's Array for its "
                    "addressable_shards; funcad's Shard carries the device, index and data instead",
        "global_shape": "as for sharding"},
}

_VAR = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _signature(obj):
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def signature_gaps(ns: str) -> tuple[int, list]:
    """(how many callables were compared, [(name, problem)]) for one namespace."""
    jmod = importlib.import_module("jax" + ("." + ns if ns else ""))
    fmod = importlib.import_module("funcad" + ("." + ns if ns else ""))
    count, gaps = 0, []
    for name in sorted(dir(jmod)):
        if name.startswith("_"):
            continue
        try:
            jo, fo = getattr(jmod, name), getattr(fmod, name)
        except Exception:  # a name funcad lacks: test_coverage's business
            continue
        if not callable(jo) or inspect.ismodule(jo) or (js := _signature(jo)) is None:
            continue
        count += 1
        fs = _signature(fo)
        if fs is None:
            gaps.append((name, "funcad's has no signature"))
            continue
        fparams = fs.parameters
        var_kw = any(p.kind is p.VAR_KEYWORD for p in fparams.values())
        refused = REFUSED.get((ns, name), {})
        for pname, jp in js.parameters.items():
            # A positional-only parameter has no name a caller can use: its position is
            # what must exist (jnp.equal(x, y, /), jnp.arctan2(x1, x2, /)).
            if jp.kind in _VAR or pname in refused or (
                    jp.kind is jp.POSITIONAL_ONLY and len(fparams) > list(js.parameters).index(pname)):
                continue
            fp = fparams.get(pname)
            if fp is None:
                gaps.append((name, f"lacks {pname!r}"))
            elif fp.kind is fp.POSITIONAL_ONLY and jp.kind is not jp.POSITIONAL_ONLY and not var_kw:
                gaps.append((name, f"{pname!r} is positional-only, JAX's takes it by keyword"))
            elif jp.kind is jp.KEYWORD_ONLY and fp.kind is fp.POSITIONAL_ONLY:
                gaps.append((name, f"{pname!r} is positional-only, JAX's is keyword-only"))
    return count, gaps


@pytest.mark.parametrize("ns", NAMESPACES, ids=lambda ns: ns or "top")
def test_signatures_cover_jax(ns):
    count, gaps = signature_gaps(ns)
    print(f"\njax.{ns or '<top>'}: {count - len({n for n, _ in gaps})} of {count} callables take "
          "every parameter JAX's take")
    assert not gaps, f"jax.{ns or '<top>'}: " + "; ".join(f"{n}: {p}" for n, p in gaps)


def test_refused_constructor_parameters_explain_themselves():
    with pytest.raises(TypeError, match="funcad.new_ref"):
        funcad.Ref(aval=object(), refs=object())
    with pytest.raises(TypeError, match="addressable_shards"):
        funcad.Shard(funcad.devices()[0], sharding=object(), global_shape=(2,), data=None)


def test_refused_parameters_are_jax_parameters():
    for (ns, name), params in REFUSED.items():
        jo = getattr(importlib.import_module("jax" + ("." + ns if ns else "")), name)
        assert set(params) <= set(inspect.signature(jo).parameters), (ns, name)
        assert all(params.values()), "each refused parameter needs its reason"


# ------------------------------------------------------------ top level: jit ----

def _both(fn):
    """fn(module, numpy module) for funcad and jax, as NumPy trees."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # jit(device=) is deprecated in JAX
        return [jax.tree.map(np.asarray, fn(m, n)) for m, n in ((funcad, fnp), (jax, jnp))]


def test_jit_donate_argnames_donates_the_named_argument():
    def f(x, state):
        return x * 2.0 + state
    for mod in (funcad, jax):
        g = mod.jit(f, donate_argnames="state", keep_unused=True, inline=True)
        info = g.lower(np.ones(2), np.ones(2)).args_info[0]
        assert [a.donated for a in info] == [False, True]
        info = g.lower(np.ones(2), state=np.ones(2)).args_info
        assert info[1]["state"].donated and not info[0][0].donated
        g2 = mod.jit(f, donate_argnums=1)  # the name follows from the position
        assert g2.lower(np.ones(2), state=np.ones(2)).args_info[1]["state"].donated
    ours, theirs = _both(lambda m, n: m.jit(f, donate_argnames="state")(n.ones(2), state=n.ones(2)))
    np.testing.assert_allclose(ours, theirs)


def test_jit_options_keep_results_and_compose():
    x = np.linspace(0.0, 1.0, 4)
    def run(m, n):
        g = m.jit(lambda x, unused: n.sin(x) * 3.0, keep_unused=True, inline=True)
        c = m.jit(lambda x, unused: n.sin(x) * 3.0, compiler_options={"xla_backend_optimization_level": 0})
        return (g(x, 1.0), c(x, 1.0), m.grad(lambda x: g(x, 1.0).sum())(x),
                m.grad(lambda x: c(x, 1.0).sum())(x), m.vmap(g, in_axes=(0, None))(x, 2.0),
                m.jit(lambda x: g(x, 0.0) + 1.0)(x))
    ours, theirs = _both(run)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_jit_device_places_the_computation():
    dev = funcad.devices()[0]
    out = funcad.jit(lambda x: x + 1.0, device=dev)(np.ones(3))
    assert out.devices() == {dev}
    np.testing.assert_allclose(out, 2.0)


@pytest.mark.parametrize("kwargs, exc", [
    (dict(device="cpu"), TypeError),
    (dict(inline=3), ValueError),
    (dict(keep_unused="yes"), TypeError),
    (dict(compiler_options=[("a", 1)]), TypeError),
    (dict(donate_argnames="nope"), ValueError),
])
def test_jit_option_errors(kwargs, exc):
    with pytest.raises(exc):
        funcad.jit(lambda x, state: x, **kwargs)


def test_jit_device_with_backend_or_shardings_raises_as_jax():
    for mod in (funcad, jax):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with pytest.raises(ValueError, match="both a device and a backend"):
                mod.jit(lambda x: x, device=mod.devices()[0], backend="cpu")


def test_jit_compiler_options_only_at_top_level():
    for mod in (funcad, jax):
        c = mod.jit(lambda x: x * 2.0, compiler_options={"xla_backend_optimization_level": 0})
        with pytest.raises(ValueError, match="top-level"):
            mod.jit(lambda x: c(x) + 1.0)(1.0)


def test_jit_compiler_options_reach_xla():
    with pytest.raises(Exception, match="No such compile option"):
        funcad.jit(lambda x: x + 1.0, compiler_options={"no_such_xla_option": 1})(1.0)


# ------------------------------------------------------- linearize, vmap ----

def _f(n):
    return lambda x, y: (n.sin(x) * 2.0, {"a": y * x, "b": y + 1.0})


def test_linearize_has_aux_and_in_nzs_match_jax():
    def run(m, n):
        y, fj, aux = m.linearize(lambda x: (n.sin(x) * x, x + 1.0), 0.7, has_aux=True)
        _, fj2 = m.linearize(_f(n), 0.7, 0.3, in_nzs=(True, False))
        _, fj3 = m.linearize(_f(n), 0.7, 0.3, in_nzs=(False, True))
        return y, fj(2.0), aux, fj2(1.0, 5.0), fj3(1.0, 5.0)
    ours, theirs = _both(run)
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for mod, n in ((funcad, fnp), (jax, jnp)):
        assert mod.linearize(_f(n), 0.7, 0.3, in_nzs=(True, False))[1].out_nzs == \
            (True, {"a": True, "b": False})


def test_linearize_in_nzs_must_be_bools():
    with pytest.raises(ValueError, match="in_nzs"):
        funcad.linearize(_f(fnp), 0.7, 0.3, in_nzs=(1, 0))


def test_vmap_sum_match_sums_varying_outputs():
    x = np.arange(6.0).reshape(3, 2)
    def run(m, n):
        f = lambda x, y: (2.0 * x, y * 3.0)
        return (m.vmap(f, in_axes=(0, None), out_axes=None, sum_match=True)(x, 4.0),
                m.vmap(f, in_axes=(0, None), out_axes=(0, None), sum_match=True)(x, 4.0),
                m.grad(lambda x: m.vmap(n.sin, out_axes=None, sum_match=True)(x).sum())(x),
                m.jit(m.vmap(lambda x: x * x, out_axes=None, sum_match=True))(x))
    ours, theirs = _both(run)
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_vmap_without_sum_match_refuses_varying_unmapped_outputs():
    with pytest.raises(TypeError, match="sum_match=True"):
        funcad.vmap(lambda x: 2.0 * x, out_axes=None)(np.arange(3.0))


# ------------------------------------------- grad family, make_jaxpr, checkpoint ----

@pytest.mark.parametrize("call", [
    lambda m: m.grad(lambda x: x, reduce_axes=("i",)),
    lambda m: m.value_and_grad(lambda x: x, reduce_axes=("i",)),
    lambda m: m.vjp(lambda x: x, 1.0, reduce_axes=("i",)),
    lambda m: m.linear_transpose(lambda x: x, 1.0, reduce_axes=("i",)),
])
def test_reduce_axes_raises_as_jax(call):
    for mod in (funcad, jax):
        with pytest.raises(NotImplementedError, match="reduce_axes"):
            call(mod)
    assert funcad.grad(lambda x: x * x, reduce_axes=())(3.0) == 6.0


def test_vjp_in_nzs_matches_jax():
    def run(m, n):
        f = lambda x, y: (x * 2.0, x * y, y)
        _, pb = m.vjp(f, 1.5, 2.0, in_nzs=(False, True))
        return pb((1.0, 1.0, 1.0)), pb.out_nzs
    (ours, onz), (theirs, tnz) = _both(run)
    np.testing.assert_allclose(ours, theirs)
    assert tuple(onz) == tuple(tnz) == (False, True, True)


def test_vjp_saveable_args_false_is_refused():
    with pytest.raises(NotImplementedError, match="args_res"):
        funcad.vjp(lambda x: x, 1.0, saveable_args=False)


def test_jacrev_allow_int_matches_jax():
    def run(m, n):
        return (m.jacrev(lambda x, k: x * k, argnums=(0, 1), allow_int=True)(np.ones(2), np.arange(2)),
                m.jacobian(lambda x, k: x * k, argnums=(0, 1), allow_int=True)(np.ones(2), np.arange(2)))
    ours, theirs = _both(run)
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="allow_int"):
        funcad.jacrev(lambda x, k: x * k, argnums=(0, 1))(np.ones(2), np.arange(2))


def test_make_jaxpr_axis_env_binds_named_axes():
    f = lambda m: lambda x: m.lax.psum(x, "i") * m.lax.axis_index("i")
    ours = funcad.make_jaxpr(f(funcad), axis_env=[("i", 4)])(1.0)
    theirs = jax.make_jaxpr(f(jax), axis_env=[("i", 4)])(1.0)
    assert [e.primitive.name for e in ours.jaxpr.eqns] == [e.primitive.name for e in theirs.jaxpr.eqns]
    with pytest.raises(Exception):
        funcad.make_jaxpr(f(funcad))(1.0)  # unbound axis name


def test_checkpoint_static_argnames():
    def run(m, n):
        def f(x, k):
            for _ in range(k):
                x = n.sin(x)
            return x
        g = m.checkpoint(f, static_argnames="k")
        return m.grad(g)(1.0, 2), m.grad(lambda x: g(x, k=3))(1.0)
    jax.config.update("jax_remat3", True)  # JAX's checkpoint honours static_argnames only there
    try:
        ours, theirs = _both(run)
    finally:
        jax.config.update("jax_remat3", False)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_make_mesh_takes_axis_sizes_by_name():
    mesh = funcad.make_mesh(axis_sizes=(funcad.device_count(),), axis_names=("d",))
    assert mesh.shape == {"d": funcad.device_count()}


# -------------------------------------------------------------------- lax ----

def _lax_calls(m, n):
    L, x = m.lax, np.arange(12.0).reshape(3, 4)
    return [
        L.argmax(operand=x, axis=1, index_dtype=np.int32), L.clamp(min=1.0, x=x, max=5.0),
        L.concatenate(operands=[x, x], dimension=0), L.convert_element_type(operand=x, new_dtype=np.float32),
        L.cumsum(operand=x, axis=1), L.cummax(operand=x, axis=0), L.dynamic_slice(x, (-2, -3), (2, 2)),
        L.dynamic_slice(operand=x, start_indices=(1, 1), slice_sizes=(2, 2), allow_negative_indices=False),
        L.dynamic_slice(x, np.array([-1, -1]), (1, 1), allow_negative_indices=[True, True]),
        L.dynamic_update_slice(x, np.ones((1, 2)), (-1, -2)),
        m.jit(lambda i: L.dynamic_slice(x, (i, 0), (2, 2)))(-2),
        m.vmap(lambda i: L.dynamic_slice(x, (i, 0), (1, 2)))(np.array([-1, 0, 1])),
        m.grad(lambda y: L.dynamic_slice(y, (-1, -1), (1, 1)).sum())(x),
        L.expand_dims(array=x, dimensions=(0,)), L.iota(np.int32, size=5),
        L.mul(x, x, out_dtype=np.float32),
        L.pad(operand=x, padding_value=0.0, padding_config=[(1, 0, 0), (0, 1, 1)]),
        L.reduce_max(operand=x, axes=(1,)), L.reduce_min(operand=x, axes=(1,)),
        L.reduce_sum(operand=x, axes=(0,)), L.reduce_prod(operand=x, axes=(0,)),
        L.reshape(operand=x, new_sizes=(4, 3), dimensions=(1, 0)),
        m.grad(lambda y: L.reshape(y, (12,), dimensions=(1, 0))[1])(x),
        L.rev(operand=x, dimensions=(0,)), L.slice(operand=x, start_indices=(0, 1), limit_indices=(2, 3)),
        L.sort(operand=np.array([3.0, 1.0, 2.0]), is_stable=False),
        L.sort((np.array([3.0, 1.0, 2.0]), np.arange(3.0)), 0, True, 1),
        L.squeeze(array=x[None], dimensions=(0,)), L.transpose(operand=x, permutation=(1, 0)),
        L.erfc(np.array([0.5, 3.0]), accuracy=L.AccuracyMode.DEFAULT),
        L.map(lambda r: (n.sin(r).sum(), r * 2.0), x, batch_size=2),
        m.grad(lambda y: L.map(lambda r: n.sin(r).sum(), y, batch_size=2).sum())(x),
        L.cond(True, lambda a: a + 1.0, lambda a: a, operand=1.0),
        L.switch(1, [lambda a: a + 1.0, lambda a: a], operand=1.0),
        L.scan(lambda c, r: (c + r, c), 0.0, x[0], _split_transpose=False),
        L.broadcast(x, (2,), out_sharding=None), L.dot(x, x.T, out_sharding=None),
    ]


def test_lax_jax_keywords_and_parameters_match_jax():
    ours, theirs = _both(_lax_calls)
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
            assert u.dtype == v.dtype, i
            np.testing.assert_allclose(u, v, rtol=1e-12, err_msg=str(i))


def test_lax_parameter_errors_as_jax():
    x = np.arange(12.0).reshape(3, 4)
    for L in (funcad.lax, jax.lax):
        with pytest.raises(ValueError, match="allow_negative_indices=False"):
            L.dynamic_slice(x, (-2, 0), (2, 2), allow_negative_indices=False)
        with pytest.raises(TypeError, match="operand"):
            L.cond(True, lambda a: a, lambda a: a, 1.0, operand=1.0)
        with pytest.raises(TypeError, match="permutation"):
            L.reshape(x, (12,), dimensions=(0, 0))
    with pytest.raises(NotImplementedError, match="HIGHEST"):
        funcad.lax.erfc(0.5, accuracy=funcad.lax.AccuracyMode.HIGHEST)
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        funcad.vmap(lambda v: funcad.lax.all_to_all(v, "i", 0, 0, axis_index_groups=[[0, 1]]),
                    axis_name="i")(np.ones((2, 2)))
    with pytest.raises(NotImplementedError, match="invariant"):
        funcad.vmap(lambda v: funcad.lax.all_gather(v, "i", to="invariant"), axis_name="i")(np.ones(2))


def test_lax_out_sharding_lays_the_result_out():
    mesh = funcad.make_mesh((funcad.device_count(),), ("d",))
    s = funcad.sharding.NamedSharding(mesh, funcad.sharding.PartitionSpec())
    x = np.arange(8.0).reshape(2, 4)
    f = funcad.jit(lambda x: (funcad.lax.reduce_sum(x, (0,), out_sharding=s),
                              funcad.lax.broadcast_in_dim(x, (3, 2, 4), (1, 2), out_sharding=s)))
    a, b = f(x)
    np.testing.assert_allclose(a, x.sum(0))
    np.testing.assert_allclose(b, np.broadcast_to(x, (3, 2, 4)))


# ------------------------------------------------ random, nn: out_sharding ----

_SAMPLERS = [
    ("normal", lambda r, k, **kw: r.normal(k, (3,), **kw)),
    ("uniform", lambda r, k, **kw: r.uniform(k, (3,), minval=1.0, maxval=2.0, **kw)),
    ("bits", lambda r, k, **kw: r.bits(k, (3,), **kw)),
    ("randint", lambda r, k, **kw: r.randint(k, (3,), 0, 10, **kw)),
    ("bernoulli", lambda r, k, **kw: r.bernoulli(k, 0.3, (3,), **kw)),
    ("gamma", lambda r, k, **kw: r.gamma(k, 2.0, (3,), **kw)),
    ("permutation", lambda r, k, **kw: r.permutation(k, 5, **kw)),
    ("categorical", lambda r, k, **kw: r.categorical(k, np.log(np.array([0.2, 0.8])), shape=(3,), **kw)),
]


@pytest.mark.parametrize("name, draw", _SAMPLERS, ids=[n for n, _ in _SAMPLERS])
def test_random_out_sharding_keeps_jax_values(name, draw):
    mesh = funcad.make_mesh((funcad.device_count(),), ("d",))
    s = funcad.sharding.NamedSharding(mesh, funcad.sharding.PartitionSpec())
    jmesh = jax.make_mesh((1,), ("d",), devices=jax.devices()[:1])
    js = jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec())
    theirs = np.asarray(draw(jax.random, jax.random.PRNGKey(0), out_sharding=js))
    ours = draw(funcad.random, funcad.random.PRNGKey(0), out_sharding=s)
    assert ours.sharding == s
    np.testing.assert_array_equal(np.asarray(ours), theirs)
    jitted = funcad.jit(lambda k: draw(funcad.random, k, out_sharding=s))(funcad.random.PRNGKey(0))
    np.testing.assert_array_equal(np.asarray(jitted), theirs)


def test_random_out_sharding_partition_spec_needs_a_mesh():
    with pytest.raises(ValueError, match="no mesh is set"):
        funcad.random.normal(funcad.random.PRNGKey(0), (2,),
                             out_sharding=funcad.sharding.PartitionSpec("d"))


def test_nn_out_sharding():
    mesh = funcad.make_mesh((funcad.device_count(),), ("d",))
    s = funcad.sharding.NamedSharding(mesh, funcad.sharding.PartitionSpec())
    hot = funcad.nn.one_hot(np.array([1, 0]), 3, out_sharding=s)
    assert hot.sharding == s
    np.testing.assert_array_equal(hot, jax.nn.one_hot(np.array([1, 0]), 3))
    for init in ("ones", "zeros"):
        v = getattr(funcad.nn.initializers, init)(None, (2,), out_sharding=s)
        assert v.sharding == s
        np.testing.assert_array_equal(v, getattr(jax.nn.initializers, init)(None, (2,)))


# ----------------------------------------------- device_put, refs, misc names ----

def test_device_put_may_alias_and_donate():
    for mod in (funcad, jax):
        x = mod.device_put(np.ones(2))
        assert mod.device_put(x, may_alias=True) is x
        y = mod.device_put(x, may_alias=False)
        assert y is not x and not x.is_deleted()
        z = mod.device_put(x, mod.devices()[0], src=mod.devices()[0], donate=True)
        assert z is not x and not x.is_deleted()  # CPU: nothing is deleted, as JAX's
        np.testing.assert_array_equal(z, np.ones(2))
        with pytest.raises(ValueError, match="may_alias and donate"):
            mod.device_put(x, donate=True, may_alias=True)
    mesh = funcad.make_mesh((funcad.device_count(),), ("d",))
    s = funcad.sharding.NamedSharding(mesh, funcad.sharding.PartitionSpec())
    assert funcad.device_put(funcad.device_put(np.ones(3), s), may_alias=False).sharding == s


@pytest.mark.parametrize("kwargs", [dict(with_logs=True), dict(remat=True), dict(with_accums=())])
def test_custom_gradient_refuses_what_funcad_lacks(kwargs):
    with pytest.raises(NotImplementedError, match=next(iter(kwargs))):
        funcad.custom_gradient(lambda x: (x, lambda g: (g,)), **kwargs)
    f = funcad.custom_gradient(lambda x: (x * x, lambda g: (g * 3.0,)), with_logs=False, remat=False)
    assert funcad.grad(f)(2.0) == 3.0


def test_partition_spec_and_shape_dtype_struct_parameters():
    assert funcad.P("a", None, unreduced=frozenset(), reduced=frozenset()) == funcad.P("a", None)
    assert funcad.P("a", unreduced={"b"}).unreduced == {"b"}  # tests/sharding/test_sharding_unreduced.py
    s = funcad.sharding.SingleDeviceSharding(funcad.devices()[0])
    sds = funcad.ShapeDtypeStruct((2,), np.float32, sharding=s)
    assert sds.sharding == s and sds != funcad.ShapeDtypeStruct((2,), np.float32)
    with pytest.raises(NotImplementedError, match="is_ref"):
        funcad.ShapeDtypeStruct((2,), np.float32, is_ref=True)


def test_refs_pin_and_kind():
    r = funcad.new_ref(np.zeros(2), kind=None, pin=False)
    r[0] = 1.0
    np.testing.assert_array_equal(r[...], [1.0, 0.0])
    assert funcad.empty_ref(funcad.ShapeDtypeStruct((2,), np.float32), pin=False).shape == (2,)
    with pytest.raises(NotImplementedError, match="pin"):
        funcad.new_ref(np.zeros(2), pin=True)
    with pytest.raises(NotImplementedError, match="kind"):
        funcad.new_ref(np.zeros(2), kind="x")


def test_config_with_absl_defines_jax_flags():
    from absl import flags
    funcad.config.config_with_absl()
    funcad.config.config_with_absl()  # a second call keeps the flags
    assert "jax_numpy_rank_promotion" in flags.FLAGS and "jax_log_compiles" in flags.FLAGS


@pytest.mark.slow
def test_config_with_absl_applies_command_line_flags(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "prog.py"
    script.write_text("import funcad\nfrom absl import app\nfuncad.config.config_with_absl()\n"
                      "app.run(lambda argv: print(funcad.config.read('numpy_rank_promotion')))\n")
    out = subprocess.run([sys.executable, str(script), "--jax_numpy_rank_promotion=raise"],
                         capture_output=True, text=True, cwd=str(tmp_path),
                         env={**__import__("os").environ, "PYTHONPATH": str(__import__("pathlib").Path(
                             funcad.__file__).parents[1])})
    assert out.stdout.strip() == "raise", out.stderr


@pytest.mark.slow
def test_parse_flags_with_absl_applies_command_line_flags_as_jax(tmp_path):
    # flax's test files call jax.config.parse_flags_with_absl() at import
    import os
    import subprocess
    import sys
    out = {}
    for lib in ("funcad", "jax"):
        script = tmp_path / f"{lib}_prog.py"
        script.write_text(f"import {lib}\n{lib}.config.parse_flags_with_absl()\n"
                          f"{lib}.config.parse_flags_with_absl()\n"
                          f"print({lib}.config.jax_numpy_rank_promotion)\n")
        out[lib] = subprocess.run(
            [sys.executable, str(script), "--jax_numpy_rank_promotion=raise", "--unknown=1", "-q"],
            capture_output=True, text=True, cwd=str(tmp_path), env={
                **os.environ, "PYTHONPATH": str(__import__("pathlib").Path(funcad.__file__).parents[1])})
    assert out["funcad"].stdout.strip() == out["jax"].stdout.strip() == "raise", out["funcad"].stderr


def test_experimental_x64_scopes():
    with funcad.experimental.disable_x64():
        assert fnp.ones(2).dtype == np.float32
        with funcad.experimental.enable_x64():
            assert fnp.ones(2).dtype == np.float64
