"""funcad.flatten_util, funcad.scipy.fft (DCT), ndimage, interpolate, cluster.vq and
sparse.linalg beyond the op table: keyword variants, dtypes, pytrees, errors, derivatives
against JAX's and values against SciPy's."""
import numpy as np
import pytest
import scipy.cluster.vq as svq
import scipy.fft as sfft
import scipy.interpolate as sint

import funcad
import funcad.numpy as fnp
import funcad.scipy.cluster.vq as fvq
import funcad.scipy.fft as ffft
import funcad.scipy.interpolate as fint
import funcad.scipy.ndimage as fndi
import funcad.scipy.sparse.linalg as fsl
from funcad.flatten_util import ravel_pytree

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.flatten_util  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.scipy.cluster.vq  # noqa: E402,F401
import jax.scipy.fft as jfft  # noqa: E402
import jax.scipy.interpolate  # noqa: E402,F401
import jax.scipy.ndimage as jndi  # noqa: E402
import jax.scipy.sparse.linalg as jsl  # noqa: E402


def close(a, b, rtol=1e-10, atol=1e-12):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol, equal_nan=True)


# ------------------------------------------------------------- ravel_pytree ----

def test_ravel_pytree_promotes_mixed_leaves_as_jax_and_unravel_restores_dtypes():
    trees = [{"a": np.ones(2, np.float32), "b": np.arange(3, dtype=np.int32)},      # f32 + i32 -> f32
             [np.ones(2, np.float32), np.float64(2.0)],                              # -> f64
             (np.arange(2, dtype=np.int8), np.arange(2, dtype=np.uint8)),            # -> i16
             [np.array([1 + 2j], np.complex64), np.ones(2, np.float64)],             # -> c128
             {"x": np.arange(6.0).reshape(2, 3), "y": (np.ones((2, 1)),)}]           # one dtype
    for tree in trees:
        flat, unravel = ravel_pytree(tree)
        jflat, junravel = jax.flatten_util.ravel_pytree(tree)
        assert flat.dtype == jflat.dtype and flat.shape == jflat.shape, tree
        close(flat, jflat)
        back, jback = unravel(flat), junravel(jflat)
        assert [np.asarray(v).dtype for v in jax.tree_util.tree_leaves(back)] == \
            [v.dtype for v in jax.tree_util.tree_leaves(jback)]
        close(back, jback)
    empty, unravel = ravel_pytree({"a": (), "b": None})
    assert empty.shape == (0,) and empty.dtype == np.float32 and unravel(empty) == {"a": (), "b": None}
    # one dtype: unravel keeps the dtype it is given, as JAX's
    assert unravel_dtype(np.ones(2), np.zeros(2, np.int32)) == np.int32


def unravel_dtype(leaf, vec):
    return np.asarray(ravel_pytree([leaf])[1](vec)[0]).dtype


def test_unravel_errors_on_a_wrong_dtype_or_length():
    _, unravel = ravel_pytree({"a": np.ones(2, np.float32), "b": np.arange(2, dtype=np.int32)})
    with pytest.raises(TypeError, match="unravel function given array of dtype float64, but expected dtype float32"):
        unravel(np.zeros(4))
    with pytest.raises(ValueError, match=r"expected an array of shape \(4,\), got shape \(3,\)"):
        unravel(np.zeros(3, np.float32))
    _, unravel = ravel_pytree([np.ones(2)])
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        unravel(np.zeros((1, 2)))


def test_ravel_pytree_under_transformations():
    params = {"w": np.arange(6.0).reshape(2, 3) / 7, "b": np.array([0.5, -1.0])}
    flat, unravel = ravel_pytree(params)
    jflat, junravel = jax.flatten_util.ravel_pytree(params)

    def loss(unr, m):
        return lambda v: m.sum(m.tanh(unr(v)["w"]) ** 2) + m.sum(unr(v)["b"] ** 3)
    close(funcad.grad(loss(unravel, fnp))(flat), jax.grad(loss(junravel, jnp))(jflat))
    close(funcad.jit(lambda p: ravel_pytree(p)[0])(params), jflat)
    close(funcad.grad(lambda p: fnp.sum(ravel_pytree(p)[0] ** 2))(params), jax.tree_util.tree_map(lambda x: 2 * x, params))
    batched = funcad.vmap(unravel)(np.stack([flat, 2 * flat]))
    assert batched["w"].shape == (2, 2, 3)
    close(batched["w"][1], 2 * params["w"])
    # unravel is hashable and equal for equal structures (usable as a static argument)
    _, again = ravel_pytree({"w": np.zeros((2, 3)), "b": np.zeros(2)})
    assert again == unravel and hash(again) == hash(unravel)
    assert ravel_pytree({"w": np.zeros((3, 2)), "b": np.zeros(2)})[1] != unravel


# ---------------------------------------------------------------------- DCT ----

@pytest.mark.parametrize("fn", ["dct", "idct"])
def test_dct_idct_match_scipy_and_jax(fn):
    rng = np.random.default_rng(0)
    for shape, axis, n, norm in [((5,), -1, None, None), ((4, 3), 0, 2, "ortho"), ((2, 3, 6), 1, 7, "backward"),
                                 ((2, 3, 6), 1, None, "ortho")]:
        x = rng.normal(size=shape)
        if True:
            if True:
                got = getattr(ffft, fn)(x, n=n, axis=axis, norm=norm)
                close(got, getattr(sfft, fn)(x, n=n, axis=axis, norm=norm))
                close(got, getattr(jfft, fn)(x, n=n, axis=axis, norm=norm))


@pytest.mark.parametrize("fn", ["dctn", "idctn"])
def test_dctn_idctn_match_scipy_and_jax(fn):
    x = np.random.default_rng(1).normal(size=(3, 4, 5))
    for s, axes, norm in [(None, None, None), ((3,), None, "ortho"), (None, (0, 2), None), ((2, 6), (2, 0), "ortho"),
                          ((2, 3, 4), None, None), (None, -1, "ortho"), (5, None, None)]:
        if True:
            got = getattr(ffft, fn)(x, s=s, axes=axes, norm=norm)
            close(got, getattr(sfft, fn)(x, s=s, axes=axes, norm=norm))
            close(got, getattr(jfft, fn)(x, s=s, axes=axes, norm=norm))


def test_dct_dtypes_complex_roundtrip_and_derivatives():
    rng = np.random.default_rng(2)
    x32 = rng.normal(size=(3, 4)).astype(np.float32)
    for fn in ("dct", "idct", "dctn", "idctn"):
        for x in (x32, np.arange(4), x32.astype(np.complex64) * (1 + 2j)):
            got, want = getattr(ffft, fn)(x), getattr(jfft, fn)(x)
            assert got.dtype == want.dtype, (fn, x.dtype)
            close(got, want, rtol=2e-5, atol=2e-5)
    x = rng.normal(size=(4, 5))
    close(ffft.idctn(ffft.dctn(x, norm="ortho"), norm="ortho"), x)
    f = lambda m, mod: lambda x: m.sum(mod.dctn(x, s=(3, 6), norm="ortho") ** 3) + m.sum(mod.idct(x, n=3, axis=0) ** 2)  # noqa: E731
    close(funcad.grad(f(fnp, ffft))(x), jax.grad(f(jnp, jfft))(x))
    close(funcad.jit(lambda x: ffft.idct(x, norm="ortho"))(x), jfft.idct(x, norm="ortho"))
    close(funcad.vmap(lambda r: ffft.dct(r, n=3))(x), jfft.dct(x, n=3))


def test_dct_errors():
    x = np.ones((2, 3))
    for fn in ("dct", "idct", "dctn", "idctn"):
        with pytest.raises(NotImplementedError, match="only DCT type 2"):
            getattr(ffft, fn)(x, type=3)
        with pytest.raises(ValueError, match="norm='forward' is not implemented"):
            getattr(ffft, fn)(x, norm="forward")
    with pytest.raises(ValueError, match=r"s must have at most x.ndim \(2\) elements, got 3"):
        ffft.dctn(x, s=(1, 2, 3))
    with pytest.raises(ValueError, match="out of bounds"):
        ffft.dct(x, axis=2)


# ----------------------------------------------------------- map_coordinates ----

def test_map_coordinates_every_order_and_mode_matches_jax():
    rng = np.random.default_rng(3)
    for shape in [(5,), (3, 4), (1, 3)]:
        x = rng.normal(size=shape)
        coords = [np.concatenate([[0.5, -0.5, 1.5, -2.5], rng.uniform(-3, s + 2, 6)]) for s in shape]
        for order in (0, 1):
            for mode in ("constant", "nearest", "wrap", "mirror", "reflect"):
                close(fndi.map_coordinates(x, coords, order, mode, cval=1.5),
                      jndi.map_coordinates(x, coords, order, mode, cval=1.5))


def test_map_coordinates_dtypes_derivatives_and_transforms():
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    c = [np.array([0.5, 1.4, 2.6]), np.array([1.5, 2.5, 0.2])]
    got = fndi.map_coordinates(xi, c, order=1)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, jndi.map_coordinates(xi, c, order=1))  # rounded half away from zero
    assert fndi.map_coordinates(xi.astype(np.float32), c, 1).dtype == np.float32
    img = np.arange(12.0).reshape(3, 4) ** 1.5
    f = lambda mod, m: lambda x, c: m.sum(mod.map_coordinates(x, c, 1, "mirror") ** 2)  # noqa: E731
    close(funcad.grad(f(fndi, fnp), (0, 1))(img, c), jax.grad(f(jndi, jnp), (0, 1))(img, c))
    close(funcad.jit(lambda x, c: fndi.map_coordinates(x, c, 1, "wrap"))(img, c),
          jndi.map_coordinates(img, c, 1, "wrap"))
    cs = np.stack([np.stack(c), np.stack(c)[::-1] * 0.5])
    close(funcad.vmap(lambda cc: fndi.map_coordinates(img, [cc[0], cc[1]], 1))(cs),
          jax.vmap(lambda cc: jndi.map_coordinates(img, [cc[0], cc[1]], 1))(cs))


def test_map_coordinates_errors():
    x, c = np.ones((2, 2)), [np.zeros(1), np.zeros(1)]
    with pytest.raises(ValueError, match="coordinates must be a sequence of length input.ndim, but 1 != 2"):
        fndi.map_coordinates(x, c[:1], 1)
    with pytest.raises(NotImplementedError, match="order 0 or 1"):
        fndi.map_coordinates(x, c, 3)
    with pytest.raises(NotImplementedError, match="does not support mode 'grid-wrap'"):
        fndi.map_coordinates(x, c, 1, mode="grid-wrap")


# ---------------------------------------------------- RegularGridInterpolator ----

_PTS = (np.array([0.0, 1.0, 2.5, 3.0]), np.array([-1.0, 0.0, 1.0]))


def test_regular_grid_interpolator_matches_scipy_and_jax():
    rng = np.random.default_rng(4)
    vals = rng.normal(size=(4, 3, 2))
    xi = np.stack([rng.uniform(-0.5, 3.5, 9), rng.uniform(-1.2, 1.2, 9)], -1)
    for method in ("linear", "nearest"):
        for fill in (np.nan, None, 0.5):
            got = fint.RegularGridInterpolator(_PTS, vals, method, fill_value=fill)(xi)
            want = jax.scipy.interpolate.RegularGridInterpolator(_PTS, vals, method, fill_value=fill)(xi)
            assert got.shape == want.shape == (9, 2)
            close(got, want)
            close(got, sint.RegularGridInterpolator(_PTS, vals, method, bounds_error=False, fill_value=fill)(xi))
    f = fint.RegularGridInterpolator(_PTS, vals[..., 0])
    jf = jax.scipy.interpolate.RegularGridInterpolator(_PTS, vals[..., 0])
    close(f((xi[:, 0], xi[:, 1])), jf((xi[:, 0], xi[:, 1])))           # a tuple of coordinate arrays
    close(f(xi.reshape(3, 3, 2), method="nearest"), jf(xi.reshape(3, 3, 2), method="nearest"))
    close(f(xi[0]), jf(xi[0]))                                           # one point as a 1-D array
    for v, x in [(vals.astype(np.float32), xi), (vals.astype(np.float32), xi.astype(np.float32)),
                 (np.arange(12).reshape(4, 3), xi)]:
        assert fint.RegularGridInterpolator(_PTS, v)(x).dtype == \
            jax.scipy.interpolate.RegularGridInterpolator(_PTS, v)(x).dtype


def test_regular_grid_interpolator_is_a_pytree_and_differentiates():
    rng = np.random.default_rng(5)
    vals, xi = rng.normal(size=(4, 3)), np.stack([rng.uniform(0.1, 2.9, 5), rng.uniform(-0.9, 0.9, 5)], -1)
    f = fint.RegularGridInterpolator(_PTS, vals)
    assert len(funcad.tree_util.tree_leaves(f)) == len(jax.tree_util.tree_leaves(
        jax.scipy.interpolate.RegularGridInterpolator(_PTS, vals))) == 4
    close(funcad.jit(lambda f, x: f(x))(f, xi), f(xi))
    doubled = funcad.tree_util.tree_map(lambda v: v * 2, f)
    assert isinstance(doubled, fint.RegularGridInterpolator) and doubled.method == "linear"
    close(doubled.values, 2 * vals)
    g = lambda mod, m: lambda v, x: m.sum(mod.RegularGridInterpolator(_PTS, v, fill_value=None)(x) ** 2)  # noqa: E731
    close(funcad.grad(g(fint, fnp), (0, 1))(vals, xi), jax.grad(g(jax.scipy.interpolate, jnp), (0, 1))(vals, xi))


def test_regular_grid_interpolator_errors():
    vals = np.ones((4, 3))
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        fint.RegularGridInterpolator(_PTS, vals, method="cubic")
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        fint.RegularGridInterpolator(_PTS, vals)(np.zeros((1, 2)), method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error=True is not supported"):
        fint.RegularGridInterpolator(_PTS, vals, bounds_error=True)
    with pytest.raises(ValueError, match="there are 2 point arrays, but values has 1 dimensions"):
        fint.RegularGridInterpolator(_PTS, np.ones(4))
    with pytest.raises(ValueError, match="fill_value must be either 'None' or of a type compatible with values"):
        fint.RegularGridInterpolator(_PTS, vals, fill_value=1j)
    with pytest.raises(ValueError, match="sample points xi have dimension 3"):
        fint.RegularGridInterpolator(_PTS, vals)(np.zeros((2, 3)))


# ------------------------------------------------------------------------ vq ----

def test_vq_matches_scipy_and_jax():
    rng = np.random.default_rng(6)
    obs, cb = rng.normal(size=(7, 3)), rng.normal(size=(4, 3))
    for o, c in [(obs, cb), (obs[:, 0], cb[:, 0]), (obs.astype(np.float32), cb.astype(np.float32))]:
        code, dist = fvq.vq(o, c)
        jcode, jdist = jax.scipy.cluster.vq.vq(o, c)
        scode, sdist = svq.vq(o, c)
        np.testing.assert_array_equal(code, jcode)
        np.testing.assert_array_equal(code, scode)
        assert code.dtype == jcode.dtype and dist.dtype == jdist.dtype
        close(dist, jdist, rtol=1e-6)
        close(dist, sdist, rtol=1e-6)
    close(funcad.vmap(lambda o: fvq.vq(o, cb)[1])(obs[None]), fvq.vq(obs, cb)[1][None])
    close(funcad.grad(lambda o: fnp.sum(fvq.vq(o, cb)[1]))(obs),
          jax.grad(lambda o: jnp.sum(jax.scipy.cluster.vq.vq(o, cb)[1]))(obs))
    with pytest.raises(ValueError, match="same rank"):
        fvq.vq(obs, cb[:, 0])
    with pytest.raises(ValueError, match="1-D or 2-D"):
        fvq.vq(obs[None], cb[None])


# ------------------------------------------------------------ sparse.linalg ----

def _system(n=5, seed=7):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, n))
    return q @ q.T / n + np.eye(n), rng.normal(size=(n, n)) / n + 2 * np.eye(n), rng.normal(size=n)


_SOLVERS = [("cg", {}), ("bicgstab", {}), ("gmres", {"solve_method": "batched"}),
            ("gmres", {"solve_method": "incremental", "restart": 2})]


@pytest.mark.parametrize("name,kw", _SOLVERS, ids=[f"{n}-{kw.get('solve_method', '')}" for n, kw in _SOLVERS])
def test_krylov_solvers_match_numpy_and_jax_values_and_grads(name, kw):
    spd, gen, b = _system()
    A = spd if name == "cg" else gen
    solve, jsolve = getattr(fsl, name), getattr(jsl, name)
    x, info = solve(A, b, tol=1e-12, **kw)
    xj, infoj = jsolve(A, b, tol=1e-12, **kw)
    close(x, np.linalg.solve(A, b), rtol=1e-9, atol=1e-10)
    close(x, xj, rtol=1e-9, atol=1e-10)
    assert (info is None) == (infoj is None) and (info is None or int(info) == int(infoj) == 0)
    # derivatives come from the transposed solve (custom_linear_solve), as JAX's
    f = lambda s, m: lambda a, b: m.sum(s(lambda v: a @ v, b, tol=1e-12, **kw)[0] ** 2)  # noqa: E731
    close(funcad.grad(f(solve, fnp), (0, 1))(A, b), jax.grad(f(jsolve, jnp), (0, 1))(A, b), rtol=1e-7, atol=1e-9)
    close(funcad.jit(lambda a, b: solve(a, b, tol=1e-12, **kw)[0])(A, b), xj, rtol=1e-9, atol=1e-10)


def test_krylov_solvers_take_pytrees_preconditioners_x0_and_vmap():
    spd, gen, b = _system(4)
    tree_b = {"u": b[:2], "v": (b[2:],)}

    for name, A in [("cg", spd), ("bicgstab", gen), ("gmres", gen)]:
        x, _ = getattr(fsl, name)(lambda t: _tree_mv(A, t), tree_b, tol=1e-12)
        want = np.linalg.solve(A, b)
        close(x["u"], want[:2], rtol=1e-9)
        close(x["v"][0], want[2:], rtol=1e-9)
        M = np.diag(1 / np.diag(A))
        x0 = np.ones(4)
        close(getattr(fsl, name)(A, b, x0=x0, M=M, tol=1e-12)[0], getattr(jsl, name)(A, b, x0=x0, M=M, tol=1e-12)[0],
              rtol=1e-9, atol=1e-10)
        bs = np.stack([b, -2 * b])
        close(funcad.vmap(lambda bb: getattr(fsl, name)(A, bb, tol=1e-12)[0])(bs), np.linalg.solve(A, bs.T).T,
              rtol=1e-9)
    # complex cg (Hermitian positive definite)
    h = spd + 1j * (np.triu(np.ones((4, 4)), 1) - np.tril(np.ones((4, 4)), -1)) * 0.1
    bc = b + 1j * b[::-1]
    close(fsl.cg(h, bc, tol=1e-12)[0], np.linalg.solve(h, bc), rtol=1e-9)
    # maxiter stops early, as JAX's
    close(fsl.cg(spd, b, maxiter=1)[0], jsl.cg(spd, b, maxiter=1)[0])


def _tree_mv(A, t):
    y = fnp.dot(A, fnp.concatenate([t["u"], t["v"][0]]))
    return {"u": y[:2], "v": (y[2:],)}


def test_krylov_solver_errors():
    spd, _, b = _system(3)
    with pytest.raises(ValueError, match="x0 and b must have matching tree structure"):
        fsl.cg(spd, b, x0=(b,))
    with pytest.raises(ValueError, match="arrays in x0 and b must have matching shapes"):
        fsl.bicgstab(spd, b, x0=np.zeros(2))
    with pytest.raises(ValueError, match="linear operator must be a square matrix, but has shape"):
        fsl.gmres(np.ones((3, 2)), b)
    with pytest.raises(ValueError, match="invalid solve_method 'qr', must be either 'incremental' or 'batched'"):
        fsl.gmres(spd, b, solve_method="qr")
    with pytest.raises(TypeError, match="must be either a function or ndarray"):
        fsl.cg("A", b)
    # info is -1 where the solution came out NaN, as JAX's
    x0 = np.array([np.nan, 0.0, 0.0])
    assert int(fsl.gmres(spd, b, x0=x0)[1]) == int(jsl.gmres(spd, b, x0=x0)[1]) == -1
