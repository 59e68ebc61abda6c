"""funcad.lax.pcast and pbroadcast against JAX: under vmap with an axis name, inside shard_map
(grad and jit on 4 simulated CPU devices, in a child process), and the errors."""
from __future__ import annotations

import os
import subprocess
import sys

import jax
import numpy as np
import pytest

import funcad
from funcad import lax
from funcad.core.errors import FuncadTypeError, FuncadValueError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_pbroadcast_and_pcast_under_named_vmap_against_jax():
    x = np.arange(4.0) ** 2
    ours = funcad.vmap(lambda v: lax.pbroadcast(v, "i", 2), axis_name="i")(x)
    theirs = jax.vmap(lambda v: jax.lax.pbroadcast(v, "i", 2), axis_name="i")(x)
    np.testing.assert_allclose(ours, theirs)

    # sum over the 4 entries of x[1]**2 (JAX's own grad of this fails under vmap: NumPy decides)
    g = funcad.grad(lambda x: funcad.vmap(lambda v: lax.pbroadcast(v, "i", 1) ** 2, axis_name="i")(x).sum())(x)
    np.testing.assert_allclose(g, [0.0, 8 * x[1], 0.0, 0.0])
    dyn = funcad.jit(lambda x: funcad.vmap(lambda v: lax.pbroadcast(v, "i", np.int32(3)),
                                           axis_name="i")(x))(x)
    np.testing.assert_allclose(dyn, np.full(4, 9.0))
    np.testing.assert_allclose(funcad.vmap(lambda v: lax.pcast(v, "i", to="varying"), axis_name="i")(x), x)


def test_pcast_and_pbroadcast_errors():
    f = funcad.vmap(lambda v: lax.pcast(v, "i", to="reduced"), axis_name="i")
    with pytest.raises(FuncadValueError, match="no reduced/unreduced"):
        f(np.ones(2))
    with pytest.raises(FuncadValueError, match="allowed values"):
        funcad.vmap(lambda v: lax.pcast(v, "i", to="sideways"), axis_name="i")(np.ones(2))
    with pytest.raises(FuncadTypeError, match="tuple or a str"):
        funcad.vmap(lambda v: lax.pcast(v, {"i"}, to="varying"), axis_name="i")(np.ones(2))
    with pytest.raises(FuncadValueError, match="out of range"):
        funcad.vmap(lambda v: lax.pbroadcast(v, "i", 5), axis_name="i")(np.ones(2))
    with pytest.raises(FuncadTypeError, match="integer scalar"):
        funcad.vmap(lambda v: lax.pbroadcast(v, "i", np.ones(2)), axis_name="i")(np.ones(2))


_SHARD_MAP_CHILD = """
import numpy as np, funcad
from funcad.sharding import PartitionSpec as P
x = np.arange(8.0) + 1
m = funcad.make_mesh((4,), ("x",))
# JAX lowers pbroadcast on GPUs only, and JAX 0.6 has no pcast: NumPy decides.
# Device 2 holds x[4:6].
body = lambda v: funcad.lax.pbroadcast(v * v, "x", 2)
sm = funcad.shard_map(body, mesh=m, in_specs=P("x"), out_specs=P("x"))
np.testing.assert_allclose(sm(x), np.tile(x[4:6] ** 2, 4))
np.testing.assert_allclose(funcad.jit(sm)(x), np.tile(x[4:6] ** 2, 4))
g = funcad.grad(lambda x: sm(x).sum())(x)
np.testing.assert_allclose(g, np.r_[0, 0, 0, 0, 8 * x[4:6], 0, 0])
# an invariant value made varying with pcast, then summed over the devices
summed = lambda v, w: funcad.lax.psum(funcad.lax.pcast(w, "x", to="varying") * v, "x")
out = funcad.jit(funcad.shard_map(summed, mesh=m, in_specs=(P("x"), P()), out_specs=P()))(x, np.float64(3.0))
np.testing.assert_allclose(out, 3 * x.reshape(4, 2).sum(0))
gw = funcad.grad(lambda w: funcad.shard_map(summed, mesh=m, in_specs=(P("x"), P()),
                                            out_specs=P())(x, w).sum())(np.float64(3.0))
np.testing.assert_allclose(gw, x.sum())
print("OK")
"""


def test_pbroadcast_and_pcast_inside_shard_map():
    env = dict(os.environ, FUNCAD_BACKEND="cpu", JAX_PLATFORMS="cpu",
               XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip())
    proc = subprocess.run([sys.executable, "-c", _SHARD_MAP_CHILD], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
