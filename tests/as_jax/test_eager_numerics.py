"""Eager numbers under the drop-in are JAX's bit for bit: with eager_backend="xla" (the
drop-in's default) eager primitives that NumPy rounds otherwise run as one compiled XLA
operation each; jit leaves their constant folding to XLA and writes small constants into
the program, as JAX does. Under `import funcad` eager stays NumPy's."""
from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.as_jax as as_jax
import funcad.numpy as fnp
from funcad.core.errors import FuncadTypeError


def _inputs(n=4096, seed=0):
    r = np.random.RandomState(seed)
    return {"exp": np.float32(r.uniform(-80, 80, n)), "log": np.float32(r.lognormal(0, 3, n)),
            "tanh": np.float32(r.normal(0, 3, n)), "sum": np.float32(r.normal(0, 1, (n // 64, 64)))}


FUNS = {"exp": (fnp.exp, jnp.exp), "log": (fnp.log, jnp.log), "tanh": (fnp.tanh, jnp.tanh),
        "sum": (lambda x: fnp.sum(x, axis=1), lambda x: jnp.sum(x, axis=1))}


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("name", sorted(FUNS))
def test_eager_xla_is_jaxs_bits(name):
    x = _inputs()[name]
    ours, theirs = FUNS[name]
    with funcad.eager_backend("xla"):
        got = ours(x)
        got_lax = getattr(funcad.lax, name)(x) if name != "sum" else funcad.lax.reduce_sum(x, (1,))
    assert type(got) is type(fnp.zeros(1))  # an eager funcad array, on the host
    _same_bits(got, theirs(x))
    _same_bits(got_lax, theirs(x))


def test_numpy_backend_stays_numpys():
    x = _inputs()["exp"]
    assert funcad.config.read("eager_backend") == "numpy"
    _same_bits(fnp.exp(x), np.exp(x))
    assert (np.asarray(jnp.exp(x)) != np.exp(x)).any()  # else this file tests nothing


def test_dropin_sets_xla_and_uninstall_restores(monkeypatch):
    monkeypatch.delenv("JAX_ENABLE_X64", raising=False)
    monkeypatch.delenv("FUNCAD_EAGER_BACKEND", raising=False)
    xs = _inputs(seed=1)
    want = {k: np.asarray(FUNS[k][1](x)) for k, x in xs.items()}
    real_jax = sys.modules["jax"]
    as_jax.install()
    try:
        import jax as dropin_jax
        import jax.numpy as djnp
        assert dropin_jax is funcad and dropin_jax.config.read("eager_backend") == "xla"
        for k, x in xs.items():
            got = djnp.sum(x, axis=1) if k == "sum" else getattr(djnp, k)(djnp.asarray(x))
            _same_bits(got, want[k])
            _same_bits(dropin_jax.jit(FUNS[k][0])(x), want[k])
    finally:
        as_jax.uninstall()
    assert sys.modules["jax"] is real_jax and funcad.config.read("eager_backend") == "numpy"


def test_grad_and_vmap_of_eager_xla_ops_are_jaxs():
    x = _inputs()["tanh"][:256]
    f_ours = lambda v: fnp.sum(fnp.tanh(v) * fnp.exp(v / 4))  # noqa: E731
    f_jax = lambda v: jnp.sum(jnp.tanh(v) * jnp.exp(v / 4))  # noqa: E731
    with funcad.eager_backend("xla"):
        g = funcad.grad(f_ours)(x)
        v = funcad.vmap(fnp.log1p)(np.abs(x))
    _same_bits(g, jax.grad(f_jax)(x))
    _same_bits(v, jax.vmap(jnp.log1p)(np.abs(x)))


def test_jit_leaves_constant_transcendentals_to_xla():
    # XLA folds log(2*pi*scale**2) of a constant `scale` with its evaluator in JAX's
    # program; funcad writes the small constant into the program and leaves the fold to XLA.
    def logpdf(np_, x):
        scale = np_.array([1.0, 0.3, 2.5], np.float32)
        return np_.sum(-0.5 * (np_.log(2 * np.pi * scale ** 2) + (x - 0.5) ** 2 / scale ** 2))
    xs = np.float32(np.random.RandomState(3).normal(0, 2, (200, 3)))
    want = jax.jit(jax.vmap(lambda x: logpdf(jnp, x)))(xs)
    with funcad.eager_backend("xla"):
        got = funcad.jit(funcad.vmap(lambda x: logpdf(fnp, x)))(xs)
    _same_bits(got, want)


def test_option_refuses_other_values():
    with pytest.raises(FuncadTypeError, match="eager_backend takes one of 'numpy', 'xla'"):
        funcad.config.update("eager_backend", "gpu")
    assert funcad.config.read("eager_backend") == "numpy"


def test_out_sharding_of_an_unsharded_type_lays_out_nothing():
    # optax's `_vdot` passes NamedSharding(typeof(a).sharding.mesh, P()) where `a` has no
    # mesh (an empty abstract mesh, whose axes are all "explicit"): no sharding, as in JAX.
    a, b = np.float32([1.5, 2.0, -1.0]), np.float32([0.5, 4.0, 3.0])

    def vdot(np_, lib, x, y):
        s = lib.sharding.NamedSharding(lib.typeof(x).sharding.mesh, lib.P())
        return np_.tensordot(x, y, 1, out_sharding=s)
    want = jax.jit(lambda x, y: vdot(jnp, jax, x, y))(a, b)
    np.testing.assert_array_equal(funcad.jit(lambda x, y: vdot(fnp, funcad, x, y))(a, b), want)
    np.testing.assert_array_equal(vdot(fnp, funcad, a, b), vdot(jnp, jax, a, b))


def test_logistic_lowers_as_jaxs():
    # JAX lowers logistic as 1 / (1 + exp(-x)); XLA's own `logistic` op rounds otherwise
    # (NUTS's acceptance probabilities, blackjax's expit of weight differences).
    x = np.float32(np.random.RandomState(5).normal(0, 4, 20000))
    text = funcad.jit(funcad.nn.sigmoid).lower(x).as_text()
    assert "stablehlo.logistic" not in text and "stablehlo.exponential" in text
    _same_bits(funcad.jit(funcad.nn.sigmoid)(x), jax.jit(jax.nn.sigmoid)(x))
    _same_bits(funcad.jit(funcad.scipy.special.expit)(x), jax.jit(jax.scipy.special.expit)(x))


EXACT = {"add": (fnp.add, jnp.add), "subtract": (fnp.subtract, jnp.subtract),
         "multiply": (fnp.multiply, jnp.multiply), "divide": (fnp.divide, jnp.divide),
         "maximum": (fnp.maximum, jnp.maximum), "sqrt": (lambda a, b: fnp.sqrt(a), lambda a, b: jnp.sqrt(a)),
         "negative": (lambda a, b: -a, lambda a, b: -a), "floor": (lambda a, b: fnp.floor(a * b),
                                                                 lambda a, b: jnp.floor(a * b))}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_ops_stay_on_numpy_with_jaxs_bits(name):
    # Correctly rounded ops give XLA's bits on NumPy, so eager_backend="xla" leaves them
    # there. (Outside the normal range they differ: XLA on CPU flushes subnormal inputs
    # and results to zero, NumPy keeps them; see docs/ecosystem.md.)
    r = np.random.RandomState(7)
    a = np.float32(r.lognormal(0, 4, 4096)); b = np.float32(r.normal(0, 5, 4096))
    ours, theirs = EXACT[name]
    with funcad.eager_backend("xla"):
        got = ours(fnp.asarray(a), fnp.asarray(b))
    _same_bits(got, theirs(jnp.asarray(a), jnp.asarray(b)))


def test_division_by_a_broadcast_divisor_is_xlas():
    # XLA divides by a broadcast divisor as a product with its reciprocal; JAX's eager
    # `x / 3.0` is such a program. Equal shapes divide exactly on both.
    r = np.random.RandomState(2)
    x = np.float32(r.normal(size=(37, 300))); col = np.float32(r.uniform(1, 5, (37, 1)))
    with funcad.eager_backend("xla"):
        a, b = fnp.asarray(x) / 3.0, fnp.divide(x, col)
        c = fnp.divide(x, x[::-1] + 7)
    _same_bits(a, jnp.asarray(x) / 3.0)
    _same_bits(b, jnp.divide(x, col))
    _same_bits(c, jnp.divide(x, x[::-1] + 7))
    z = (x + 1j * x[::-1]).astype(np.complex64)
    with funcad.eager_backend("xla"):  # complex division: another algorithm than NumPy's
        q = fnp.divide(z, z[:, ::-1])
    np.testing.assert_array_equal(q, jnp.divide(z, z[:, ::-1]))
    assert not np.array_equal(np.asarray(a), x / np.float32(3))  # else nothing is tested


JITTED = {
    "mean": lambda m, x: m.mean(x), "mean_axis": lambda m, x: m.mean(x, axis=1),
    "average": lambda m, x: m.average(x, axis=1, weights=np.abs(x[0])),
    "cov": lambda m, x: m.cov(x[:5]), "corrcoef": lambda m, x: m.corrcoef(x[:5]),
    "log2": lambda m, x: m.log2(np.abs(x)), "log10": lambda m, x: m.log10(np.abs(x)),
    "round": lambda m, x: m.round(x, 2), "nanmean": lambda m, x: m.nanmean(x, axis=0),
    "var": lambda m, x: m.var(x, axis=0), "var_ddof": lambda m, x: m.var(x, axis=1, ddof=1),
    "std": lambda m, x: m.std(x), "std_where": lambda m, x: m.std(x, axis=0, where=x > -1),
}


@pytest.mark.parametrize("name", sorted(JITTED))
def test_functions_jax_jits_run_compiled(name):
    x = np.float32(np.random.RandomState(0).normal(size=(37, 300)))
    with funcad.eager_backend("xla"):
        got = JITTED[name](fnp, x)
    _same_bits(got, JITTED[name](jnp, x))


def test_nn_functions_jax_jits_run_compiled():
    x = np.float32(np.random.RandomState(4).normal(size=(37, 300)))
    with funcad.eager_backend("xla"):
        got = [funcad.nn.standardize(x), funcad.nn.log_softmax(x), funcad.nn.softmax(x)]
    for g, want in zip(got, [jax.nn.standardize(x), jax.nn.log_softmax(x), jax.nn.softmax(x)]):
        _same_bits(g, want)


def test_eager_loop_takes_its_constants_as_arguments_jit_inlines_them():
    # JAX folds log(2*pi*scale**2) of a constant `scale` in a jitted program, but an
    # eagerly run scan passes its body's constants as operands: XLA computes the log.
    def logpdf(np_, lib, x):
        scale = np_.array([1.0, 0.3], np.float32)
        return np_.sum(-0.5 * (np_.log(2 * np.pi * scale ** 2) + (x - 0.5) ** 2 / scale ** 2))

    def in_scan(np_, lib, x):
        return lib.lax.scan(lambda c, _: (c, logpdf(np_, lib, c)), x, np_.arange(1))[1][0]
    xs = np.float32(np.random.RandomState(6).normal(0, 2, (50, 2)))
    with funcad.eager_backend("xla"):
        got_scan = [in_scan(fnp, funcad, x) for x in xs]
        got_jit = [funcad.jit(lambda v: logpdf(fnp, funcad, v))(x) for x in xs]
    _same_bits(np.stack(got_scan), np.stack([in_scan(jnp, jax, x) for x in xs]))
    _same_bits(np.stack(got_jit), np.stack([jax.jit(lambda v: logpdf(jnp, jax, v))(x) for x in xs]))
