"""vmap: every op-table row against a Python loop, JAX as an oracle, composition, errors."""
from __future__ import annotations

import re

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from tests.op_table import OPS

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

B = 3
ROWS = [s for s in OPS]


def _outs(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _batch(spec, rng, dtype, axes):
    """B examples of the row's inputs, stacked along each argument's axis in `axes`."""
    examples = [spec.args(rng, dtype) for _ in range(B)]
    first = examples[0]
    stacked = []
    for k, ax in enumerate(axes):
        if ax is None:
            stacked.append(first[k])
            continue
        stacked.append(np.stack([ex[k] for ex in examples], axis=ax))
    per_lane = [[first[k] if ax is None else ex[k] for k, ax in enumerate(axes)] for ex in examples]
    return stacked, per_lane


def _axes_variants(args):
    variants = {"0": [0] * len(args)}
    if all(np.ndim(a) >= 1 for a in args):
        variants["1"] = [1] * len(args)
    variants["-1"] = [-1] * len(args)
    if len(args) > 1:
        variants["None0"] = [None] + [0] * (len(args) - 1)
        variants["0None"] = [0] * (len(args) - 1) + [None]
    return variants


def _dtype(spec):
    return np.float64 if np.float64 in spec.dtypes else spec.dtypes[-1]


def _cases():
    for spec in ROWS:
        args = spec.args(np.random.default_rng(0), _dtype(spec))
        for label, axes in _axes_variants(args).items():
            yield pytest.param(spec, axes, id=f"{spec.name}-{label}")


@pytest.mark.parametrize("spec,axes", list(_cases()))
def test_vmap_matches_loop(spec, axes):
    rng = np.random.default_rng(1)
    stacked, per_lane = _batch(spec, rng, _dtype(spec), axes)
    got = _outs(funcad.vmap(spec.fun, in_axes=tuple(axes))(*stacked))
    want = [_outs(spec.fun(*lane)) for lane in per_lane]
    for i, g in enumerate(got):
        w = np.stack([np.asarray(lane[i]) for lane in want])
        assert g.shape == w.shape, spec.name
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("spec", [s for s in ROWS if s.jax_fun is not None], ids=lambda s: s.name)
def test_vmap_matches_jax(spec):
    rng = np.random.default_rng(2)
    stacked, _ = _batch(spec, rng, _dtype(spec), [0] * len(spec.args(rng, _dtype(spec))))
    got = _outs(funcad.vmap(spec.fun)(*stacked))
    want = _outs(jax.jit(jax.vmap(spec.jax_fun))(*stacked))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-12)


DIFF_ROWS = [s for s in ROWS if s.diff and np.float64 in s.dtypes]


def _float_args(spec, args):
    return [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]


def _scalar(fun):
    def f(*xs):
        return sum(fnp.sum(fnp.sin(o)) for o in _outs(fun(*xs)))
    return f


@pytest.mark.parametrize("spec", DIFF_ROWS, ids=lambda s: s.name)
def test_vmap_of_grad_and_grad_of_vmap(spec):
    rng = np.random.default_rng(3)
    stacked, per_lane = _batch(spec, rng, np.float64, [0] * len(spec.args(rng, np.float64)))
    argnums = tuple(_float_args(spec, per_lane[0]))
    f = _scalar(spec.fun)
    per_ex = funcad.vmap(funcad.grad(f, argnums=argnums))(*stacked)
    for lane, args in enumerate(per_lane):
        want = funcad.grad(f, argnums=argnums)(*args)
        for g, w in zip(per_ex, want):
            np.testing.assert_allclose(np.asarray(g)[lane], w, rtol=1e-10, atol=1e-12)
    # grad of a batched sum equals the stacked per-example gradients.
    total = lambda *xs: fnp.sum(funcad.vmap(f)(*xs))
    g_all = funcad.grad(total, argnums=argnums)(*stacked)
    for g, p in zip(g_all, per_ex):
        np.testing.assert_allclose(g, p, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("spec", DIFF_ROWS[::3], ids=lambda s: s.name)
def test_vmap_of_jvp(spec):
    rng = np.random.default_rng(4)
    stacked, per_lane = _batch(spec, rng, np.float64, [0] * len(spec.args(rng, np.float64)))
    fl = _float_args(spec, per_lane[0])
    tangents = [rng.normal(size=np.shape(stacked[i])) for i in fl]

    def f_jvp(*xs_and_ts):
        xs, ts = list(xs_and_ts[:len(stacked)]), xs_and_ts[len(stacked):]

        def g(*fxs):
            full = list(xs)
            for i, v in zip(fl, fxs):
                full[i] = v
            return _scalar(spec.fun)(*full)
        return funcad.jvp(g, tuple(xs[i] for i in fl), tuple(ts))[1]

    got = funcad.vmap(f_jvp)(*stacked, *tangents)
    for lane, args in enumerate(per_lane):
        want = f_jvp(*args, *[t[lane] for t in tangents])
        np.testing.assert_allclose(got[lane], want, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------- jacobians ----

def _rosen(np_):
    return lambda x: np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


JAC_FUNS = [
    ("tanh_matvec", lambda m: (lambda x: m.tanh(m.reshape(m.arange(12.0), (3, 4)) @ x)), (4,)),
    ("softmax", lambda m: (lambda x: m.exp(x - x.max()) / m.sum(m.exp(x - x.max()))), (5,)),
    ("cumprod", lambda m: m.cumprod, (4,)),
    ("sort", lambda m: m.sort, (5,)),
    ("outer_sum", lambda m: (lambda x: m.sum(m.outer(x, m.sin(x)), axis=0)), (3,)),
    ("matrix_in", lambda m: (lambda x: m.sin(x).T @ x), (3, 2)),
]


@pytest.mark.parametrize("name,make,shape", JAC_FUNS, ids=[j[0] for j in JAC_FUNS])
@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobians_match_jax(name, make, shape, kind):
    x = np.random.default_rng(5).uniform(0.5, 1.5, shape)
    got = getattr(funcad, kind)(make(fnp))(x)
    want = jax.jit(getattr(jax, kind)(make(jnp)))(x)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [3, 7])
def test_hessian_rosenbrock_matches_jax(n):
    x = np.random.default_rng(6).uniform(-1, 1, n)
    np.testing.assert_allclose(funcad.hessian(_rosen(fnp))(x), jax.jit(jax.hessian(_rosen(jnp)))(x), rtol=1e-10)


def test_jacobian_pytrees_and_argnums():
    f = lambda a, b: {"s": fnp.sin(a) * b[0], "t": a.sum() * b[1]}
    jf = lambda a, b: {"s": jnp.sin(a) * b[0], "t": a.sum() * b[1]}
    a, b = np.array([0.1, 0.2]), (np.array(2.0), np.array(3.0))
    for kind in ("jacfwd", "jacrev"):
        got = getattr(funcad, kind)(f, argnums=(0, 1))(a, b)
        want = getattr(jax, kind)(jf, argnums=(0, 1))(a, b)
        for g, w in zip(funcad.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev", "hessian"])
def test_jacobian_is_one_batched_pass(kind):
    # The program does not grow with the number of basis vectors: no Python loop.
    def size(n):
        f = lambda x: fnp.sum(fnp.tanh(x @ np.ones((4, n))) ** 2) if kind == "hessian" else fnp.tanh(x @ np.ones((4, n)))
        return len(funcad.make_jaxpr(getattr(funcad, kind)(f))(np.ones(4)).eqns)
    assert size(3) == size(30)


# ----------------------------------------------------- axes and nesting ----

def test_nested_vmap_in_axes_out_axes():
    x = np.random.default_rng(7).normal(size=(3, 4, 5))
    f = lambda v: v * 2.0 + fnp.sin(v).sum()
    got = funcad.vmap(funcad.vmap(f), in_axes=1, out_axes=-1)(x)
    want = jax.vmap(jax.vmap(lambda v: v * 2.0 + jnp.sin(v).sum()), in_axes=1, out_axes=-1)(x)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_in_axes_pytree_prefix_and_unbatched_output_broadcast():
    p = {"w": np.ones(3), "b": np.array(0.5)}
    xs = np.arange(6.0).reshape(2, 3)
    f = lambda p, x: (fnp.dot(p["w"], x) + p["b"], p["b"] * 2.0)
    y, c = funcad.vmap(f, in_axes=({"w": None, "b": None}, 0))(p, xs)
    np.testing.assert_allclose(y, xs.sum(1) + 0.5)
    np.testing.assert_allclose(c, [1.0, 1.0])
    y2, c2 = funcad.vmap(f, in_axes=(None, 0), out_axes=(0, None))(p, xs)
    assert np.shape(c2) == ()


def test_axis_size_with_no_mapped_inputs():
    out = funcad.vmap(lambda: np.float64(1.0), in_axes=(), axis_size=4)()
    np.testing.assert_allclose(out, np.ones(4))


def test_per_example_gradients():
    rng = np.random.default_rng(8)
    w, xs, ys = rng.normal(size=4), rng.normal(size=(10, 4)), rng.normal(size=10)
    loss = lambda w, x, y: fnp.log1p(fnp.exp(-y * fnp.dot(w, x)))
    jloss = lambda w, x, y: jnp.log1p(jnp.exp(-y * jnp.dot(w, x)))
    got = funcad.vmap(funcad.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    np.testing.assert_allclose(got, jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))(w, xs, ys), rtol=1e-12)


# ----------------------------------------------------------------- errors ----

def test_inconsistent_sizes_named():
    with pytest.raises(funcad.FuncadTypeError, match=r"inconsistent sizes.*size 3.*size 4"):
        funcad.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))


def test_in_axes_tree_mismatch():
    with pytest.raises(funcad.FuncadTypeError, match="in_axes has 1 entries"):
        funcad.vmap(lambda a, b: a + b, in_axes=(0,))(np.ones(3), np.ones(3))


def test_in_axes_out_of_range():
    import jax
    for in_axes, args in [(2, (np.ones(3),)), (0, (np.ones(1), 2.0)), (-2, (np.ones(3),))]:
        f = lambda *a: a[0]
        with pytest.raises(ValueError) as want:
            jax.vmap(f, in_axes=in_axes)(*args)
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            funcad.vmap(f, in_axes=in_axes)(*args)


def test_out_axes_none_for_batched_output():
    with pytest.raises(funcad.FuncadTypeError, match="unbatched"):
        funcad.vmap(fnp.sin, out_axes=None)(np.ones(3))


def test_python_if_on_batched_value():
    def f(x):
        return x if x > 0 else -x
    with pytest.raises(funcad.ConcretizationError, match="vmap"):
        funcad.vmap(f)(np.ones(3))
