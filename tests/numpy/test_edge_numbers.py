"""Edge numbers (complex, infinite, zero-size, bool and small-integer inputs, narrow floats):
each case against JAX, eager and under jit, grad and vmap where they apply, in 64-bit mode (JAX with x64 on) and 32-bit mode (JAX's default)."""
import warnings

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
import funcad.scipy.special as fss


@pytest.fixture(params=[True, False], ids=["x64", "x32"])
def mode(request):
    """Both libraries in the same precision mode for one test, then back."""
    with jax.enable_x64(request.param), funcad.enable_x64(request.param):
        yield request.param


def same(got, want, rtol=None):
    """Equal dtype and shape, and values to the dtype's precision (NaNs and signed zeros
    where the values are exact)."""
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    if got.dtype.kind == "V":  # bfloat16: 8 significant bits, compared as float32
        got, want, rtol = got.astype(np.float32), want.astype(np.float32), 8e-3 if rtol is None else rtol
    if rtol is None:
        rtol = {4: 1e-6, 8: 1e-14, 2: 1e-3}.get(np.finfo(got.dtype).bits // 8
                                                 if got.dtype.kind in "fc" else 0, 0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
    if rtol == 0 and got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def check(fname, *args, fmod=fnp, jmod=jnp, transforms=("eager", "jit")):
    f, j = getattr(fmod, fname), getattr(jmod, fname)
    want = j(*args)
    if "eager" in transforms:
        _same_tree(f(*args), want)
    if "jit" in transforms:
        _same_tree(funcad.jit(f)(*args), want)
    if "vmap" in transforms:
        _same_tree(funcad.vmap(f)(*args), jax.vmap(j)(*args))


Z1 = np.array([0.3 + 0.5j, -1 + 2j, 3 - 4j, -2 - 3j])
Z2 = np.array([-0.2 - 0.1j, 0.5j, 2 + 4j, 1 + 3.1j])


def test_logaddexp_of_complex(mode):
    d = np.complex128 if mode else np.complex64
    check("logaddexp", Z1.astype(d), Z2.astype(d), transforms=("eager", "jit", "vmap"))
    g = funcad.grad(lambda x: fnp.logaddexp(x, 1.0 + 0.5j).real)(0.3 + 0.2j)
    same(g, jax.grad(lambda x: jnp.logaddexp(x, 1.0 + 0.5j).real)(0.3 + 0.2j))


def test_float_power_of_complex_base(mode):
    check("float_power", Z1, 2.5)
    check("float_power", Z1, Z2)
    check("float_power", np.array([2.0, 3.0]), Z2[:2])


def test_floor_divide_by_infinity_and_zero(mode):
    a = np.array([-2.0, 2.0, -0.0, 0.0, 1.0, -1.0, 5.0, -5.0, np.inf, 7.0, -7.5, 3.0])
    b = np.array([np.inf, np.inf, np.inf, 0.0, 0.0, 0.0, np.inf, -np.inf, 2.0, -0.0, 2.0, -np.inf])
    check("floor_divide", a, b, transforms=("eager", "jit", "vmap"))
    same(funcad.grad(fnp.floor_divide)(3.0, 2.0), jax.grad(jnp.floor_divide)(3.0, 2.0))


def test_spacing_and_frexp_derivatives(mode):
    for x in (1.5, -3.0, 1e-3):
        same(funcad.grad(fnp.spacing)(x), jax.grad(jnp.spacing)(x))
    xs = [5.0, -3.0, 0.1, 0.0, -0.0, np.inf, np.nan, 1.0]
    fr, jr = (lambda x: fnp.frexp(x)[0]), (lambda x: jnp.frexp(x)[0])
    for x in xs:
        same(funcad.grad(fr)(x), jax.grad(jr)(x))
        same(funcad.jit(funcad.grad(fr))(x), jax.grad(jr)(x))
    same(funcad.vmap(funcad.grad(fr))(np.array(xs[:3])), jax.vmap(jax.grad(jr))(np.array(xs[:3])))
    same(funcad.grad(funcad.grad(fr))(5.0), jax.grad(jax.grad(jr))(5.0))
    check("frexp", np.array([5.0, -0.0, np.inf, 0.375]))


@pytest.mark.parametrize("name", ["argmin", "argmax"])
def test_argminmax_keepdims_without_axis(name, mode):
    x = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, 1.0]])
    for axis in (None, 1):
        f = lambda v, fn: fn(v, axis=axis, keepdims=True)  # noqa: E731
        same(getattr(fnp, name)(x, axis=axis, keepdims=True),
             getattr(jnp, name)(x, axis=axis, keepdims=True))
        same(funcad.jit(lambda v: f(v, getattr(fnp, name)))(x), f(x, getattr(jnp, name)))


UNARY = ["sin", "cos", "exp", "sqrt", "log", "log1p", "expm1", "tanh", "arctan", "cbrt", "exp2",
         "log2", "log10", "sinh", "deg2rad"]


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16"])
def test_small_integer_inputs_to_float_functions_in_32_bit_mode(dtype):
    x = np.array([1, 0, 1], dtype)
    with jax.enable_x64(False), funcad.enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log(0)
        for name in UNARY:
            check(name, x)
        for name in ["xlogy", "xlog1py"]:
            check(name, x, x, fmod=fss, jmod=jss)
        for name in ["logit", "entr", "i0e"]:
            check(name, x, fmod=fss, jmod=jss)
        check("heaviside", x, x)
        check("square", x)
        check("true_divide", x, x)


def test_square_and_heaviside_of_bool(mode):
    b = np.array([True, False])
    check("square", b) if not mode else same(fnp.square(b), np.square(b))  # x64: NumPy's int8
    same(funcad.jit(fnp.square)(b), fnp.square(b))
    h = fnp.heaviside(b, b)
    assert h.dtype.kind == "f"
    same(funcad.jit(fnp.heaviside)(b, b), h)
    np.testing.assert_array_equal(h, [1.0, 0.0])


def test_no_numpy_warnings_from_eager_funcad():
    # The intended IEEE values, silently, as JAX gives them (before: RuntimeWarnings from
    # funcad's own lines: divide by zero in log, invalid value in sqrt, overflow in exp).
    x = np.array([0.0, -1.0, 1000.0])
    with warnings.catch_warnings(record=True) as log:
        got = [fnp.log(x), fnp.sqrt(x), fnp.exp(x), fnp.power(x, 0.5), fnp.divide(1.0, x),
               fnp.floor_divide(x, 0.0), fss.xlogy(1.0, x), fnp.arccosh(x)]
    assert [str(w.message) for w in log] == []
    with jax.enable_x64(True):
        want = [jnp.log(x), jnp.sqrt(x), jnp.exp(x), jnp.power(x, 0.5), jnp.divide(1.0, x),
                jnp.floor_divide(x, 0.0), jss.xlogy(1.0, x), jnp.arccosh(x)]
    for g, w in zip(got, want):
        same(g, w)
    with warnings.catch_warnings(record=True) as log:  # the user's own NumPy code still warns
        warnings.simplefilter("always")
        np.log(np.zeros(1))
    assert len(log) == 1


def test_no_numpy_warnings_from_eager_funcad_under_an_error_filter():
    # pytest's `filterwarnings = error` (numpyro's config) copies the filter list per test and
    # puts "error" in front of funcad's filter: eigh's tangent at tied eigenvalues divided by
    # zero on funcad's lines and failed numpyro's PositiveDefinite check.
    fnp.log(np.ones(1))  # funcad's filter is in the list before the test's copy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, got = funcad.jvp(lambda a: fnp.linalg.eigh(a)[0], (np.eye(3),), (np.eye(3),))
        y = fnp.divide(1.0, np.zeros(2))
    with jax.enable_x64(True):
        _, want = jax.jvp(lambda a: jnp.linalg.eigh(a)[0], (np.eye(3),), (np.eye(3),))
    same(got, want)
    same(y, np.full(2, np.inf))


# ---------------------------------------------- also found: size 0, jit, errors ----

def test_size_zero_inputs(mode):
    x = np.zeros((0, 1), np.float32)
    for f in (lambda v: funcad.random.permutation(funcad.random.key(0), v),
              funcad.jit(lambda v: funcad.random.permutation(funcad.random.key(0), v))):
        same(f(x), jax.random.permutation(jax.random.key(0), x))
    a, b = np.zeros((0, 0), np.float32), np.zeros((0,), np.float32)
    same(fnp.linalg.solve(a, b), jnp.linalg.solve(a, b))
    same(funcad.jit(fnp.linalg.solve)(a, b), jnp.linalg.solve(a, b))
    h = lambda m: m.hessian(lambda v: (v ** 2).sum())  # noqa: E731
    same(h(funcad)(b), h(jax)(b))
    same(funcad.jit(h(funcad))(b), h(jax)(b))


@pytest.mark.parametrize("name", ["angle", "floor", "ceil", "trunc", "square"])
@pytest.mark.parametrize("dtype", ["bool", "int32"])
def test_integer_and_bool_inputs_under_jit(name, dtype, mode):
    x = np.array([1, 0, 1], dtype)
    want = getattr(fnp, name)(x)
    same(funcad.jit(getattr(fnp, name))(x), want)
    if not mode:  # JAX's dtypes in 32-bit mode (64-bit mode follows NumPy's, README)
        check(name, x)


def test_interp_remainder_fmod_of_bools_and_negative_integer_powers(mode):
    t, f = np.array([True, False, True]), np.array([True, True, True])
    for name in ("remainder", "fmod"):
        same(funcad.jit(getattr(fnp, name))(t, f), getattr(fnp, name)(t, f))
        if not mode:
            check(name, t, f)
    xp, fp = np.array([0.0, 1.0]), np.array([2.0, 3.0])
    same(fnp.interp(t, xp, fp), fnp.interp(t.astype(fnp.interp(t, xp, fp).dtype), xp, fp))
    x, y = np.array([0, 1, -1, 2, -2, 1, -1, 3], np.int32), np.array([-1, -2, -3, -1, -2, -5, -4, 2], np.int32)
    check("power", x, y)


def test_complex_order_comparisons_under_jit(mode):
    a = np.array([1 + 1j, 1 + 2j, 2 + 0j, np.nan + 0j, 3 - 1j])
    b = np.array([1 + 2j, 1 + 2j, 1 + 5j, 1 + 0j, 3 - 1j])
    for name in ("less", "less_equal", "greater", "greater_equal"):
        check(name, a, b)


def test_complex_expit_silu_logsumexp(mode):
    import jax.nn as jnn
    import funcad.nn as fnn
    z = np.array([1 + 1j, 0.5j, -2 + 3j])
    check("expit", z, fmod=fss, jmod=jss)
    check("silu", z, fmod=fnn, jmod=jnn)
    check("logsumexp", z, fmod=fss, jmod=jss)
    check("logsumexp", z, fmod=fnn, jmod=jnn)
    same(fss.logsumexp(z, b=np.array([1.0, 2.0, -1.0])), jss.logsumexp(z, b=np.array([1.0, 2.0, -1.0])))
    same(fss.logsumexp(z, return_sign=True), jss.logsumexp(z, return_sign=True))
    same(funcad.grad(lambda v: fss.logsumexp(v).real)(z), jax.grad(lambda v: jss.logsumexp(v).real)(z))


def test_errors_name_the_returned_value_and_the_predicate():
    for f in (lambda x: "a", lambda x: (lambda: x)):
        with pytest.raises(TypeError, match="returned a value of type"):
            funcad.jit(f)(1.0)
    with pytest.raises(TypeError, match="predicate must be a scalar, got 'yes' of type str"):
        funcad.lax.cond("yes", lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="dtype object"):
        fnp.array([object()])
    with pytest.raises(TypeError):
        jnp.array([object()])


def test_scan_with_a_python_int_initial_carry(mode):
    # JAX gives the weakly typed carry the dtype the body makes of it (funcad raised)
    xs = np.arange(3.0)
    f = lambda m: lambda v: m.lax.scan(lambda c, x: (c + x, c * 2), 0, v)[1]  # noqa: E731
    same(f(funcad)(xs), f(jax)(xs))
    same(funcad.jit(f(funcad))(xs), f(jax)(xs))
    g = lambda m: m.grad(lambda v: m.lax.scan(lambda c, x: (c + x * x, c), 0, v)[0])  # noqa: E731
    same(g(funcad)(xs), g(jax)(xs))
    same(funcad.vmap(f(funcad))(np.ones((2, 3))), jax.vmap(f(jax))(np.ones((2, 3))))


def test_found_by_the_edge_fuzzer(mode):
    b = np.array([True, False, True])
    for name in ("add", "multiply", "power", "floor_divide"):
        same(funcad.jit(getattr(fnp, name))(b, b[::-1]), getattr(fnp, name)(b, b[::-1]))
        if not mode or name in ("add", "multiply"):
            check(name, b, b[::-1])
    h = np.array([0.5, 2.5, 7.0], np.float16)
    for name in ("gammaln", "digamma", "expit"):
        check(name, h, fmod=fss, jmod=jss, transforms=("eager", "jit", "vmap"))
    same(funcad.grad(lambda v: fss.gammaln(v).sum())(h), jax.grad(lambda v: jss.gammaln(v).sum())(h))


# ------------------------------------------- complex atan2, while loops, size 0 ----

def test_complex_arctan2(mode):
    # XLA's complex atan2, -i log((x + iy) / sqrt(x^2 + y^2)) (nan where x^2 + y^2 is 0)
    d = np.complex128 if mode else np.complex64
    y = np.array([1 + 2j, 0.3 - 1j, 1 + 0j, 0 + 1j, -2 + 0.1j], d)
    x = np.array([0.7 - 1j, 2 + 0.5j, 1j, 1 + 0j, -1 - 0.1j], d)
    check("arctan2", y, x, transforms=("eager", "jit", "vmap"))
    check("arctan2", y, 2.0)
    check("atan2", y, x, fmod=funcad.lax, jmod=jax.lax)
    f = lambda m, n: m.grad(lambda a, b: n.arctan2(a, b).real.sum(), (0, 1))  # noqa: E731
    for g, w in zip(f(funcad, fnp)(y[:2], x[:2]), f(jax, jnp)(y[:2], x[:2])):
        same(g, w)
    for g, w in zip(funcad.jit(f(funcad, fnp))(y[:2], x[:2]), f(jax, jnp)(y[:2], x[:2])):
        same(g, w)


def _loop_unused(m, use=False):
    def f(x):
        r = m.lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
        return x * 3.0 + (r if use else 0.0)
    return f


def test_reverse_mode_under_jit_through_an_unused_while_loop(mode):
    f, j = _loop_unused(funcad), _loop_unused(jax)
    same(funcad.jit(funcad.grad(f))(1.5), jax.jit(jax.grad(j))(1.5))
    same(funcad.grad(funcad.jit(f))(1.5), jax.grad(jax.jit(j))(1.5))
    same(funcad.vmap(funcad.grad(f))(np.array([1.5, 20.0])), jax.vmap(jax.grad(j))(np.array([1.5, 20.0])))
    # linearize under jit runs the loop forward, as JAX's
    lin = lambda m: m.jit(lambda x: m.linearize(_loop_unused(m, True), x)[1](1.0))  # noqa: E731
    same(lin(funcad)(1.5), lin(jax)(1.5))
    # a used result still needs the trip count: JAX refuses too
    with pytest.raises(TypeError, match="max_steps"):
        funcad.jit(funcad.grad(_loop_unused(funcad, True)))(1.5)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.jit(jax.grad(_loop_unused(jax, True)))(1.5)


@pytest.mark.parametrize("name", ["conj", "real", "copy", "array", "ravel", "squeeze",
                                  "transpose", "identity"])
def test_64_bit_numpy_inputs_in_32_bit_mode_under_vmap_jvp_checkpoint(name):
    # With x64 off, vmap and jvp take a float64 NumPy input as it is (so JAX's vmap of an
    # identity returns it unchanged) and an op making a new array gives float32, as JAX's;
    # checkpoint takes it as float32.
    fn, jn = (lambda x: x, lambda x: x) if name == "identity" else (getattr(fnp, name), getattr(jnp, name))
    a = np.array([[1.0, 2.5], [3.0, -4.0]])
    with jax.enable_x64(False), funcad.enable_x64(False):
        same(funcad.vmap(fn)(a), jax.vmap(jn)(a))
        same(funcad.jit(funcad.vmap(fn))(a), jax.jit(jax.vmap(jn))(a))
        for g, w in zip(funcad.jvp(fn, (a,), (a,)), jax.jvp(jn, (a,), (a,))):
            same(g, w)
        same(funcad.jvp(lambda x: x + 0, (a,), (a,))[1], jax.jvp(lambda x: x + 0, (a,), (a,))[1])
        same(funcad.checkpoint(fn)(a), jax.checkpoint(jn)(a))
        same(funcad.vmap(funcad.grad(lambda v: fn(v).sum()))(a), jax.vmap(jax.grad(lambda v: jn(v).sum()))(a))


def test_complex_abs_of_infinities_under_jit(mode):
    # C99 (NumPy, JAX): |z| is inf when a part is infinite, even with a nan in the other
    inf, nan = np.inf, np.nan
    z = np.array([complex(inf, nan), complex(nan, -inf), complex(-inf, 1), complex(nan, 1), 3 + 4j])
    for d in (np.complex64, np.complex128):
        check("abs", z.astype(d), transforms=("eager", "jit", "vmap"))
        same(funcad.jit(funcad.vmap(fnp.abs))(z.astype(d)), jnp.abs(z.astype(d)))


def _same_tree(got, want):
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


FFT_NAMES = ["fft", "ifft", "irfft", "hfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 0), (0, 3), (1,)])
def test_size_zero_fft(shape, mode):
    # A 0-point transform from the input's shape is an empty result, as JAX's (NumPy raises)
    x = np.zeros(shape, np.float32)
    for name in FFT_NAMES:
        if name[-1] == "2" and len(shape) < 2 or shape == (1,) and name not in ("irfft", "hfft") \
                or name.startswith("rfft") and shape[-1] == 0:  # JAX fails in XLA there
            continue
        f, j = getattr(fnp.fft, name), getattr(jnp.fft, name)
        _same_tree(f(x), j(x))
        _same_tree(funcad.jit(f)(x), j(x))
    if len(shape) == 2:
        _same_tree(funcad.vmap(fnp.fft.fft)(x), jax.vmap(jnp.fft.fft)(x))
    g = lambda m, n: m.grad(lambda v: n.fft.fft(v).real.sum())  # noqa: E731
    _same_tree(g(funcad, fnp)(x), g(jax, jnp)(x))
    # what JAX refuses: an explicit 0 (its message), and a real transform's empty axis
    with pytest.raises(ValueError, match="Shape should be positive"):
        fnp.fft.fft(np.ones(3), n=0)
    with pytest.raises(ValueError, match="real transform"):
        fnp.fft.rfft(np.zeros((2, 0)))


def test_size_zero_reductions_scans_and_determinants(mode):
    import jax.nn as jnn
    import funcad.nn as fnn
    e, e2 = np.zeros((0,), np.float32), np.zeros((0, 2), np.float32)
    for f, j in [(fnn.softmax, jnn.softmax), (fnn.log_softmax, jnn.log_softmax), (fss.logsumexp, jss.logsumexp),
                 (lambda v: fnp.max(v, initial=-np.inf), lambda v: jnp.max(v, initial=-jnp.inf)), (fnp.cumsum, jnp.cumsum),
                 (fnp.cumprod, jnp.cumprod)]:
        for x in (e, e2):
            _same_tree(f(x), j(x))
            _same_tree(funcad.jit(f)(x), j(x))
    for f, j in [(fnp.cumsum, jnp.cumsum), (fnp.cumprod, jnp.cumprod), (fnp.diagonal, jnp.diagonal)]:
        _same_tree(funcad.jit(lambda v: f(v, axis=0) if f is not fnp.diagonal else f(v))(e2),
                   (lambda v: j(v, axis=0) if j is not jnp.diagonal else j(v))(e2))
    for shape in [(0, 0), (2, 0, 0), (0, 2, 2)]:
        a = np.zeros(shape, np.float32)
        for f, j in [(fnp.linalg.det, jnp.linalg.det), (fnp.linalg.slogdet, jnp.linalg.slogdet),
                     (fnp.linalg.inv, jnp.linalg.inv), (funcad.lax.linalg.lu, jax.lax.linalg.lu)]:
            _same_tree(f(a), j(a))
            _same_tree(funcad.jit(f)(a), j(a))
        if shape[-1]:  # JAX's derivative of det of a 0 x 0 matrix raises an IndexError
            _same_tree(funcad.grad(lambda v: fnp.linalg.det(v).sum())(a),
                       jax.grad(lambda v: jnp.linalg.det(v).sum())(a))
    for m in (fnp, jnp):  # max/min themselves still need initial= for an empty axis
        with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
            m.max(e)
        with pytest.raises(ValueError, match="zero-size array to reduction operation min"):
            m.min(e2, axis=0)
    for f, j in [(fnp.var, jnp.var), (fnp.std, jnp.std)]:
        _same_tree(funcad.jvp(f, (e,), (e,)), jax.jvp(j, (e,), (e,)))
        _same_tree(funcad.grad(f)(e), jax.grad(j)(e))


def test_lu_factor_of_rectangular_matrices(mode):
    a = np.random.default_rng(0).normal(size=(2, 3, 4))
    for x in (a, a[0], a[0].T, np.zeros((0, 3))):
        _same_tree(funcad.scipy.linalg.lu_factor(x), jax.scipy.linalg.lu_factor(x))
        _same_tree(funcad.jit(funcad.scipy.linalg.lu_factor)(x), jax.scipy.linalg.lu_factor(x))


# ---------------------------------- bfloat16 (the edge fuzzer never drew it before) ----

def test_bfloat16_derivatives_through_loops_and_conds(mode):
    import ml_dtypes
    x = np.array([1.5, 0.5, -1.0], ml_dtypes.bfloat16)
    t = np.full(3, 0.5, ml_dtypes.bfloat16)
    loop = lambda m: lambda v: m.lax.fori_loop(0, 3, lambda i, c: c * 2 + v, v)  # noqa: E731
    _same_tree(funcad.jvp(loop(funcad), (x,), (t,)), jax.jvp(loop(jax), (x,), (t,)))
    g = lambda m, n: m.grad(lambda v: n.sum(loop(m)(v)))  # noqa: E731
    _same_tree(g(funcad, fnp)(x), g(jax, jnp)(x))
    _same_tree(funcad.jit(g(funcad, fnp))(x), g(jax, jnp)(x))
    h = lambda m, n: m.vmap(m.grad(lambda v: n.sum(m.lax.cond(n.sum(v) > 0, lambda u: u * 2, lambda u: u - 1, v))))  # noqa: E731
    _same_tree(funcad.jit(h(funcad, fnp))(x.reshape(3, 1)), h(jax, jnp)(x.reshape(3, 1)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_narrow_float_special_functions_keep_their_dtype(dtype, mode):
    import ml_dtypes
    import jax.nn as jnn
    import funcad.nn as fnn
    d = np.dtype(getattr(ml_dtypes, dtype, dtype))
    x = np.array([0.25, 0.5, 0.75], d)
    for name in ("erf", "erfc", "logit", "expit", "gammaln"):
        check(name, x, fmod=fss, jmod=jss, transforms=("eager", "jit", "vmap"))
    for name in ("frexp", "spacing"):
        check(name, x)
    for v in (x, x[0]):  # 0-d too: a NumPy scalar widened by ml_dtypes
        check("gelu", v, fmod=fnn, jmod=jnn)
    _same_tree(funcad.grad(lambda v: fss.logit(v).sum())(x), jax.grad(lambda v: jss.logit(v).sum())(x))
    _same_tree(funcad.grad(lambda v: fss.erf(v).sum())(x), jax.grad(lambda v: jss.erf(v).sum())(x))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "uint32"])
def test_cumulative_sums_of_small_integers_in_32_bit_mode(dtype):
    # JAX's dtypes with x64 off: integers keep theirs, bools give int32 (64-bit mode: NumPy's)
    x = np.array([[1, 0, 1], [1, 1, 0]], dtype)
    with jax.enable_x64(False), funcad.enable_x64(False):
        for name in ("cumsum", "cumprod"):
            check(name, x, transforms=("eager", "jit", "vmap"))
            check(name, x[:0], transforms=("eager", "jit"))
