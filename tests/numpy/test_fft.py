"""funcad.numpy.fft and the fft primitive beyond the op table: the rows against
JAX's derivatives, complex directions, dtypes, keyword variants, NumPy's error
cases, the primitive's rules one by one, and the helpers' arguments."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
from funcad.core.errors import AxisError, FuncadTypeError, FuncadValueError
from funcad.primitives.fft import FftType, fft_p
from funcad.test_util import check_grads
from tests.op_table import OPS

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

FFT_ROWS = [s for s in OPS if "fft" in s.name and s.diff]  # every row of tests/op_rows/fft.py
TRANSFORMS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
              "fftn", "ifftn", "rfftn", "irfftn"]
REAL_IN = {"rfft", "ihfft", "rfft2", "rfftn"}


def _input(name, shape=(3, 6), dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if name not in REAL_IN:
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype if name in REAL_IN else np.result_type(dtype, np.complex64))


def test_every_row_of_this_module_is_collected():
    assert len(FFT_ROWS) >= 30
    assert {s.name for s in FFT_ROWS} >= {"fft_complex", "irfftn_four_axes", "hfft_default_n", "fftshift"}


# ------------------------------------------------------------ against JAX ----

@pytest.mark.parametrize("spec", [s for s in FFT_ROWS if s.jax_fun], ids=lambda s: s.name)
def test_rows_match_jax_grad_jvp_and_hessian(spec):
    from tests.transforms.test_ad import _compare_with_jax
    _compare_with_jax(spec)


@pytest.mark.parametrize("name", TRANSFORMS)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_values_and_dtypes_match_numpy_and_jax(name, norm):
    for dtype in (np.float32, np.float64):
        x = _input(name, dtype=dtype)
        got = getattr(fnp.fft, name)(x, norm=norm)
        want = getattr(np.fft, name)(x, norm=norm)
        theirs = getattr(jnp.fft, name)(x, norm=norm)
        assert got.dtype == want.dtype == theirs.dtype
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        np.testing.assert_allclose(got, theirs, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype,want", [(np.float32, np.complex64), (np.float64, np.complex128),
                                        (np.float16, np.complex64), (np.int32, np.complex128),
                                        (np.bool_, np.complex128), (np.complex64, np.complex64)])
def test_input_dtypes_convert_as_numpy(dtype, want):
    x = np.arange(6).astype(dtype)
    assert fnp.fft.fft(x).dtype == np.fft.fft(x).dtype == want
    np.testing.assert_allclose(fnp.fft.fft(x), np.fft.fft(x), rtol=1e-6)
    assert funcad.jit(fnp.fft.fft)(x).dtype == want
    if dtype != np.complex64:
        real = np.finfo(want).dtype
        assert fnp.fft.rfft(x).dtype == want
        assert fnp.fft.irfft(x).dtype == real  # NumPy says float16 for float16, JAX float32


def test_complex_input_gradient_is_jaxs_conjugate_convention():
    z = _input("fft", (8,))
    filt = _input("fft", (8,), seed=1)

    def loss(m, z):
        return m.sum(m.abs(m.fft.ifft(m.fft.fft(z) * filt)) ** 2 + m.real(m.fft.rfft(m.real(z))).sum())
    got = funcad.grad(lambda z: loss(fnp, z))(z)
    want = jax.grad(lambda z: loss(jnp, z))(z)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(funcad.jit(funcad.grad(lambda z: loss(fnp, z)))(z), want, rtol=1e-12)


@pytest.mark.parametrize("name", ["fft", "ifft", "irfft", "hfft", "fft2", "irfftn"])
def test_complex_directions_against_finite_differences(name):
    z = _input(name, (2, 4))
    f = getattr(fnp.fft, name)
    check_grads(f, (z,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", TRANSFORMS)
def test_vjp_and_jvp_with_complex_cotangents_match_jax(name):
    x = _input(name, (2, 5))
    f, jf = getattr(fnp.fft, name), getattr(jnp.fft, name)
    y, pullback = funcad.vjp(f, x)
    rng = np.random.default_rng(3)
    ct = rng.standard_normal(y.shape) + (1j * rng.standard_normal(y.shape) if y.dtype.kind == "c" else 0)
    ct = ct.astype(y.dtype)
    np.testing.assert_allclose(pullback(ct)[0], jax.vjp(jf, x)[1](ct)[0], rtol=1e-12, atol=1e-13)
    t = _input(name, (2, 5), seed=4)
    np.testing.assert_allclose(funcad.jvp(f, (x,), (t,))[1], jax.jvp(jf, (x,), (t,))[1], rtol=1e-12, atol=1e-13)


def test_holomorphic_jacobians_are_the_dft_matrix():
    n = 5
    dft = np.fft.fft(np.eye(n), axis=0)
    z = _input("fft", (n,))
    np.testing.assert_allclose(funcad.jacfwd(fnp.fft.fft, holomorphic=True)(z), dft, atol=1e-12)
    np.testing.assert_allclose(funcad.jacrev(fnp.fft.fft, holomorphic=True)(z), dft, atol=1e-12)
    np.testing.assert_allclose(funcad.jacrev(fnp.fft.ifft, holomorphic=True)(z), np.linalg.inv(dft), atol=1e-12)


# ------------------------------------------------------- keyword variants ----

@pytest.mark.parametrize("name,kw", [
    ("fft", dict(n=1)), ("fft", dict(n=11, axis=0)), ("ifft", dict(n=2, axis=-2)),
    ("rfft", dict(n=1)), ("rfft", dict(n=9, axis=0)), ("irfft", dict(n=1)), ("irfft", dict(n=2)),
    ("irfft", dict(n=13, axis=0)), ("hfft", dict(n=3)), ("ihfft", dict(n=11)),
    ("fftn", dict(s=(4,), axes=(1,))), ("fftn", dict(s=(2, 9), axes=(0, 1))), ("ifftn", dict(axes=(1,))),
    ("ifftn", dict(axes=(-1, 0), s=(3, 5))), ("rfftn", dict(s=(5,), axes=(-1,))), ("irfftn", dict(s=(4, 3), axes=(0, 1))),
    ("irfftn", dict(axes=(0,))), ("fft2", dict(axes=(1, 0))), ("rfft2", dict(s=(2, 2))),
    ("irfft2", dict(axes=(-1, -2))), ("ifft2", dict(s=(7, 1), axes=(0, 1))),
])
def test_keyword_variants_match_numpy_and_jax(name, kw):
    x = _input(name, (3, 6))
    got = getattr(fnp.fft, name)(x, **kw)
    np.testing.assert_allclose(got, getattr(np.fft, name)(x, **kw), atol=1e-12)
    np.testing.assert_allclose(got, getattr(jnp.fft, name)(x, **kw), atol=1e-12)
    np.testing.assert_allclose(funcad.jit(lambda x: getattr(fnp.fft, name)(x, **kw))(x), got, atol=1e-12)


def test_s_without_axes_takes_the_last_axes_like_jax():
    x = _input("fftn", (2, 3, 4))
    for name in ("fftn", "ifftn", "irfftn"):
        np.testing.assert_allclose(getattr(fnp.fft, name)(x, s=(5, 6)), getattr(jnp.fft, name)(x, s=(5, 6)),
                                   atol=1e-12)
    np.testing.assert_allclose(fnp.fft.rfftn(x.real, s=(3,)), jnp.fft.rfftn(x.real, s=(3,)), atol=1e-12)


def test_no_axes_returns_the_input_as_complex_like_jax():
    x = np.ones((2, 3))
    got = fnp.fft.fftn(x, axes=())
    assert got.dtype == np.complex128 and np.array_equal(got, jnp.fft.fftn(x, axes=()))
    assert fnp.fft.fftn(np.array(2.0)).dtype == np.complex128


def test_five_axes_and_more_than_three_axes_under_transforms():
    x = _input("fftn", (2, 1, 3, 2, 2))
    np.testing.assert_allclose(fnp.fft.fftn(x), np.fft.fftn(x), atol=1e-12)
    r = _input("rfftn", (2, 3, 2, 2, 3))
    np.testing.assert_allclose(fnp.fft.rfftn(r), np.fft.rfftn(r), atol=1e-12)
    c = np.fft.rfftn(r)
    np.testing.assert_allclose(fnp.fft.irfftn(c, r.shape), r, atol=1e-12)
    # Five axes: two primitives, each with its own rules.
    jaxpr = funcad.make_jaxpr(lambda c: fnp.fft.irfftn(c, r.shape))(c)
    assert [e.params["fft_lengths"] for e in jaxpr.eqns if e.prim is fft_p] == [(2, 3), (2, 2, 3)]
    ct = _input("fftn", c.shape, seed=2)
    got = funcad.vjp(fnp.fft.rfftn, r)[1](ct)[0]
    np.testing.assert_allclose(got, jax.vjp(jnp.fft.rfftn, r)[1](ct)[0], atol=1e-11)
    np.testing.assert_allclose(funcad.vmap(fnp.fft.fftn)(x), np.stack([np.fft.fftn(v) for v in x]), atol=1e-12)


# ------------------------------------------------------------ error cases ----

@pytest.mark.parametrize("call,err,match", [
    # JAX's message; a 0-point transform from the input's shape is an empty result instead
    # (tests/numpy/test_edge_numbers.py)
    (lambda: fnp.fft.fft(np.ones(4), n=0), FuncadValueError, r"Shape should be positive \(s=\(0,\)\)"),
    (lambda: fnp.fft.rfft(np.ones(4), n=-2), FuncadValueError, r"Shape should be positive \(s=\(-2,\)\)"),
    (lambda: fnp.fft.rfft(np.ones(0)), FuncadValueError, r"0 points along axis 0"),
    (lambda: fnp.fft.fftn(np.ones((2, 2)), s=(2, 0)), FuncadValueError, "Shape should be positive"),
    (lambda: fnp.fft.fft(np.ones(4), axis=1), AxisError, "axis 1 is out of bounds"),
    (lambda: fnp.fft.fft(np.array(1.0)), AxisError, "out of bounds"),
    (lambda: fnp.fft.fftn(np.ones((2, 3)), s=(2, 3, 4)), AxisError, "only 2 axes"),
    (lambda: fnp.fft.fftn(np.ones((2, 3)), s=(2,), axes=(0, 1)), FuncadValueError,
     "Shape and axes have different lengths"),
    (lambda: fnp.fft.fftn(np.ones((2, 3)), axes=(0, -2)), FuncadValueError, "repeated axes"),
    (lambda: fnp.fft.rfft(np.ones(3, complex)), FuncadTypeError, "real input"),
    (lambda: fnp.fft.fft(np.ones(4), norm="bad"), FuncadValueError, "invalid norm value 'bad'"),
    (lambda: fnp.fft.fft(np.ones(4), n=2.0), FuncadTypeError, "n must be an int"),
    (lambda: fnp.fft.fft(np.ones((2, 2)), axis=(0,)), FuncadValueError, "use fftn"),
    (lambda: fnp.fft.fft2(np.ones((2, 3, 4)), axes=(0,)), FuncadValueError, "only supports 2 axes"),
    (lambda: fnp.fft.fftfreq([4]), FuncadValueError, "only takes an int"),
    (lambda: fnp.fft.rfftfreq(4, d=[0.1]), FuncadValueError, "single value"),
    (lambda: fnp.fft.fftfreq(4, device="cpu"), FuncadTypeError, "device must be"),
    (lambda: lax.fft(np.ones((3, 4), complex), "irfft", (8,)), FuncadTypeError, r"must be \(5,\)"),
    (lambda: lax.fft(np.ones(4), "nope", (4,)), FuncadTypeError, "unknown fft_type"),
])
def test_errors_name_the_problem(call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_errors_are_the_exception_types_numpy_raises():
    # Code that catches NumPy's exceptions catches funcad's too.
    for call, np_call in [(lambda m: m.fft.fft(np.ones(4), n=0), ValueError),
                          (lambda m: m.fft.fft(np.ones(4), axis=2), IndexError),
                          (lambda m: m.fft.fft(np.ones(4), norm="x"), ValueError),
                          (lambda m: m.fft.rfft(np.ones(4, complex)), TypeError)]:
        with pytest.raises(np_call):
            call(np)
        with pytest.raises(np_call):
            call(fnp)


def test_errors_under_jit_are_the_same():
    with pytest.raises(FuncadValueError, match="Shape should be positive"):
        funcad.jit(lambda x: fnp.fft.irfft(x, n=0))(np.ones((2, 1), complex))


# ------------------------------------------------------------- primitive ----

def _prim_input(typ, shape):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape)
    return x if typ == FftType.RFFT else x + 1j * rng.standard_normal(shape)


PRIM_CASES = [(FftType.FFT, (3, 5), (5,)), (FftType.IFFT, (2, 4, 6), (4, 6)), (FftType.RFFT, (3, 7), (7,)),
              (FftType.RFFT, (2, 4, 6), (4, 6)), (FftType.IRFFT, (3, 5), (8,)), (FftType.IRFFT, (3, 4), (7,)),
              (FftType.IRFFT, (2, 3, 4), (2, 3, 6)), (FftType.RFFT, (2, 3, 5), (2, 3, 5)),
              (FftType.FFT, (2, 2, 3, 4), (2, 3, 4)), (FftType.IRFFT, (2, 1), (1,)), (FftType.RFFT, (3, 1), (1,))]


@pytest.mark.parametrize("typ,shape,lengths", PRIM_CASES, ids=lambda v: str(v))
def test_primitive_transpose_matches_jax_vjp(typ, shape, lengths):
    x = _prim_input(typ, shape)
    f = lambda x: lax.fft(x, typ, lengths)  # noqa: E731
    jf = lambda x: jax.lax.fft(x, jax.lax.FftType(int(typ)), lengths)  # noqa: E731
    y = f(x)
    np.testing.assert_allclose(y, jf(x), atol=1e-12)
    rng = np.random.default_rng(6)
    ct = rng.standard_normal(y.shape) + (1j * rng.standard_normal(y.shape) if y.dtype.kind == "c" else 0)
    ct = ct.astype(y.dtype)
    got = funcad.vjp(f, x)[1](ct)[0]
    assert got.dtype == x.dtype
    np.testing.assert_allclose(got, jax.vjp(jf, x)[1](ct)[0], atol=1e-12)
    # <J t, c> = <t, J^T c>, the real inner product of the linear map's transpose
    t = _prim_input(typ, shape) * 0.7 + 0.1
    lhs = np.real(np.sum(funcad.jvp(f, (x,), (t,))[1] * ct))
    assert np.isclose(lhs, np.real(np.sum(t * got)), rtol=1e-10)


@pytest.mark.parametrize("typ,shape,lengths", PRIM_CASES, ids=lambda v: str(v))
def test_primitive_under_jit_and_transposed_under_jit(typ, shape, lengths):
    x = _prim_input(typ, shape)
    f = lambda x: lax.fft(x, typ, lengths)  # noqa: E731
    y = f(x)
    np.testing.assert_allclose(funcad.jit(f)(x), y, atol=1e-12)
    pull = lambda x, ct: funcad.vjp(f, x)[1](ct)[0]  # noqa: E731
    np.testing.assert_allclose(funcad.jit(pull)(x, y), pull(x, y), atol=1e-11)


@pytest.mark.parametrize("in_axis", [0, 1, 2, -1])
@pytest.mark.parametrize("typ", list(FftType))
def test_batching_along_any_axis(typ, in_axis):
    lengths = (4, 6) if typ != FftType.IRFFT else (4, 10)
    shape = [4, 6 if typ != FftType.IRFFT else 6]
    shape.insert(in_axis % 3, 3)
    x = _prim_input(typ, tuple(shape))
    f = lambda v: lax.fft(v, typ, lengths)  # noqa: E731
    got = funcad.vmap(f, in_axes=in_axis)(x)
    want = np.stack([f(v) for v in np.moveaxis(x, in_axis, 0)])
    np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_allclose(funcad.jit(funcad.vmap(f, in_axes=in_axis))(x), want, atol=1e-12)


def test_jaxpr_prints_like_jaxs():
    text = str(funcad.make_jaxpr(fnp.fft.rfft)(np.ones(8)))
    assert "c128[5] = fft[fft_lengths=(8,), fft_type=2] a" in text


def test_lax_fft_takes_names_and_enums_and_converts_like_jax():
    x = np.arange(4.0, dtype=np.float32)
    for t in ("fft", "FFT", FftType.FFT):
        got = lax.fft(x, t, (4,))
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, jax.lax.fft(x, "fft", (4,)), rtol=1e-6)
    assert lax.fft(x, "ifft", ()).dtype == np.complex64  # no axes: only the conversion


def test_to_python_writes_runnable_numpy():
    def f(x):
        return fnp.fft.irfft(fnp.fft.rfft(x) * 2.0, 6), fnp.fft.ifft2(fnp.fft.fft2(x.astype(np.float32)))
    x = np.random.default_rng(0).standard_normal((2, 6))
    src = funcad.to_python(funcad.make_jaxpr(f)(x), "g")
    ns: dict = {}
    exec(src, ns)
    for got, want in zip(ns["g"](x), f(x)):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------- helpers ----

def test_fftfreq_dtype_and_device():
    assert fnp.fft.fftfreq(5).dtype == np.float64
    assert fnp.fft.fftfreq(5, dtype=np.float32).dtype == np.float32
    # XLA divides by a constant as a multiply by its reciprocal: within an ulp of JAX
    np.testing.assert_allclose(fnp.fft.rfftfreq(7, 0.5, dtype=np.float32),
                               jnp.fft.rfftfreq(7, 0.5, dtype=np.float32), rtol=1e-7)
    np.testing.assert_array_equal(fnp.fft.rfftfreq(7, 0.5, dtype=np.float32),
                                  np.fft.rfftfreq(7, 0.5).astype(np.float32))
    np.testing.assert_array_equal(fnp.fft.fftfreq(8, 0.25), np.fft.fftfreq(8, 0.25))
    np.testing.assert_array_equal(fnp.fft.fftfreq(0), np.zeros(0))
    on_device = fnp.fft.fftfreq(4, device=funcad.devices("cpu")[0])
    assert isinstance(on_device, funcad.Array)
    np.testing.assert_array_equal(np.asarray(on_device), np.fft.fftfreq(4))
    # d traced: differentiable in d
    np.testing.assert_allclose(funcad.grad(lambda d: fnp.sum(fnp.fft.fftfreq(4, d) ** 2))(0.5),
                               jax.grad(lambda d: jnp.sum(jnp.fft.fftfreq(4, d) ** 2))(0.5))


@pytest.mark.parametrize("axes", [None, 0, 1, (0, 1), (1,), [-1, 0]])
def test_shifts_match_numpy(axes):
    x = np.arange(15.0).reshape(3, 5)
    np.testing.assert_array_equal(fnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
    np.testing.assert_array_equal(fnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))
    np.testing.assert_array_equal(fnp.fft.ifftshift(fnp.fft.fftshift(x, axes), axes), x)


def test_namespace_has_every_name_of_jax_numpy_fft():
    theirs = {n for n in dir(jnp.fft) if not n.startswith("_")}
    assert theirs == set(fnp.fft.__all__)
    assert {"fft", "FftType"} <= set(lax.__all__)
