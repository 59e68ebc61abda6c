"""funcad.scipy.spatial.transform (Rotation, Slerp) against JAX 0.12 (and SciPy): conversions,
Euler sequences (gimbal lock too), composition, mean, pytrees under jit/vmap/grad, errors."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation as SR

import funcad
import funcad.random as fr
from funcad.core.errors import FuncadTypeError, FuncadValueError
from funcad.scipy.spatial.transform import Rotation, Slerp

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
from jax.scipy.spatial.transform import Rotation as JR, Slerp as JS  # noqa: E402

RNG = np.random.default_rng(0)
Q = RNG.normal(size=(5, 4))
V = RNG.normal(size=(5, 3))


def same(a, b, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("q", [Q, Q[0]], ids=["stack", "single"])
def test_conversions_match_jax(q):
    f, j = Rotation.from_quat(q), JR.from_quat(q)
    same(f.quat, j.quat)
    same(f.as_quat(canonical=True, scalar_first=True), j.as_quat(canonical=True, scalar_first=True))
    same(f.as_matrix(), j.as_matrix())
    same(f.as_rotvec(degrees=True), j.as_rotvec(degrees=True))
    same(f.as_mrp(), j.as_mrp())
    same(f.magnitude(), j.magnitude())
    same(f.inv().quat, j.inv().quat)
    same((f * f.inv()).as_matrix(), (j * j.inv()).as_matrix())
    same(f.apply(V), j.apply(V))
    same(f.apply(V[0], inverse=True), j.apply(V[0], inverse=True))
    m, rv, mrp = (np.asarray(a) for a in (j.as_matrix(), j.as_rotvec(), j.as_mrp()))
    same(Rotation.from_matrix(m).quat, JR.from_matrix(m).quat)
    same(Rotation.from_rotvec(rv).quat, JR.from_rotvec(rv).quat)
    same(Rotation.from_rotvec(np.rad2deg(rv), degrees=True).quat, JR.from_rotvec(np.rad2deg(rv), degrees=True).quat)
    same(Rotation.from_mrp(mrp).quat, JR.from_mrp(mrp).quat)
    assert f.single == j.single


@pytest.mark.parametrize("seq", ["xyz", "ZYX", "zxz", "XYX", "yzx", "ZXY"])
def test_euler_matches_jax(seq):
    same(Rotation.from_quat(Q).as_euler(seq), JR.from_quat(Q).as_euler(seq))
    angles = RNG.normal(size=(4, 3))
    same(Rotation.from_euler(seq, angles).quat, JR.from_euler(seq, angles).quat)
    same(Rotation.from_euler(seq, angles[0] * 50, degrees=True).as_euler(seq, degrees=True),
         JR.from_euler(seq, angles[0] * 50, degrees=True).as_euler(seq, degrees=True))


def test_euler_short_sequences_and_gimbal_lock():
    same(Rotation.from_euler("z", 90, degrees=True).quat, JR.from_euler("z", 90, degrees=True).quat)
    same(Rotation.from_euler("ZX", np.array([0.3, 0.4])).quat, JR.from_euler("ZX", np.array([0.3, 0.4])).quat)
    same(Rotation.from_euler("y", np.array([[0.1], [0.2]])).quat, JR.from_euler("y", np.array([[0.1], [0.2]])).quat)
    for seq in ["xyz", "zxz", "XYZ", "ZXZ"]:
        for middle in ([np.pi / 2, 0.0, np.pi] if seq[0] != seq[2] else [0.0, np.pi]):
            q = np.asarray(JR.from_euler(seq, np.array([0.3, middle, 0.2])).quat)
            same(Rotation(q).as_euler(seq), JR(q).as_euler(seq), 1e-6)
    # SciPy agrees away from gimbal lock
    same(Rotation.from_quat(Q).as_euler("zyx"), SR.from_quat(Q).as_euler("zyx"))


def test_stacks_mean_identity_random():
    f, j = Rotation.from_quat(Q), JR.from_quat(Q)
    assert len(f) == 5 and f[1:3].quat.shape == (2, 4) and f[2].single
    same(Rotation.concatenate([f, f[:2]]).quat, JR.concatenate([j, j[:2]]).quat)
    w = np.arange(1.0, 6.0)
    same(f.mean(w).as_matrix(), j.mean(w).as_matrix())  # eigenvector signs may differ: compare matrices
    same(f.mean().as_matrix(), SR.from_quat(Q).mean().as_matrix())
    same(Rotation.identity().quat, JR.identity().quat)
    same(Rotation.identity(dtype=np.float32).quat, JR.identity(dtype=np.float32).quat)
    assert Rotation.identity(3).quat.shape == (3, 4)  # JAX 0.12 asserts num is None
    r = Rotation.random(fr.PRNGKey(0), 2000)  # JAX 0.12 raises NotImplementedError
    np.testing.assert_allclose(np.linalg.norm(r.quat, axis=-1), 1.0, atol=1e-12)
    assert np.abs(np.asarray(r.as_matrix()).mean(0)).max() < 0.05  # Haar: E[R] = 0
    assert Rotation.random(fr.PRNGKey(1)).single


def test_slerp_matches_jax():
    times = np.array([0.0, 1.0, 3.0, 4.0, 6.0])
    s, j = Slerp.init(times, Rotation.from_quat(Q)), JS.init(times, JR.from_quat(Q))
    t = np.array([0.0, 0.5, 1.0, 2.5, 4.0, 6.0])
    same(s(t).quat, j(t).quat)
    same(s(2.5).quat, j(2.5).quat)
    same(funcad.jit(lambda s, t: s(t).quat)(s, t), j(t).quat)
    same(funcad.vmap(lambda t: s(t).quat)(t), j(t).quat)
    same(funcad.grad(lambda t: s(t).as_rotvec().sum())(1.3), jax.grad(lambda t: j(t).as_rotvec().sum())(1.3))


def test_pytrees_under_jit_vmap_grad():
    r, j = Rotation.from_quat(Q), JR.from_quat(Q)
    assert str(funcad.tree_util.tree_structure(r)) == str(jax.tree_util.tree_structure(j))
    same(funcad.jit(lambda r: r.as_euler("xyz"))(r), j.as_euler("xyz"))
    out = funcad.jit(lambda q: Rotation.from_quat(q).inv())(Q)
    assert isinstance(out, Rotation)
    same(out.quat, j.inv().quat)
    same(funcad.vmap(lambda r: r.as_euler("zxz"))(r), j.as_euler("zxz"))
    g = funcad.grad(lambda r: (r * r).as_matrix().sum())(r)
    assert isinstance(g, Rotation)
    same(g.quat, jax.grad(lambda r: (r * r).as_matrix().sum())(j).quat)


def test_grads_match_jax():
    same(funcad.grad(lambda q: Rotation.from_quat(q).as_euler("zyx").sum())(Q),
         jax.grad(lambda q: JR.from_quat(q).as_euler("zyx").sum())(Q), 1e-12)
    a = Q[:, :3]
    same(funcad.grad(lambda a: Rotation.from_euler("XYZ", a).apply(V[0]).sum())(a),
         jax.grad(lambda a: JR.from_euler("XYZ", a).apply(V[0]).sum())(a), 1e-12)
    m = np.asarray(JR.from_quat(Q).as_matrix())
    same(funcad.grad(lambda m: Rotation.from_matrix(m).as_mrp().sum())(m),
         jax.grad(lambda m: JR.from_matrix(m).as_mrp().sum())(m), 1e-12)


def test_errors():
    with pytest.raises(FuncadValueError, match="non-empty string of upto 3"):
        Rotation.from_euler("xyzx", np.ones(4))
    with pytest.raises(FuncadValueError, match=r"\['x', 'y', 'z'\] or \['X', 'Y', 'Z'\]"):
        Rotation.from_euler("xYz", np.ones(3))
    with pytest.raises(FuncadValueError, match="consecutive axes to be different"):
        Rotation.from_euler("xxy", np.ones(3))
    with pytest.raises(FuncadValueError, match="last axis of size len"):
        Rotation.from_euler("z", np.ones(2))
    with pytest.raises(FuncadValueError, match="Expected 3 axes"):
        Rotation.from_quat(Q).as_euler("xy")
    with pytest.raises(FuncadTypeError, match="not subscriptable"):
        Rotation.from_quat(Q[0])[0]
    with pytest.raises(TypeError, match="no len"):
        len(Rotation.from_quat(Q[0]))
    with pytest.raises(FuncadValueError, match="weights"):
        Rotation.from_quat(Q).mean(np.ones(3))
    with pytest.raises(FuncadValueError, match="last axis of size 4"):
        Rotation.from_quat(np.ones(3))
    with pytest.raises(FuncadValueError, match=r"\(3, 3\)"):
        Rotation.from_matrix(np.eye(4))
    with pytest.raises(FuncadTypeError, match="must be a `Rotation`"):
        Slerp.init([0.0, 1.0], Q[:2])
    with pytest.raises(FuncadValueError, match="at least 2 rotations"):
        Slerp.init([0.0], Rotation.from_quat(Q[:1]))
    with pytest.raises(FuncadValueError, match="number of timestamps"):
        Slerp.init([0.0, 1.0], Rotation.from_quat(Q))
    with pytest.raises(FuncadValueError, match="at most 1-dimensional"):
        Slerp.init([0.0, 1.0], Rotation.from_quat(Q[:2]))(np.ones((2, 2)))
    with pytest.raises(TypeError):
        Rotation.from_quat(Q) * 2.0
