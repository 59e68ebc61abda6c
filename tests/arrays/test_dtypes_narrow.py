"""The narrow dtypes (bfloat16, float8/6/4, int1/2/4, uint1/2/4) against JAX:
names, promotion, finfo/iinfo, eager and jit numbers bit for bit, conversions,
bitcasts, grad in bfloat16/float16, and the errors."""
import itertools

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.core import narrow
from funcad.core.errors import FuncadTypeError, UnsupportedError
from funcad.lowering import xla

NARROW = [np.dtype(getattr(ml_dtypes, n)) for n in narrow.NAMES]
STANDARD = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                  "uint32", "uint64", "float16", "float32", "float64",
                                  "complex64", "complex128")]
FLOATS = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
          "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3", "float4_e2m1fn"]
_OLD_JAXLIB = not hasattr(xla._load().PrimitiveType, "F6E2M3FN")


jax.config.update("jax_enable_x64", True)


def _bits(x):
    x = np.ascontiguousarray(np.asarray(x))
    return x.dtype, x.shape, x.reshape(-1).view(np.uint8).tobytes()


def _jax_promote(a, b):
    try:
        return np.dtype(jnp.promote_types(a, b))
    except Exception:
        return None


def _ours_promote(a, b):
    try:
        return np.dtype(fnp.promote_types(a, b))
    except FuncadTypeError:
        return None


def test_names_are_the_ml_dtypes_scalar_types():
    for n in narrow.NAMES:
        assert getattr(fnp, n) == getattr(ml_dtypes, n)  # JAX's scalar type, standing for ml_dtypes'
        assert np.dtype(getattr(fnp, n)) == np.dtype(getattr(jnp, n))
    assert fnp.zeros(3, fnp.bfloat16).dtype == jnp.bfloat16
    assert fnp.ones((2,), fnp.int4).dtype == np.dtype(ml_dtypes.int4)
    assert float(fnp.asarray(fnp.bfloat16(1.5))) == 1.5
    x = fnp.arange(4.0).astype(fnp.float8_e4m3fn)
    assert x.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert _bits(x) == _bits(jnp.arange(4.0).astype(jnp.float8_e4m3fn))


@pytest.mark.parametrize("a", NARROW, ids=str)
def test_promotion_table_matches_jax(a):
    if not hasattr(jnp, a.name):
        pytest.skip(f"the installed jax has no {a.name} (the oracle lacks it)")
    for b in NARROW + STANDARD:
        if not hasattr(jnp, b.name) and b in NARROW:
            continue
        assert _ours_promote(a, b) == _jax_promote(a, b), (a, b)
        assert _ours_promote(b, a) == _jax_promote(b, a), (b, a)


def test_promotion_examples_and_weak_scalars():
    bf = np.ones(3, ml_dtypes.bfloat16)
    assert fnp.add(bf, np.ones(3, np.float16)).dtype == np.float32
    assert fnp.add(bf, 1.5).dtype == ml_dtypes.bfloat16
    assert fnp.multiply(bf, 2).dtype == ml_dtypes.bfloat16
    assert fnp.add(bf, np.ones(3, np.int32)).dtype == ml_dtypes.bfloat16
    i4 = np.ones(3, ml_dtypes.int4)
    assert fnp.add(i4, 1).dtype == ml_dtypes.int4
    assert fnp.result_type(bf, 2.0) == ml_dtypes.bfloat16
    assert fnp.result_type(ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2) == ml_dtypes.float8_e5m2
    # inside a trace too
    assert funcad.jit(lambda x: x * 2.0)(bf).dtype == ml_dtypes.bfloat16


def test_promotion_errors_are_clear():
    f8a = np.ones(2, ml_dtypes.float8_e4m3fn)
    f8b = np.ones(2, ml_dtypes.float8_e5m2)
    with pytest.raises(FuncadTypeError, match="8-bit floats do not support implicit promotion"):
        fnp.add(f8a, f8b)
    with pytest.raises(FuncadTypeError, match="4-bit integers do not support"):
        fnp.add(np.ones(2, ml_dtypes.int4), np.ones(2, np.int8))
    with pytest.raises(FuncadTypeError, match="astype"):
        fnp.promote_types(ml_dtypes.float8_e4m3fn, ml_dtypes.bfloat16)


@pytest.mark.parametrize("name", narrow.NAMES)
def test_finfo_iinfo(name):
    d = getattr(ml_dtypes, name)
    if narrow.kind(d) == "f":
        ours, ref = fnp.finfo(d), jnp.finfo(d)
        for attr in ("bits", "eps", "max", "min", "tiny", "nexp", "nmant"):
            assert getattr(ours, attr) == getattr(ref, attr), attr
    else:
        ours, ref = fnp.iinfo(d), jnp.iinfo(d)
        assert (ours.min, ours.max, ours.bits) == (ref.min, ref.max, ref.bits)
    assert fnp.finfo(np.float32).eps == np.finfo(np.float32).eps


def test_issubdtype_and_isdtype():
    assert fnp.issubdtype(fnp.bfloat16, fnp.floating) and fnp.issubdtype(fnp.bfloat16, fnp.inexact)
    assert fnp.issubdtype(fnp.int4, np.signedinteger) and fnp.issubdtype(fnp.uint2, np.unsignedinteger)
    assert not fnp.issubdtype(fnp.int4, fnp.floating)
    assert fnp.issubdtype(fnp.float8_e4m3fn, fnp.float8_e4m3fn)
    assert fnp.isdtype(fnp.bfloat16, "real floating") and fnp.isdtype(fnp.int4, "signed integer")
    assert fnp.issubdtype(np.float32, fnp.floating)


_UNARY = {"sin": (fnp.sin, jnp.sin), "exp": (fnp.exp, jnp.exp), "log": (fnp.log, jnp.log),
          "tanh": (fnp.tanh, jnp.tanh), "sqrt": (fnp.sqrt, jnp.sqrt), "neg": (fnp.negative, jnp.negative),
          "square": (fnp.square, jnp.square), "floor": (fnp.floor, jnp.floor)}
_BINARY = {"add": (fnp.add, jnp.add), "mul": (fnp.multiply, jnp.multiply),
           "div": (fnp.divide, jnp.divide), "max": (fnp.maximum, jnp.maximum),
           "pow": (fnp.power, jnp.power)}
_REDUCE = {"sum": (fnp.sum, jnp.sum), "sum0": (lambda x: fnp.sum(x, 0), lambda x: jnp.sum(x, 0)),
           "mean": (fnp.mean, jnp.mean), "prod1": (lambda x: fnp.prod(x, 1), lambda x: jnp.prod(x, 1)),
           "max": (fnp.max, jnp.max), "min1": (lambda x: fnp.min(x, 1), lambda x: jnp.min(x, 1)),
           "argmax": (fnp.argmax, jnp.argmax)}


@pytest.mark.parametrize("dt", ["bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"])
def test_eager_and_jit_bits_match_jax(dt):
    d = np.dtype(getattr(ml_dtypes, dt, None) or dt)
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 2.0, (6, 5)).astype(d)
    y = rng.uniform(0.1, 2.0, (6, 5)).astype(d)
    for name, (f, g) in _UNARY.items():
        ref = _bits(g(jnp.asarray(x)))
        assert _bits(f(x)) == ref, (dt, name, "eager")
        assert _bits(funcad.jit(f)(x)) == ref, (dt, name, "jit")
    for name, (f, g) in _BINARY.items():
        ref = _bits(g(jnp.asarray(x), jnp.asarray(y)))
        assert _bits(f(x, y)) == ref, (dt, name, "eager")
        assert _bits(funcad.jit(f)(x, y)) == ref, (dt, name, "jit")
    for name, (f, g) in _REDUCE.items():
        ref = _bits(g(jnp.asarray(x)))
        assert _bits(f(x)) == ref, (dt, name, "eager")
        assert _bits(funcad.jit(f)(x)) == ref, (dt, name, "jit")
    ref = _bits(jnp.asarray(x) @ jnp.asarray(y).T)
    assert _bits(fnp.matmul(x, y.T)) == _bits(funcad.jit(fnp.matmul)(x, y.T)) == ref
    assert _bits(fnp.add(x, 1.5)) == _bits(jnp.asarray(x) + 1.5)


def test_softmax_close_to_jax_in_bfloat16():
    # jax.nn.softmax is jitted as one fused program (XLA keeps excess precision inside a
    # fusion), so the last bit may differ from op-by-op rounding: compare to within 1 ulp.
    x = np.random.default_rng(2).normal(size=(4, 7)).astype(ml_dtypes.bfloat16)
    ref = np.asarray(jax.nn.softmax(jnp.asarray(x))).astype(np.float32)
    for got in (funcad.nn.softmax(x), funcad.jit(funcad.nn.softmax)(x)):
        assert np.asarray(got).dtype == ml_dtypes.bfloat16
        np.testing.assert_allclose(np.asarray(got).astype(np.float32), ref, rtol=2 ** -7)


@pytest.mark.parametrize("src,dst", list(itertools.product(
    ["float32", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4", "uint4", "int2"],
    ["float32", "bfloat16", "float16", "float8_e4m3fn", "float8_e5m2fnuz", "float8_e3m4", "int8",
     "int4", "uint2"])))
def test_astype_round_trips_match_jax(src, dst):
    s = np.dtype(getattr(ml_dtypes, src, None) or src)
    t = np.dtype(getattr(ml_dtypes, dst, None) or dst)
    x = np.array([0.0, 1.0, -1.0, 1.5, 3.0, -2.0, 0.25, 6.0], np.float32)
    if narrow.kind(s) in "iu" or narrow.kind(t) in "iu":
        x = np.array([0, 1, 1, 0, 1, 0, 1, 1], np.float32)
    xs = x.astype(s)
    ref = _bits(jnp.asarray(xs).astype(t))
    assert _bits(fnp.asarray(xs).astype(t)) == ref
    assert _bits(funcad.jit(lambda v: v.astype(t))(xs)) == ref
    assert _bits(funcad.lax.convert_element_type(xs, t)) == ref


@pytest.mark.parametrize("src,dst,shape", [
    ("bfloat16", "uint16", (3,)), ("bfloat16", "uint8", (3,)), ("uint8", "float8_e4m3fn", (4,)),
    ("int4", "uint8", (3, 2)), ("uint8", "int4", (3,)), ("int4", "uint4", (5,)),
    ("uint8", "int2", (2,)), ("float4_e2m1fn", "uint4", (4,)), ("uint16", "bfloat16", (3,)),
    ("float32", "bfloat16", (2,)), ("uint4", "uint8", (2, 2))])
def test_bitcast_convert_type_matches_jax(src, dst, shape):
    s = np.dtype(getattr(ml_dtypes, src, None) or src)
    t = np.dtype(getattr(ml_dtypes, dst, None) or dst)
    bits = np.random.default_rng(3).integers(0, 2 ** narrow.bit_width(s), shape)
    x = bits.astype(np.dtype(f"u{s.itemsize}")).view(s)
    if s == np.float32:
        x = np.array([1.5, -2.25], np.float32).reshape(shape)
    ref = _bits(jax.lax.bitcast_convert_type(jnp.asarray(x), t))
    assert _bits(funcad.lax.bitcast_convert_type(x, t)) == ref
    assert _bits(funcad.jit(lambda v: funcad.lax.bitcast_convert_type(v, t))(x)) == ref


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_grad_in_half_precision_matches_jax(dt):
    d = np.dtype(getattr(ml_dtypes, dt, None) or dt)
    x = np.linspace(-1.0, 2.0, 7).astype(d)

    def f(m):
        return lambda v: m.sum(m.sin(v) * v + m.exp(v * 0.5))

    ref = jax.grad(f(jnp))(jnp.asarray(x))
    got = funcad.grad(f(fnp))(x)
    assert np.asarray(got).dtype == d
    assert _bits(got) == _bits(ref)
    np.testing.assert_allclose(np.asarray(funcad.jit(funcad.grad(f(fnp)))(x)).astype(np.float32),
                               np.asarray(ref).astype(np.float32), rtol=2 ** -7)
    g2 = funcad.grad(funcad.grad(lambda v: fnp.sin(v) * v))(d.type(0.5))
    assert np.asarray(g2).dtype == d
    assert _bits(g2) == _bits(jax.grad(jax.grad(lambda v: jnp.sin(v) * v))(jnp.asarray(0.5, d)))


def test_grad_of_narrow_integers_is_an_error():
    with pytest.raises(FuncadTypeError, match="float inputs"):
        funcad.grad(lambda v: fnp.sum(v.astype(np.float32)))(np.ones(3, ml_dtypes.int4))


def test_short_names_in_jaxprs():
    jaxpr = funcad.make_jaxpr(lambda x, y: (x * 2, y))(np.ones(2, ml_dtypes.bfloat16),
                                                        np.ones(3, ml_dtypes.int4))
    text = str(jaxpr)
    assert "bf16[2]" in text and "i4[3]" in text


def test_stablehlo_types():
    for name, hlo in [("bfloat16", "bf16"), ("float8_e4m3fn", "f8E4M3FN"), ("float8_e5m2", "f8E5M2"),
                      ("int4", "i4"), ("uint4", "ui4"), ("int2", "i2"), ("uint2", "ui2"),
                      ("float8_e8m0fnu", "f8E8M0FNU"), ("float4_e2m1fn", "f4E2M1FN")]:
        x = np.zeros(2, getattr(ml_dtypes, name))
        assert f"tensor<2x{hlo}>" in funcad.jit(lambda v: v).lower(x).as_text()


@pytest.mark.parametrize("name", ["int1", "uint1"])
def test_one_bit_integers_under_jit_raise_clearly(name):
    x = np.zeros(3, getattr(ml_dtypes, name))
    assert fnp.add(x, x).dtype == x.dtype  # eager works
    with pytest.raises(UnsupportedError, match="convert"):
        funcad.jit(lambda v: v)(x)


def test_float6_under_jit():
    x = np.array([1.0, 0.5, -2.0], np.float32).astype(ml_dtypes.float6_e2m3fn)
    if _OLD_JAXLIB:
        with pytest.raises(xla.BackendError, match="jaxlib"):
            funcad.jit(lambda v: v)(x)
    else:
        assert _bits(funcad.jit(lambda v: v)(x)) == _bits(x)
        assert _bits(funcad.jit(lambda v: v.astype(ml_dtypes.float6_e2m3fn))(np.float32([0.3, 7.0]))) == \
            _bits(np.float32([0.3, 7.0]).astype(ml_dtypes.float6_e2m3fn))
    assert _bits(fnp.add(x, x)) == _bits((x.astype(np.float32) * 2).astype(x.dtype))  # eager


def test_vmap_in_bfloat16():
    x = np.random.default_rng(4).normal(size=(3, 4)).astype(ml_dtypes.bfloat16)
    got = funcad.vmap(lambda r: fnp.sum(r * r))(x)
    assert _bits(got) == _bits(jax.vmap(lambda r: jnp.sum(r * r))(jnp.asarray(x)))


@pytest.mark.parametrize("pet", [np.float32, ml_dtypes.bfloat16])
def test_scaled_matmul_matches_jax(pet):
    if tuple(int(p) for p in jax.__version__.split(".")[:2]) < (0, 7):
        pytest.skip("jax < 0.7 has no CPU path for scaled_matmul (the oracle lacks it)")
    rng = np.random.default_rng(5)
    a = rng.normal(size=(2, 3, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.normal(size=(2, 5, 64)).astype(ml_dtypes.float8_e4m3fn)
    sa = rng.uniform(0.5, 4, (2, 3, 2)).astype(ml_dtypes.float8_e8m0fnu)
    sb = rng.uniform(0.5, 4, (2, 5, 2)).astype(ml_dtypes.float8_e8m0fnu)
    ref = _bits(jax.nn.scaled_matmul(a, b, sa, sb, pet))
    assert _bits(funcad.nn.scaled_matmul(a, b, sa, sb, pet)) == ref
    assert _bits(funcad.jit(funcad.nn.scaled_matmul, static_argnums=4)(a, b, sa, sb, pet)) == ref


def test_scaled_matmul_errors():
    with pytest.raises(ValueError, match="matching batch"):
        funcad.nn.scaled_matmul(np.ones((1, 2, 4)), np.ones((1, 2, 8)), np.ones((1, 2, 1)),
                                np.ones((1, 2, 1)))
    with pytest.raises(ValueError, match="3-d"):
        funcad.nn.scaled_matmul(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 1)), np.ones((2, 1)))
